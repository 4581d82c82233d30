import Foundation

/// Runs the built `soundtrack` executable, as a user would (shared by the test targets that need it).
public enum CLI {
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    public static let executable: URL = {
        var candidates: [URL] = []
        if let argv0 = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: argv0).deletingLastPathComponent().appendingPathComponent("soundtrack"))
        }
        candidates.append(Bundle.main.bundleURL.appendingPathComponent("soundtrack"))
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("soundtrack"))
        candidates.append(root.appendingPathComponent(".build/debug/soundtrack"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates.last!
    }()

    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// Runs the CLI with arguments and optional standard input; waits for it off the cooperative
    /// pool (``offPool(_:)``), so that a long run does not hold up the tests beside it.
    @discardableResult
    public static func run(_ args: [String], stdin: String? = nil, cwd: URL? = nil) async throws -> Result {
        let running = try start(args, stdin: stdin, cwd: cwd)
        return await running.finished()
    }

    /// A started process whose standard output and error are pipes.
    public struct Running: Sendable {
        public var child: Child

        /// A started child whose standard output and error are pipes.
        public init(child: Child) {
            self.child = child
        }

        /// Reads the process's output to its end and waits for it to exit, off the cooperative pool.
        public func finished() async -> Result {
            await offPool { finish() }
        }

        /// Reads the process's output to its end (both streams at once) and waits for it to exit,
        /// blocking this thread.
        public func finish() -> Result {
            let (o, e) = child.readToEnd()
            child.waitUntilExit()
            return Result(status: child.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
        }

        /// Waits for the process to exit (its output unread), off the cooperative pool.
        public func exited() async {
            let child = child
            await offPool { child.waitUntilExit() }
        }
    }

    /// Starts the CLI with arguments, optional standard input (else /dev/null) and working
    /// directory (else the package root); the environment is the test process's without
    /// `SOUNDTRACK_DB`.
    public static func start(_ args: [String], stdin: String? = nil, cwd: URL? = nil) throws -> Running {
        try start(executable, args, stdin: stdin, cwd: cwd ?? root)
    }

    /// Starts `executable` (a copy of the CLI, or another program) as ``start(_:stdin:cwd:)`` does.
    public static func start(_ executable: URL, _ args: [String], stdin: String? = nil, cwd: URL) throws -> Running {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "SOUNDTRACK_DB")
        let child = try Child(
            executable, arguments: args, environment: env, currentDirectory: cwd, input: stdin.map { .bytes(Data($0.utf8)) } ?? .nullDevice)
        return Running(child: child)
    }

    /// A fresh scratch directory (``Scratch/directory(_:)``).
    public static func tempDir() -> URL { Scratch.directory("cli") }

    /// A small database: the 500-track catalog, one user.
    public static func smallDatabase(user: String = "u-1") async throws -> (dir: URL, db: String) {
        let dir = tempDir()
        let db = dir.appendingPathComponent("t.sqlite").path
        let catalog = root.appendingPathComponent("datasets/catalog-small.csv").path
        var r = try await run(["catalog", "import", catalog, "--db", db])
        precondition(r.status == 0, r.stderr)
        r = try await run(["users", "add", user, "--db", db, "--email", "Ana@Example.org", "--age", "24", "--region", "DE"])
        precondition(r.status == 0, r.stderr)
        return (dir, db)
    }
}
