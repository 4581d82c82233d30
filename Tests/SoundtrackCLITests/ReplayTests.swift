import Foundation
import GRDB
import SoundtrackApp
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackRules
import SoundtrackTestSupport
import Testing

@testable import SoundtrackStore

extension CrashTests {
    static func state(_ db: String, user: String) throws -> UserState {
        let service = SoundtrackService(
            store: try Store(path: db),
            engine: Recommender(
                config: try Models.bundled().config, catalog: IndexCatalog(.init(tracks: [])), priors: try Models.bundled().priors))
        return try service.state(user: user)
    }

    /// Everything a replay writes, as comparable text: bins (vectors, counts), memberships, weights,
    /// places, sessions, feedback rows and the catalog's size.
    static func dump(_ db: String) throws -> [String] {
        let queue = try DatabaseQueue(path: db)
        return try queue.read { db in
            var out: [String] = []
            for sql in [
                "SELECT user_id, number, label, hex(centroid), hex(spread), hex(observed), observations, prior, created_at, updated_at FROM bins ORDER BY user_id, number",
                "SELECT b.user_id, b.number, s.song_id, s.position, s.likes, s.dislikes FROM bin_songs s JOIN bins b ON b.id = s.bin_id ORDER BY 1, 2, 3",
                "SELECT user_id, hex(vector) FROM weights ORDER BY user_id",
                "SELECT user_id, id, lat, lon, count FROM places ORDER BY user_id, id",
                "SELECT * FROM sessions ORDER BY user_id",
                "SELECT id, user_id, at, track_id, signal, played_ms, pick_id, bin_number, switched_to, applied_seq FROM feedback ORDER BY id",
                "SELECT id, pick_counter, next_bin_number FROM users ORDER BY id",
                "SELECT count(*) FROM songs"
            ] {
                for row in try Row.fetchAll(db, sql: sql) { out.append(row.description) }
            }
            return out
        }
    }

    /// A log of `n` events over several users, each user's in time order.
    static func multiUserLog(_ n: Int, users: [String]) throws -> [String] {
        let csv = try String(contentsOf: CLI.root.appendingPathComponent("datasets/catalog-small.csv"), encoding: .utf8)
        let ids = csv.split(separator: "\n").dropFirst().map { String($0.prefix { $0 != "," }) }
        let signals = ["like", "skip", "complete", "dislike", "dislike", "like", "dislike"]
        return (0..<n).map { i in
            let user = users[(i * 5 + i / 4) % users.count]
            let snap = Logs.snapshot(user: user, minute: i * 3, context: (i / 6) % 7)
            let at = try! JSONParser.parse(snap)["at"]!.serialized()
            return
                #"{"id":"ev-\#(i)","user":"\#(user)","at":\#(at),"track":"\#(ids[(i * 37) % ids.count])","signal":"\#(signals[i % signals.count])","played_ms":\#(20000 + i),"snapshot":\#(snap)}"#
        }
    }
}

@Suite("Replay", .serialized)
struct ReplayTests {
    let users = ["u-1", "u-2", "u-3"]

