import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An exclusive lock of one database file for a long writer (a replay, a learning batch): a
/// second one started on the same file is refused at once with
/// ``WriterLockError/held(database:holder:)`` instead of meeting the first one's transactions
/// halfway through its log.
///
/// The lock is an advisory `flock` on the file `DATABASE-writer.lock` beside the database; the
/// operating system releases it when the process ends, however it ends (kill -9 included), so a
/// stale lock file never blocks anybody. `serve` holds it for its run too (it writes its users'
/// states at its own checkpoints, and commands catch states up only where nobody holds it). Short
/// writers (`pick`, `feedback`) do not take it: SQLite already serialises their transactions.
public final class WriterLock: @unchecked Sendable {
    private var fd: Int32
    /// The lock file's path.
    public let path: String

    /// Takes the lock of the database at `databasePath` for `holder` (a word for messages:
    /// "replay", "batch"), or throws when another process holds it.
    /// - Throws: ``WriterLockError/held(database:holder:)`` when another writer holds it;
    ///   ``WriterLockError/unavailable(path:reason:)`` when the lock file cannot be opened.
    public init(databasePath: String, holder: String) throws {
        path = databasePath + "-writer.lock"
        let f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard f >= 0 else { throw WriterLockError.unavailable(path: path, reason: String(cString: strerror(errno))) }
        if flock(f, LOCK_EX | LOCK_NB) != 0 {
            let busy = errno == EWOULDBLOCK
            let reason = String(cString: strerror(errno))
            var other = ""
            if busy {
                var buffer = [UInt8](repeating: 0, count: 64)
                let n = pread(f, &buffer, buffer.count, 0)
                if n > 0 { other = String(decoding: buffer[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) }
            }
            close(f)
            if busy { throw WriterLockError.held(database: databasePath, holder: other.isEmpty ? "another writer" : other) }
            throw WriterLockError.unavailable(path: path, reason: reason)
        }
        fd = f
        // Who holds it, for the message of the one refused.
        let text = Array("\(holder) (process \(getpid()))\n".utf8)
        _ = ftruncate(f, 0)
        _ = pwrite(f, text, text.count, 0)
    }

    /// Releases the lock (also done when the process ends).
    public func release() {
        guard fd >= 0 else { return }
        flock(fd, LOCK_UN)
        close(fd)
        fd = -1
    }

    deinit { release() }
}

/// Why a ``WriterLock`` was not taken.
public enum WriterLockError: Error, CustomStringConvertible, Sendable, Equatable {
    /// Another process writes the database (its holder, as it wrote it: "replay (process 4242)").
    case held(database: String, holder: String)
    /// The lock file could not be opened or locked.
    case unavailable(path: String, reason: String)

    public var description: String {
        switch self {
        case let .held(database, holder):
            return "another replay, batch or service is writing this database (\(database)): \(holder); "
                + "wait for it to end, or stop it and run again (the run resumes where it stopped)"
        case let .unavailable(path, reason):
            return "cannot lock \(path): \(reason)"
        }
    }
}
