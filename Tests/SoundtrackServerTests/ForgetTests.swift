import Foundation
import SoundtrackContext
import SoundtrackTestSupport
import Testing

@testable import SoundtrackStore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A forget leaves nothing: no file of the database (main, `-wal`, `-shm`) holds the person's
/// strings once it is answered, on the HTTP path and the CLI path, and the person's keys stop
/// working before the answer, also when the same id is created again (issue 41, findings 3 and 4).
@Suite(.serialized) struct ForgetTests {
    /// Strings only this person's snapshots carry: a tag, a device name, a calendar title, the
    /// coordinates as sent.
    static let markers = ["zqtagmarker4711", "zqdevicemarker4711", "zqtitlemarker4711", "52.5186226333"]

    static func snapshot(user: String, at: String) -> String {
        """
        {"user": "\(user)", "at": "\(at)",
         "location": {"lat": 52.5186226333, "lon": 13.3932189667, "accuracy_m": 12, "speed_mps": 1.4},
         "calendar": {"events": [{"title": "\(markers[2])", "start": "2026-03-14T07:30:00+01:00", "end": "2026-03-14T09:00:00+01:00"}]},
         "bluetooth": {"devices": [{"name": "\(markers[1])", "kind": "headphones"}]},
         "tags": {"mood": "\(markers[0])"}}
        """
    }

    static func event(id: String, user: String, track: String) -> String {
        #"{"id": "\#(id)", "user": "\#(user)", "at": "2026-03-14T07:45:02+01:00", "track": "\#(track)", "signal": "like", "snapshot": "#
            + snapshot(user: user, at: "2026-03-14T07:45:00+01:00") + "}"
    }

    /// The markers found in the database's files (each file's name suffix with what it holds).
    static func markersOnDisk(_ db: String, markers: [String] = Self.markers) throws -> [String] {
        var found: [String] = []
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: db + suffix) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: db + suffix))
            for m in markers where bytes.range(of: Data(m.utf8)) != nil { found.append("\(suffix.isEmpty ? "db" : suffix): \(m)") }
        }
        return found
    }

    /// A database with the catalog, the user (keeping raw snapshots, so that their strings are
    /// stored at all) and a user key; returns the key.
    static func database(_ db: String, user: String) async throws -> String {
        var r = try await GracefulShutdownTests.cli(["catalog", "import", Repo.smallCatalog.path, "--db", db])
        #expect(r.status == 0, "\(r.err)")
        r = try await GracefulShutdownTests.cli(["users", "add", user, "--db", db])
        #expect(r.status == 0, "\(r.err)")
        try Store(path: db, durable: false).updateSettings(user: user) { $0.keepRawSnapshots = true }
        r = try await GracefulShutdownTests.cli(["keys", "create", "--user", user, "--db", db])
        return try #require(r.out.split(separator: "\n").first.map(String.init))
    }

    static func send(_ session: URLSession, port: Int, _ method: String, _ path: String, key: String, body: String? = nil) async throws -> Int {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(body.utf8)
        }
        let (_, response) = try await session.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    @Test(.timeLimit(.minutes(2))) func httpForgetLeavesNoFileHoldingThePersonAndKillsTheKeysFirst() async throws {
        let dir = Repo.tempDir()
        let db = dir.appendingPathComponent("f.sqlite").path
        let user = "caf\u{E9}-forget"
        let key = try await Self.database(db, user: user)
        let admin = try #require(try await GracefulShutdownTests.cli(["keys", "create", "--admin", "--db", db]).out.split(separator: "\n").first.map(String.init))
        let track = try #require(try Store(path: db, durable: false).allTracks().first?.id)
        let path = "/v1/users/" + (user.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? user)

        let (p, _, _, port) = try GracefulShutdownTests.startServe(["--db", db, "--port", "0", "--rate", "100000"])
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        let session = URLSession(configuration: .ephemeral)
        #expect(try await Self.send(session, port: port, "POST", "/v1/picks", key: key, body: Self.snapshot(user: user, at: "2026-03-14T07:42:10+01:00")) == 200)
        for i in 0..<3 {
            #expect(try await Self.send(session, port: port, "POST", "/v1/feedback", key: key, body: Self.event(id: "ev-\(i)", user: user, track: track)) == 200)
        }
        // The person's strings reach the files (the committer writes within milliseconds).
        var before: [String] = []
        for _ in 0..<100 where before.isEmpty {
            before = try Self.markersOnDisk(db)
            if before.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(!before.isEmpty)
        #expect(try await Self.send(session, port: port, "GET", path + "/bins", key: key) == 200)

        #expect(try await Self.send(session, port: port, "DELETE", path, key: admin) == 204)
        // The key died with its user, before the answer, also for a new user of the same id.
        #expect(try await Self.send(session, port: port, "GET", path + "/bins", key: key) == 401)
        #expect(try await Self.send(session, port: port, "POST", "/v1/users", key: admin, body: #"{"id": "\#(user)"}"#) == 201)
        #expect(try await Self.send(session, port: port, "POST", "/v1/picks", key: key, body: Self.snapshot(user: user, at: "2026-03-14T08:42:10+01:00")) == 401)
        #expect(try await Self.send(session, port: port, "GET", path + "/bins", key: key) == 401)
        // No file holds the person, while the service runs and after it stopped.
        #expect(try Self.markersOnDisk(db) == [])
        kill(p.processIdentifier, SIGTERM)
        await offPool { [p] in p.waitUntilExit() }
        #expect(p.terminationStatus == 0)
        #expect(try Self.markersOnDisk(db) == [])
        #expect(try Store(path: db, durable: false).rowCounts(user: user).values.reduce(0, +) == 2)  // the new user and settings
    }

    @Test func cliForgetLeavesNoFileHoldingThePerson() async throws {
        let dir = Repo.tempDir()
        let db = dir.appendingPathComponent("f.sqlite").path
        let user = "u-forget"
        _ = try await Self.database(db, user: user)
        let track = try #require(try Store(path: db, durable: false).allTracks().first?.id)
        let snapshot = dir.appendingPathComponent("s.json"), events = dir.appendingPathComponent("e.jsonl")
        try Data(Self.snapshot(user: user, at: "2026-03-14T07:42:10+01:00").utf8).write(to: snapshot)
        try Data(((0..<3).map { Self.event(id: "ev-\($0)", user: user, track: track).replacingOccurrences(of: "\n", with: " ") }.joined(separator: "\n") + "\n").utf8)
            .write(to: events)
        var r = try await GracefulShutdownTests.cli(["pick", snapshot.path, "--db", db])
        #expect(r.status == 0, "\(r.err)")
        r = try await GracefulShutdownTests.cli(["feedback", "--quiet", events.path, "--db", db])
        #expect(r.status == 0, "\(r.err)")
        #expect(!(try Self.markersOnDisk(db)).isEmpty)
        r = try await GracefulShutdownTests.cli(["users", "forget", user, "--db", db])
        #expect(r.status == 0, "\(r.err)")
        #expect(try Self.markersOnDisk(db) == [])
    }
}