    @Test("The summary counts applied, duplicate and rejected events; rejections name line and field")
    func summary() async throws {
        let (dir, db) = try await Logs.database(users: users)
        var lines = try CrashTests.multiUserLog(12, users: users)
        lines.append(lines[3])  // the same event again: a duplicate
        lines.append(
            #"{"id":"ev-u","user":"stranger","at":"2026-03-10T07:00:00+01:00","track":"spotify:track:3e9HZxeyfWwjeyPAMmWSSQ","signal":"like","snapshot":{"user":"stranger","at":"2026-03-10T07:00:00+01:00"}}"#
        )
        lines.append(
            #"{"id":"ev-t","user":"u-1","at":"2026-03-10T07:00:00+01:00","track":"spotify:track:nope","signal":"like","snapshot":{"user":"u-1","at":"2026-03-10T07:00:00+01:00"}}"#)
        lines.append(#"{"id":"ev-s","user":"u-1","at":"2026-03-10T07:00:00+01:00","track":"x","signal":"meh"}"#)
        let log = dir.appendingPathComponent("log.jsonl")
        try Logs.write(lines, log)
        let errors = dir.appendingPathComponent("errors.jsonl")
        let r = try await CLI.run(["replay", "--db", db, log.path, "--errors", errors.path])
        #expect(r.status == 2)
        #expect(r.stderr.contains("replay: 16 records: 12 applied, 1 duplicates skipped, 3 rejected (lines 14, 15, 16)"), "\(r.stderr)")
        let report = Logs.jsonLines(try String(contentsOf: errors, encoding: .utf8))
        #expect(report.map { $0["line"] } == [.number(14), .number(15), .number(16)])
        #expect(report.map { $0["field"] } == [.string("user"), .string("track"), .string("signal")])
        #expect(try Store(path: db).feedbackCount() == 12)
    }

    @Test("Replaying twice changes nothing the second time")
    func twice() async throws {
        let (dir, db) = try await Logs.database(users: users)
        let log = dir.appendingPathComponent("log.jsonl")
        try Logs.write(try CrashTests.multiUserLog(50, users: users), log)
        let first = try await CLI.run(["replay", "--db", db, log.path])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("50 records: 50 applied, 0 duplicates skipped, 0 rejected"), "\(first.stderr)")
        let once = try CrashTests.dump(db)
        let again = try await CLI.run(["replay", "--db", db, log.path])
        #expect(again.status == 0)
        #expect(again.stderr.contains("50 records: 0 applied, 50 duplicates skipped, 0 rejected"), "\(again.stderr)")
        #expect(try CrashTests.dump(db) == once)
    }

    @Test("A line with an unknown track, early in its user's events, is rejected for its track on every run")
    func sameReasonOnEveryRun() async throws {
        let (dir, db) = try await Logs.database(users: users)
        var lines = try CrashTests.multiUserLog(30, users: ["u-1"])
        lines[12] = lines[12].replacing(#/"track":"[^"]*"/#, with: #""track":"spotify:track:nope""#)
        let log = dir.appendingPathComponent("log.jsonl")
        try Logs.write(lines, log)
        for run in 1...2 {
            let errors = dir.appendingPathComponent("errors-\(run).jsonl")
            let r = try await CLI.run(["replay", "--db", db, log.path, "--errors", errors.path])
            #expect(r.status == 2, "run \(run): \(r.stderr)")
            let report = Logs.jsonLines(try String(contentsOf: errors, encoding: .utf8))
            #expect(report.map { $0["line"] } == [.number(13)], "run \(run)")
            #expect(report.map { $0["field"] } == [.string("track")], "run \(run): \(r.stderr)")
        }
    }

    @Test("Replay gives the state of `feedback` applying the same events one by one")
    func sameAsFeedback() async throws {
        let (dir, db) = try await Logs.database(users: users)
        let other = dir.appendingPathComponent("other.sqlite").path
        try FileManager.default.copyItem(atPath: db, toPath: other)
        let log = dir.appendingPathComponent("log.jsonl")
        try Logs.write(try CrashTests.multiUserLog(40, users: users), log)
        #expect(try await CLI.run(["replay", "--db", db, "--block-bytes", "2000", log.path]).status == 0)
        #expect(try await CLI.run(["feedback", "--quiet", "--db", other, log.path]).status == 0)
        #expect(try CrashTests.dump(db) == CrashTests.dump(other))
    }

    @Test("An event out of time order for its user is rejected, naming the line")
    func outOfOrder() async throws {
        let (dir, db) = try await Logs.database(users: users)
        var lines = try CrashTests.multiUserLog(6, users: ["u-1"])
        lines.swapAt(3, 4)
        let log = dir.appendingPathComponent("log.jsonl")
        try Logs.write(lines, log)
        let r = try await CLI.run(["replay", "--db", db, log.path])
        #expect(r.status == 2)
        // The previous event's time is named: line 4's (the lines were swapped).
        let previous = try FeedbackEvent.decode(Data(lines[3].utf8)).at
        #expect(r.stderr.contains("error: line 5: at: expected a time not before the user's previous event (\(previous.rfc3339))"), "\(r.stderr)")
        #expect(r.stderr.contains("5 applied, 0 duplicates skipped, 1 rejected"), "\(r.stderr)")
    }

    @Test("Unknown users are rejected per line, or created with --create-users")
    func unknownUsers() async throws {
        let (dir, db) = try await Logs.database(users: ["u-1"])
        let log = dir.appendingPathComponent("log.jsonl")
        try Logs.write(try CrashTests.multiUserLog(9, users: ["u-1", "new-a", "new-b"]), log)
        let r = try await CLI.run(["replay", "--db", db, log.path])
        #expect(r.status == 2)
        #expect(r.stderr.contains("user: expected a known user"), "\(r.stderr)")
        #expect(r.stderr.contains("9 records: 5 applied, 0 duplicates skipped, 4 rejected"), "\(r.stderr)")
        let c = try await CLI.run(["replay", "--db", db, "--create-users", log.path])
        #expect(c.status == 0, "\(c.stderr)")
        #expect(c.stderr.contains("9 records: 4 applied, 5 duplicates skipped, 0 rejected, 2 users created"), "\(c.stderr)")
        #expect(try Store(path: db).userExists("new-b"))
    }

    @Test("A replay killed with SIGKILL and run again reaches exactly the state of one clean run")
    func killMidReplay() async throws {
        let n = 10000
        let (dir, db) = try await Logs.database(users: users)
        let log = dir.appendingPathComponent("log.jsonl")
        try Logs.write(try CrashTests.multiUserLog(n, users: users), log)
        let clean = dir.appendingPathComponent("clean.sqlite").path
        try FileManager.default.copyItem(atPath: db, toPath: clean)
        let ref = try await CLI.run(["replay", "--db", clean, "--block-bytes", "8000", log.path])
        #expect(ref.status == 0, "\(ref.stderr)")

        let running = try CLI.start(["replay", "--db", db, "--block-bytes", "8000", log.path])
        let deadline = Date().addingTimeInterval(120)
        while ((try? Self.count(db)) ?? 0) < 300 && Date() < deadline { try await Task.sleep(for: .milliseconds(2)) }
        kill(running.child.processIdentifier, SIGKILL)
        await offPool { [running] in running.child.waitUntilExit() }
        #expect(running.child.terminationReason == .uncaughtSignal)
        #expect(try Store(path: db).check() == [])
        let applied = try Self.count(db)
        #expect(applied >= 300 && applied < n, "killed after \(applied) of \(n) events")

        let resumed = try await CLI.run(["replay", "--db", db, "--block-bytes", "8000", log.path])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("\(n) records: \(n - applied) applied, \(applied) duplicates skipped, 0 rejected"), "\(resumed.stderr)")
        let a = try CrashTests.dump(db), b = try CrashTests.dump(clean)
        #expect(a.count == b.count)
        #expect(a == b)
    }

    @Test(
        "A replay over users written whole (the benchmarks' population: bins at the cap, merges, new bins), killed with SIGKILL and run again, reaches the state of one clean run")
    func killMidReplayOfAWrittenPopulation() async throws {
        let (dir, db) = try await CLI.smallDatabase()
        let users = 12, n = 6000
        do {
            let store = try Store(path: db)
            let models = try Models.bundled()
            let engine = Recommender(
                config: models.config, catalog: IndexCatalog(CatalogIndex(tracks: try store.allTracks())), priors: models.priors, seed: 42,
                ranker: models.ranker)
            try BenchPopulation.build(store: store, engine: engine, users: users, bins: 32, seed: 42, at: Date(timeIntervalSince1970: 0))
            let tracks = Array(try store.allTracks().prefix(300).map(\.id))
            try Data(BenchPopulation.events(count: n, users: users, bins: 32, tracks: tracks, seed: 42))
                .write(to: dir.appendingPathComponent("log.jsonl"))
        }
        let log = dir.appendingPathComponent("log.jsonl").path
        let clean = dir.appendingPathComponent("clean.sqlite").path
        try FileManager.default.copyItem(atPath: db, toPath: clean)
        let ref = try await CLI.run(["replay", "--db", clean, "--block-bytes", "40000", log])
        #expect(ref.status == 0, "\(ref.stderr)")
        #expect(ref.stderr.contains("\(n) records: \(n) applied"), "\(ref.stderr)")

        let running = try CLI.start(["replay", "--db", db, "--block-bytes", "40000", log])
        let deadline = Date().addingTimeInterval(120)
        while ((try? Self.count(db)) ?? 0) < 500 && Date() < deadline { try await Task.sleep(for: .milliseconds(2)) }
        kill(running.child.processIdentifier, SIGKILL)
        await offPool { [running] in running.child.waitUntilExit() }
        let applied = try Self.count(db)
        #expect(applied >= 500 && applied < n, "killed after \(applied) of \(n) events")

        let resumed = try await CLI.run(["replay", "--db", db, "--block-bytes", "40000", log])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let a = try CrashTests.dump(db), b = try CrashTests.dump(clean)
        #expect(a.count == b.count)
        #expect(a == b)
        // The users made bins of their own during the run, numbered after the ones they had.
        let numbers = try await DatabaseQueue(path: db).read { try Int.fetchOne($0, sql: "SELECT max(number) FROM bins") ?? 0 }
        #expect(numbers > 32)
    }

    @Test("A second replay on the same database while the first runs is refused at once with a clear message, exit 1; the first completes")
    func twoReplays() async throws {
        let n = 600
        let (dir, db) = try await Logs.database(users: users)
        let lines = try CrashTests.multiUserLog(n, users: users)
        // The first replay reads standard input, kept open until the second has been refused: it
        // holds the lock for certain while the second starts.
        let first = try Child(
            CLI.executable, arguments: ["replay", "--db", db, "--block-bytes", "2000", "-"], currentDirectory: CLI.root, input: .pipe, output: .nullDevice)
        let input = first.standardInput!, err = first.standardError!
        input.write(Data((lines.prefix(300).joined(separator: "\n") + "\n").utf8))
        let deadline = Date().addingTimeInterval(120)
        while ((try? Self.count(db)) ?? 0) < 100 && Date() < deadline { try await Task.sleep(for: .milliseconds(2)) }
        let log = dir.appendingPathComponent("log.jsonl")
        try Logs.write(lines, log)
        let second = try await CLI.run(["replay", "--db", db, log.path])
        input.write(Data((lines.dropFirst(300).joined(separator: "\n") + "\n").utf8))
        try input.close()
        let firstErr = String(decoding: err.readDataToEndOfFile(), as: UTF8.self)
        await offPool { [first] in first.waitUntilExit() }
        #expect(first.terminationStatus == 0, "\(firstErr)")
        #expect(firstErr.contains("\(n) records: \(n) applied"), "\(firstErr)")
        #expect(second.status == 1, "\(second.stderr)")
        #expect(second.stderr.contains("another replay, batch or service is writing this database (\(db)): replay (process \(first.processIdentifier))"), "\(second.stderr)")
        #expect(!second.stderr.lowercased().contains("constraint"), "\(second.stderr)")
        // The lock went with the first process: a third run replays nothing new and exits 0.
        let third = try await CLI.run(["replay", "--db", db, log.path])
        #expect(third.status == 0, "\(third.stderr)")
        #expect(third.stderr.contains("0 applied, \(n) duplicates skipped"), "\(third.stderr)")
    }

    /// The committed feedback rows, read without migrating or writing (a read-only connection).
    static func count(_ db: String) throws -> Int {
        var config = Configuration()
        config.readonly = true
        let queue = try DatabaseQueue(path: db, configuration: config)
        return try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM feedback") ?? 0 }
    }
}
