import CTestSpawn
import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension Child {
    /// The descriptors made for one child: the parent's sides (pipe ends the test keeps) and the
    /// child's sides (dup2'ed to 0, 1 and 2 by the spawn, then closed here). All close-on-exec.
    struct Ends {
        private var parentSides: [Int32] = []
        private var childSides: [Int32] = []

        /// One stream's pair: the test's side (nil without a pipe) and the child's (-1: inherited).
        typealias Pair = (parent: Int32?, child: Int32)

        mutating func standardInput(_ input: Input) throws -> Pair {
            switch input {
            case .nullDevice: return (nil, try nullDevice())
            case .inherit: return (nil, -1)
            case .bytes, .pipe:
                let p = try pipe()
                return keep(parent: p.write, child: p.read)
            }
        }

        mutating func output(_ output: Output) throws -> Pair {
            switch output {
            case .nullDevice: return (nil, try nullDevice())
            case .inherit: return (nil, -1)
            case .pipe:
                let p = try pipe()
                return keep(parent: p.read, child: p.write)
            }
        }

        /// Closes the child's sides (after the spawn, which dup2'ed them, or after a failure).
        mutating func closeChildSides() {
            for fd in childSides { close(fd) }
            childSides = []
        }

        /// Closes the test's sides (after a failure).
        mutating func closeParentSides() {
            for fd in parentSides { close(fd) }
            parentSides = []
        }

        private mutating func keep(parent: Int32, child: Int32) -> Pair {
            parentSides.append(parent)
            childSides.append(child)
            return (parent, child)
        }

        private mutating func nullDevice() throws -> Int32 {
            let fd = open("/dev/null", O_RDWR | O_CLOEXEC)
            guard fd >= 0 else { throw SpawnError(errno: errno, executable: "/dev/null") }
            childSides.append(fd)
            return fd
        }

        private mutating func pipe() throws -> (read: Int32, write: Int32) {
            var fds: [Int32] = [-1, -1]
            guard soundtrack_test_pipe(&fds) == 0 else { throw SpawnError(errno: errno, executable: "pipe") }
            return (fds[0], fds[1])
        }
    }

    /// `posix_spawn` of `path` (see `soundtrack_test_spawn`): the child's id.
    static func spawn(_ path: String, arguments: [String], environment: [String: String], currentDirectory: String?, fds: [Int32]) throws -> pid_t {
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let rc = fds.withUnsafeBufferPointer { fds in
            if let currentDirectory {
                return soundtrack_test_spawn(&pid, path, argv, envp, currentDirectory, fds.baseAddress)
            }
            return soundtrack_test_spawn(&pid, path, argv, envp, nil, fds.baseAddress)
        }
        guard rc == 0 else { throw SpawnError(errno: rc, executable: path) }
        return pid
    }

    /// Writes `data` to `fd` from a thread of its own, then closes it: a child that writes much
    /// before it reads does not block the test. A child that ends before reading all of it makes the
    /// write fail (EPIPE), not the test process end: SIGPIPE is blocked on that thread, and a
    /// signal pending for a thread goes with it.
    static func feed(_ data: Data, to fd: Int32) {
        Thread {
            var pipeSignal = sigset_t()
            sigemptyset(&pipeSignal)
            sigaddset(&pipeSignal, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
            data.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                    if n > 0 {
                        offset += n
                    } else if n < 0 && errno != EINTR {
                        break
                    }
                }
            }
            close(fd)
        }.start()
    }
}
