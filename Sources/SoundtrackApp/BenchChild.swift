import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process of the benchmarks whose standard output or error the benchmark reads (the other
/// goes to /dev/null, as does its standard input), started with `posix_spawn` and reaped with
/// `waitpid`. Not Foundation's `Process`: on Linux (swift-corelibs-foundation before PR 5472) its
/// every `run()` scans /proc/self/fd with a read past readdir's buffer that can crash the caller.
///
/// ```swift
/// let child = try BenchChild(executable: exe, arguments: ["users", "list", "--json"], reading: .standardOutput)
/// let text = child.output.readDataToEndOfFile()
/// child.waitUntilExit()
/// ```
public final class BenchChild {
    /// Which of the child's streams is the pipe the benchmark reads.
    public enum Stream: Int32 {
        case standardOutput = 1
        case standardError = 2
    }

    /// The child's process id.
    public let processIdentifier: pid_t
    /// The reading end of the pipe of the stream asked for.
    public let output: FileHandle
    /// The raw wait status, once reaped.
    private var status: Int32?

    /// Starts `executable` with `arguments`, its `reading` stream a pipe.
    /// - Throws: ``ProcessBenchmark/ProcessFailure`` when the pipe cannot be made or the executable cannot run.
    public init(executable: URL, arguments: [String], reading stream: Stream) throws {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw ProcessBenchmark.ProcessFailure(status: errno, arguments: arguments) }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        // Neither end reaches another child the benchmark starts.
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, stream == .standardOutput ? 2 : 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, stream.rawValue)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable.path, &actions, nil, argv, environ)
        close(writeEnd)
        guard rc == 0 else {
            close(readEnd)
            throw ProcessBenchmark.ProcessFailure(status: rc, arguments: arguments)
        }
        processIdentifier = pid
        output = FileHandle(fileDescriptor: readEnd, closeOnDealloc: true)
    }

    /// Whether the child has not ended yet (reaps it if it has).
    public var isRunning: Bool {
        if status != nil { return false }
        var s: Int32 = 0
        var r: pid_t
        repeat { r = waitpid(processIdentifier, &s, WNOHANG) } while r < 0 && errno == EINTR
        if r == processIdentifier { status = s }
        return status == nil
    }

    /// Blocks until the child has ended; its raw wait status.
    @discardableResult
    public func waitUntilExit() -> Int32 {
        if let status { return status }
        var s: Int32 = 0
        while waitpid(processIdentifier, &s, 0) < 0 && errno == EINTR {}
        status = s
        return s
    }

    /// Sends `signal` unless the child has been reaped (its id may then be another process's).
    public func send(_ signal: Int32) {
        if status == nil { kill(processIdentifier, signal) }
    }
}
