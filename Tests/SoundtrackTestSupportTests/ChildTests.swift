import Foundation
import SoundtrackTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The tests' child processes (``Child``): what the CLI and service tests rely on.
@Suite(.timeLimit(.minutes(1))) struct ChildTests {
    static let sh = URL(fileURLWithPath: "/bin/sh")

    /// Runs `/bin/sh -c script` to its end: the child and its output.
    static func shell(_ script: String, environment: [String: String]? = nil, in directory: URL? = nil) throws -> (Child, out: String, err: String) {
        let child = try Child(sh, arguments: ["-c", script], environment: environment, currentDirectory: directory)
        let (out, err) = child.readToEnd()
        child.waitUntilExit()
        return (child, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    @Test("An exit status is the child's; the reason is an exit")
    func exitStatus() throws {
        let (child, out, err) = try Self.shell("echo out; echo err >&2; exit 3")
        #expect(child.terminationReason == .exit)
        #expect(child.terminationStatus == 3)
        #expect(!child.isRunning)
        #expect(out == "out\n" && err == "err\n")
    }

    @Test("A child ended by a signal: the reason is the signal, the status its number")
    func endedBySignal() throws {
        let (killed, _, _) = try Self.shell("kill -KILL $$")
        #expect(killed.terminationReason == .uncaughtSignal)
        #expect(killed.terminationStatus == SIGKILL)

        for (signal, send) in [(SIGTERM, { (c: Child) in c.terminate() }), (SIGINT, { (c: Child) in c.interrupt() })] {
            let child = try Child(URL(fileURLWithPath: "/bin/sleep"), arguments: ["30"])
            #expect(child.isRunning)
            send(child)
            child.waitUntilExit()
            #expect(!child.isRunning)
            #expect(child.terminationReason == .uncaughtSignal)
            #expect(child.terminationStatus == signal)
        }
    }

    @Test("Standard input round-trips through cat: bytes given at the start, and a pipe written by the test")
    func standardInput() throws {
        // More than a pipe holds: cat writes while the rest is still being fed.
        let bytes = Data((0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let cat = try Child(URL(fileURLWithPath: "/bin/cat"), input: .bytes(bytes))
        let (out, err) = cat.readToEnd()
        cat.waitUntilExit()
        #expect(cat.terminationStatus == 0)
        #expect(out == bytes && err.isEmpty)

        let piped = try Child(URL(fileURLWithPath: "/bin/cat"), input: .pipe)
        piped.standardInput!.write(Data("line 1\n".utf8))
        piped.standardInput!.write(Data("line 2\n".utf8))
        try piped.standardInput!.close()
        let (echoed, _) = piped.readToEnd()
        piped.waitUntilExit()
        #expect(String(decoding: echoed, as: UTF8.self) == "line 1\nline 2\n")

        let empty = try Child(URL(fileURLWithPath: "/bin/cat"))
        #expect(empty.readToEnd().stdout.isEmpty)
        empty.waitUntilExit()
        #expect(empty.terminationStatus == 0)
    }

    @Test("A descriptor the test process opened without close-on-exec does not reach the child")
    func noInheritedDescriptors() throws {
        var leaky: [Int32] = [-1, -1]
        try #require(pipe(&leaky) == 0)
        defer { for fd in leaky { close(fd) } }
        #expect(fcntl(leaky[0], F_GETFD) & FD_CLOEXEC == 0, "the pipe must be inheritable for this test to mean something")
        let (child, out, err) = try Self.shell("ls -l /proc/self/fd")
        #expect(child.terminationStatus == 0, "\(err)")
        // ls's descriptors: 0, 1 and 2 (/dev/null and the two pipes), and its own of the listed directory.
        let entries = out.split(separator: "\n").compactMap { line -> (fd: Int, target: String)? in
            let parts = line.components(separatedBy: " -> ")
            guard parts.count == 2, let fd = parts[0].split(separator: " ").last.flatMap({ Int($0) }) else { return nil }
            return (fd, parts[1])
        }
        #expect(Set(entries.map(\.fd).filter { $0 < 3 }) == [0, 1, 2], "\(out)")
        for entry in entries where entry.fd >= 3 {
            #expect(entry.target.hasSuffix("/fd"), "a descriptor ls did not open itself: \(entry)\n\(out)")
        }
        var target = [CChar](repeating: 0, count: 256)
        let n = readlink("/proc/self/fd/\(leaky[1])", &target, target.count - 1)
        try #require(n > 0)
        let leakyPipe = String(decoding: target[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #expect(leakyPipe.hasPrefix("pipe:[") && !out.contains(leakyPipe), "\(leakyPipe)\n\(out)")
    }

    @Test("Much written to standard error while standard output is read does not block either side")
    func largeStandardError() throws {
        let (child, out, err) = try Self.shell("head -c 2000000 /dev/zero | tr '\\0' e >&2; echo done; head -c 300000 /dev/zero | tr '\\0' o")
        #expect(child.terminationStatus == 0)
        #expect(out.hasPrefix("done\n") && out.utf8.count == 5 + 300_000)
        #expect(err.utf8.count == 2_000_000 && err.allSatisfy { $0 == "e" })
    }

    @Test("Environment and working directory are the ones given; the test process's without them")
    func environmentAndDirectory() throws {
        let dir = Scratch.directory("child")
        let (given, out, _) = try Self.shell("pwd -P; echo \"[$SOUNDTRACK_CHILD_TEST]\"; env | wc -l", environment: ["SOUNDTRACK_CHILD_TEST": "a b"], in: dir)
        #expect(given.terminationStatus == 0)
        let lines = out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.count == 3, "\(out)")
        #expect(lines.first == dir.resolvingSymlinksInPath().path, "\(out)")
        #expect(lines.dropFirst().first == "[a b]", "\(out)")
        // The shell adds a few of its own (PWD, SHLVL, _) to the one given.
        #expect((Int(lines.last ?? "") ?? 99) < 5, "\(out)")

        let (_, inherited, _) = try Self.shell("pwd -P; echo \"[$HOME]\"")
        let here = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).resolvingSymlinksInPath().path
        #expect(inherited == "\(here)\n[\(ProcessInfo.processInfo.environment["HOME"] ?? "")]\n")
    }

    @Test("An executable that cannot run is an error of the start, not a child")
    func cannotStart() {
        #expect(throws: Child.SpawnError.self) { try Child(URL(fileURLWithPath: "/nonexistent/soundtrack")) }
    }

    @Test("Waits from several threads, and polls of isRunning beside them, all see the one exit")
    func concurrentWaits() async throws {
        let child = try Child(URL(fileURLWithPath: "/bin/sleep"), arguments: ["0.3"])
        let statuses = await withTaskGroup(of: Int32.self) { group in
            for i in 0..<4 {
                group.addTask {
                    await offPool {
                        if i % 2 == 0 {
                            child.waitUntilExit()
                        } else {
                            while child.isRunning { usleep(1_000) }
                        }
                        return child.terminationStatus
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == [0, 0, 0, 0])
        #expect(child.terminationReason == .exit)
    }
}
