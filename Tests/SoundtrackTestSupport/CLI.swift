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

    /// Runs the CLI with arguments and optional standard input; waits for it.
    @discardableResult
    public static func run(_ args: [String], stdin: String? = nil, cwd: URL? = nil) throws -> Result {
        let p = try start(args, stdin: stdin, cwd: cwd)
        let out = p.out.fileHandleForReading.readDataToEndOfFile()
        let err = p.err.fileHandleForReading.readDataToEndOfFile()
        p.process.waitUntilExit()
        return Result(status: p.process.terminationStatus, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
    }

    public struct Running {
        public var process: Process
        public var out: Pipe
        public var err: Pipe
    }

    public static func start(_ args: [String], stdin: String? = nil, cwd: URL? = nil) throws -> Running {
        let p = Process()
        p.executableURL = executable
        p.arguments = args
        p.currentDirectoryURL = cwd ?? root
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "SOUNDTRACK_DB")
        p.environment = env
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        if let stdin {
            let inp = Pipe()
            p.standardInput = inp
            try p.run()
            inp.fileHandleForWriting.write(Data(stdin.utf8))
            try inp.fileHandleForWriting.close()
        } else {
            p.standardInput = FileHandle.nullDevice
            try p.run()
        }
        return Running(process: p, out: out, err: err)
    }

    /// A fresh scratch directory (``Scratch/directory(_:)``).
    public static func tempDir() -> URL { Scratch.directory("cli") }

    /// A small database: the 500-track catalog, one user.
    public static func smallDatabase(user: String = "u-1") throws -> (dir: URL, db: String) {
        let dir = tempDir()
        let db = dir.appendingPathComponent("t.sqlite").path
        let catalog = root.appendingPathComponent("datasets/catalog-small.csv").path
        var r = try run(["catalog", "import", catalog, "--db", db])
        precondition(r.status == 0, r.stderr)
        r = try run(["users", "add", user, "--db", db, "--email", "Ana@Example.org", "--age", "24", "--region", "DE"])
        precondition(r.status == 0, r.stderr)
        return (dir, db)
    }
}
