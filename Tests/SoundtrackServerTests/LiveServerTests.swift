import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import SoundtrackContext
import SoundtrackServer
@testable import SoundtrackStore

/// A live server on 127.0.0.1 (ephemeral port): auth over real HTTP and a concurrent feedback burst.
@Suite struct LiveServerTests {
    @Test func authAndErrorsOverLoopback() async throws {
        let f = try Fixture()
        let keys = f.keys, admin = f.admin
        try await f.api.buildApplication().test(.live) { client in
            #expect(try await client.send(.get, "/healthz").status == .ok)
            var r = try await client.send(.post, "/v1/picks", body: Doc.snapshot(user: "u-1"))
            #expect(r.errorCode == "unauthorized")
            r = try await client.send(.post, "/v1/picks", key: "stk_000000000000_" + String(repeating: "a", count: 48), body: Doc.snapshot(user: "u-1"))
            #expect(r.status == .unauthorized)
            r = try await client.send(.post, "/v1/picks", key: keys["u-2"], body: Doc.snapshot(user: "u-1"))
            #expect(r.errorCode == "forbidden")
            #expect(try await client.send(.post, "/v1/picks", key: keys["u-1"], body: Doc.snapshot(user: "u-1")).status == .ok)
            #expect(try await client.send(.post, "/v1/picks", key: admin, body: Doc.snapshot(user: "u-2")).status == .ok)
            r = try await client.send(.post, "/v1/picks", key: keys["u-1"], body: "{")
            #expect(r.errorCode == "bad_request")
            #expect(try await client.send(.delete, "/v1/users/u-2", key: admin).status == .noContent)
        }
    }

    @Test func concurrentFeedbackBurstCommitsExactlyTheAcknowledged() async throws {
        let users = (1...8).map { "u-\($0)" }
        let f = try Fixture(users: users) { $0.userRate = RateLimit(perSecond: 10_000, burst: 10_000) }
        let keys = f.keys
        let track = try f.track
        let store = f.service.store
        let acked = try await f.api.buildApplication().test(.live) { client in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for user in users {
                    group.addTask {
                        var n = 0
                        for i in 0..<40 {
                            let signal = ["like", "dislike", "skip", "complete"][i % 4]
                            let r = try await client.send(
                                .post, "/v1/feedback", key: keys[user],
                                body: Doc.event(id: "\(user)-ev-\(i)", user: user, track: track, signal: signal, snapshot: true))
                            if r.status == .ok, r.json["status"]?.stringValue == "applied" { n += 1 }
                        }
                        return n
                    }
                }
                return try await group.reduce(0, +)
            }
        }
        #expect(acked == 320)
        #expect(try store.feedbackCount() == acked)
        #expect(try store.check().isEmpty)
    }
}

/// `soundtrack serve` as a process: SIGTERM in the middle of a feedback burst loses no acknowledged event.
@Suite struct GracefulShutdownTests {
    static let executable: URL = {
        var candidates: [URL] = []
        if let argv0 = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: argv0).deletingLastPathComponent().appendingPathComponent("soundtrack"))
        }
        candidates.append(Bundle.main.bundleURL.appendingPathComponent("soundtrack"))
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("soundtrack"))
        candidates.append(Repo.root.appendingPathComponent(".build/debug/soundtrack"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates.last!
    }()

    static func cli(_ args: [String]) throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = executable
        p.arguments = args
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "SOUNDTRACK_DB")
        p.environment = env
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    @Test(.timeLimit(.minutes(2))) func sigtermDuringFeedbackBurst() async throws {
        let dir = Repo.tempDir()
        let db = dir.appendingPathComponent("s.sqlite").path
        var r = try Self.cli(["catalog", "import", Repo.smallCatalog.path, "--db", db])
        #expect(r.status == 0, "\(r.err)")
        let users = (1...6).map { "u-\($0)" }
        try Data((users.joined(separator: "\n") + "\n").utf8).write(to: dir.appendingPathComponent("users.txt"))
        r = try Self.cli(["keys", "create", "--users-file", dir.appendingPathComponent("users.txt").path, "--add-users", "--db", db])
        #expect(r.status == 0, "\(r.err)")
        var keys: [String: String] = [:]
        for line in r.out.split(separator: "\n") {
            let parts = line.split(separator: "\t")
            if parts.count == 2 { keys[String(parts[0])] = String(parts[1]) }
        }
        try #require(keys.count == users.count)
        let userKeys = keys
        let track = try Store(path: db, durable: false).allTracks()[3].id

        let p = Process()
        p.executableURL = Self.executable
        p.arguments = ["serve", "--db", db, "--port", "0", "--rate", "100000"]
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { p.terminate() } }
        // The start line names the address and the database.
        var started = ""
        while !started.contains("soundtrack serve: listening on http://127.0.0.1:") || !started.hasSuffix("\n") {
            let chunk = err.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            started += String(decoding: chunk, as: UTF8.self)
        }
        let line = try #require(started.split(separator: "\n").first { $0.contains("soundtrack serve: listening on") })
        #expect(line.contains(db))
        let portText = line.components(separatedBy: "http://127.0.0.1:").last.map { $0.prefix { $0.isNumber } } ?? ""
        let port = try #require(Int(portText))
        let base = "http://127.0.0.1:\(port)"

        let session = URLSession(configuration: .ephemeral)
        let ackedIds = Acknowledged()
        let pid = p.processIdentifier
        try await withThrowingTaskGroup(of: Void.self) { group in
            for user in users {
                group.addTask {
                    for i in 0..<100_000 {
                        let id = "\(user)-burst-\(i)"
                        var request = URLRequest(url: URL(string: base + "/v1/feedback")!)
                        request.httpMethod = "POST"
                        request.setValue("Bearer \(userKeys[user]!)", forHTTPHeaderField: "Authorization")
                        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                        request.httpBody = Data(Doc.event(id: id, user: user, track: track, signal: i % 3 == 0 ? "dislike" : "like", snapshot: true).utf8)
                        request.timeoutInterval = 10
                        guard let (data, response) = try? await session.data(for: request) else { return }
                        guard (response as? HTTPURLResponse)?.statusCode == 200 else { return }
                        let body = (try? JSONParser.parse(data)) ?? .null
                        if body["status"]?.stringValue == "applied" { ackedIds.add(id) }
                    }
                }
            }
            group.addTask {
                // Let the burst run, then SIGTERM in the middle of it.
                while ackedIds.count < 60 { try await Task.sleep(for: .milliseconds(10)) }
                kill(pid, SIGTERM)
            }
            try await group.waitForAll()
        }
        p.waitUntilExit()
        #expect(p.terminationReason == .exit)
        #expect(p.terminationStatus == 0)
        let acked = ackedIds.ids
        #expect(acked.count >= 60)
        let store = try Store(path: db, durable: false)
        let stored = Set(try await store.database.read { db in try String.fetchAll(db, sql: "SELECT id FROM feedback") })
        let lost = acked.filter { !stored.contains($0) }
        #expect(lost.isEmpty, "acknowledged but not stored: \(lost.prefix(5))")
        // Events committed but not acknowledged can only be the ones in flight when the connections closed.
        #expect(stored.count - acked.count <= users.count)
        #expect(try store.check().isEmpty)
    }
}

final class Acknowledged: Sendable {
    private let value = Mutex<[String]>([])
    func add(_ id: String) { value.withLock { $0.append(id) } }
    var ids: [String] { value.withLock { $0 } }
    var count: Int { value.withLock { $0.count } }
}
