import CTestSpawn
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process for the tests, started with `posix_spawn` and reaped with `waitpid`: the subset
/// of Foundation's `Process` the tests use, without `Process`, whose every `run()` on Linux
/// (swift-corelibs-foundation before PR 5472) scans /proc/self/fd with a read past readdir's
/// buffer that crashed the whole test process about one CI run in five.
///
/// swift-subprocess 1.0.2 was weighed and not taken: its process lives only inside one
/// `run { execution in … }` closure whose `Execution` must not escape, while these tests start a
/// service, hand it between helpers, poll `isRunning` from another thread and signal it by its id.
///
/// The child inherits no descriptor above 2 (the pipes are close-on-exec from the start and the
/// child closes every other one), gets every signal at its default action, and is reaped only when
/// asked (``isRunning``, ``waitUntilExit()``): no SIGCHLD handler, no run loop.
///
/// ```swift
/// let cat = try Child(URL(fileURLWithPath: "/bin/cat"), input: .bytes(Data("hi".utf8)))
/// let (out, _) = cat.readToEnd()
/// cat.waitUntilExit()  // then cat.terminationStatus == 0, out == Data("hi".utf8)
/// ```
public final class Child: @unchecked Sendable {
    /// What the child reads on its standard input.
    public enum Input: Sendable {
        /// /dev/null.
        case nullDevice
        /// These bytes, written from a thread of their own, then end of file.
        case bytes(Data)
        /// A pipe the test writes to through ``Child/standardInput`` (and closes).
        case pipe
        /// The test process's standard input.
        case inherit
    }

    /// Where the child's standard output or error goes.
    public enum Output: Sendable {
        /// A pipe the test reads through ``Child/standardOutput`` or ``Child/standardError``.
        case pipe
        /// /dev/null.
        case nullDevice
        /// The test process's own.
        case inherit
    }

    /// How the child ended.
    public enum TerminationReason: Sendable {
        case exit
        case uncaughtSignal
    }

    /// The child could not be started.
    public struct SpawnError: Error, CustomStringConvertible {
        public var errno: Int32
        public var executable: String
        public var description: String { "cannot start \(executable): \(String(cString: strerror(errno)))" }
    }

    /// The child's process id (valid for `kill` until it is reaped).
    public let processIdentifier: pid_t
    /// The writing end of the child's standard input, with ``Input/pipe``.
    public let standardInput: FileHandle?
    /// The reading end of the child's standard output, with ``Output/pipe``.
    public let standardOutput: FileHandle?
    /// The reading end of the child's standard error, with ``Output/pipe``.
    public let standardError: FileHandle?

    private let lock = NSLock()
    /// The raw wait status, once reaped (under `lock`).
    private var status: Int32?

    /// Starts `executable` with `arguments`.
    /// - Parameters:
    ///   - environment: the child's whole environment; the test process's when nil.
    ///   - currentDirectory: the child's working directory; the test process's when nil.
    /// - Throws: ``SpawnError`` when a pipe cannot be made or the executable cannot run.
    public init(
        _ executable: URL, arguments: [String] = [], environment: [String: String]? = nil, currentDirectory: URL? = nil,
        input: Input = .nullDevice, output: Output = .pipe, error: Output = .pipe
    ) throws {
        var ends = Ends()
        defer { ends.closeChildSides() }
        do {
            let stdin = try ends.standardInput(input)
            let stdout = try ends.output(output)
            let stderr = try ends.output(error)
            processIdentifier = try Child.spawn(
                executable.path, arguments: arguments, environment: environment ?? ProcessInfo.processInfo.environment,
                currentDirectory: currentDirectory?.path, fds: [stdin.child, stdout.child, stderr.child])
            standardOutput = stdout.parent.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
            standardError = stderr.parent.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
            if case .bytes(let data) = input, let fd = stdin.parent {
                standardInput = nil
                Child.feed(data, to: fd)
            } else {
                standardInput = stdin.parent.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
            }
        } catch {
            ends.closeParentSides()
            throw error
        }
    }

    deinit {
        // Reaps a child that has ended unasked (one that still runs is left to run).
        if status == nil {
            var s: Int32 = 0
            _ = waitpid(processIdentifier, &s, WNOHANG)
        }
    }

    /// Whether the child has not ended yet (reaps it if it has).
    public var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        return !reapIfEnded()
    }

    /// Blocks until the child has ended, and reaps it.
    public func waitUntilExit() {
        while true {
            lock.lock()
            let ended = reapIfEnded()
            lock.unlock()
            if ended { return }
            // Waits without reaping (WNOWAIT): reaping happens under the lock, so that `kill` by a
            // concurrent `send` never meets a reused process id.
            var info = siginfo_t()
            if waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT) != 0 && errno != EINTR {
                lock.lock()
                let reaped = status != nil
                lock.unlock()
                precondition(reaped, "child \(processIdentifier) was reaped by someone else (errno \(errno))")
            }
        }
    }

    /// Waits at most `seconds` for the child to end; whether it has.
    public func waitUntilExit(timeout seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning {
            if Date() >= deadline { return false }
            usleep(5_000)
        }
        return true
    }

    /// The exit status, or the number of the signal that ended the child (it must have ended).
    public var terminationStatus: Int32 {
        let s = endedStatus()
        // WIFEXITED, WEXITSTATUS and WTERMSIG, spelled out (the C macros are not imported).
        return s & 0x7f == 0 ? (s >> 8) & 0xff : s & 0x7f
    }

    /// Whether the child exited or was ended by a signal (it must have ended).
    public var terminationReason: TerminationReason {
        endedStatus() & 0x7f == 0 ? .exit : .uncaughtSignal
    }

    /// Sends SIGTERM (unless the child has been reaped).
    public func terminate() { send(SIGTERM) }

    /// Sends SIGINT (unless the child has been reaped).
    public func interrupt() { send(SIGINT) }

    /// Sends `signal` (unless the child has been reaped, when its id may be another process's).
    public func send(_ signal: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if status == nil { kill(processIdentifier, signal) }
    }

    /// Under `lock`: whether the child has ended, reaping it if it had not been.
    private func reapIfEnded() -> Bool {
        if status != nil { return true }
        var s: Int32 = 0
        var r: pid_t
        repeat { r = waitpid(processIdentifier, &s, WNOHANG) } while r < 0 && errno == EINTR
        if r == processIdentifier { status = s }
        precondition(r >= 0, "child \(processIdentifier) was reaped by someone else (errno \(errno))")
        return status != nil
    }

    private func endedStatus() -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        guard let status else { preconditionFailure("child \(processIdentifier) has not ended") }
        return status
    }
}
