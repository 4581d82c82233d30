import Foundation
import SoundtrackContext
import SoundtrackTestSupport
import Testing

@testable import SoundtrackStore

/// Snapshots and databases shared by the batch, replay and import tests.
enum Logs {
    static let places = ["library", "gym", "home", "work", "cafe"]

    /// A snapshot of `user` at minute `minute` after 2026-03-09T07:00+01:00, in one of a few contexts.
    static func snapshot(user: String, minute: Int, context: Int) -> String {
        let at = Timestamp(date: Timestamp(rfc3339: "2026-03-09T07:00:00+01:00")!.date.addingTimeInterval(Double(minute) * 60), offsetSeconds: 3600).rfc3339
        let place = places[context % places.count]
        let gym = place == "gym"
        return
            #"{"user":"\#(user)","at":"\#(at)","location":{"place":"\#(place)","speed_mps":\#(gym ? 2.5 : 0)},"motion":{"activity":"\#(gym ? "running" : "stationary")","heart_rate_bpm":\#(gym ? 150 : 65)},"weather":{"temp_c":\#(context * 3 - 2),"condition":"\#(context % 2 == 0 ? "rain" : "clear")"}}"#
    }

    /// `n` snapshots over `users`, interleaved, each user's in time order.
    static func snapshots(_ n: Int, users: [String]) -> [String] {
        (0..<n).map { i in snapshot(user: users[(i * 7 + i / 3) % users.count], minute: i * 11, context: (i / 5) % 7) }
    }

    /// A database with the small catalog and the given users.
    static func database(users: [String]) async throws -> (dir: URL, db: String) {
        let (dir, db) = try await CLI.smallDatabase(user: users[0])
        for u in users.dropFirst() {
            let r = try await CLI.run(["users", "add", u, "--db", db])
            precondition(r.status == 0, r.stderr)
        }
        return (dir, db)
    }

    static func write(_ lines: [String], _ url: URL) throws {
        try (lines.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
    }

    static func jsonLines(_ s: String) -> [JSONValue] {
        s.split(separator: "\n").map { try! JSONParser.parse(String($0)) }
    }
}

@Suite("Batch")
struct BatchTests {
    let users = ["u-1", "u-2", "u-3", "u-4", "u-5"]

    @Test("Output is in input order with 2 workers and small blocks, and equals one-at-a-time `pick`")
    func orderAndConsistency() async throws {
        let (dir, db) = try await Logs.database(users: users)
        let single = dir.appendingPathComponent("single.sqlite").path
        try FileManager.default.copyItem(atPath: db, toPath: single)
        let lines = Logs.snapshots(40, users: users)
        let input = dir.appendingPathComponent("snaps.jsonl")
        try Logs.write(lines, input)
        let out = dir.appendingPathComponent("picks.jsonl")
        let r = try await CLI.run(["batch", "--db", db, "--workers", "2", "--block-bytes", "1500", input.path, "-o", out.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("batch: 40 records: 40 picks, 0 rejected; 5 users"), "\(r.stderr)")
        let picks = Logs.jsonLines(try String(contentsOf: out, encoding: .utf8))
        #expect(picks.count == 40)
        for (i, line) in lines.enumerated() {
            let snap = try JSONParser.parse(line)
            #expect(picks[i]["user"] == snap["user"] && picks[i]["at"] == snap["at"], "line \(i + 1) out of order")
        }
        // The same snapshots through `soundtrack pick`, one process each, in the same order.
        let batchText = try String(contentsOf: out, encoding: .utf8).split(separator: "\n").map(String.init)
        for (i, line) in lines.enumerated() {
            let p = try await CLI.run(["pick", "--db", single, "-"], stdin: line)
            #expect(p.status == 0, "\(p.stderr)")
            #expect(p.stdout.trimmingCharacters(in: .newlines) == batchText[i], "line \(i + 1) differs from `pick`")
        }
        // The learned states are the same too.
        for u in users {
            let a = try CrashTests.state(db, user: u), b = try CrashTests.state(single, user: u)
            #expect(a.bins == b.bins)
            #expect(a.session == b.session)
            #expect(a.pickCounter == b.pickCounter && a.pickCounter > 0)
            #expect(a.recentTracks == b.recentTracks)
        }
    }

    @Test("Bad lines go to the error report with line and field; the others are picked; exit 2")
    func badLines() async throws {
        let (dir, db) = try await Logs.database(users: users)
        var lines = Logs.snapshots(10, users: users)
        lines[2] = #"{"user":"u-1","at":"2026-03-09T07:00:00+01:00","weather":{"temp_c":"warm"}}"#  // wrong type
        lines[5] = #"{"user":"u-1","at":"#  // malformed
        lines[7] = Logs.snapshot(user: "nobody", minute: 3, context: 1)  // unknown user
        let input = dir.appendingPathComponent("snaps.jsonl")
        try Logs.write(lines, input)
        let errors = dir.appendingPathComponent("errors.jsonl")
        let r = try await CLI.run(["batch", "--db", db, input.path, "--errors", errors.path])
        #expect(r.status == 2)
        let picks = Logs.jsonLines(r.stdout)
        #expect(picks.count == 7)
        #expect(picks.map { $0["at"] } == lines.enumerated().filter { ![2, 5, 7].contains($0.offset) }.map { try! JSONParser.parse($0.element)["at"] })
        let report = Logs.jsonLines(try String(contentsOf: errors, encoding: .utf8))
        #expect(report.map { $0["line"] } == [.number(3), .number(6), .number(8)])
        #expect(report.map { $0["field"] } == [.string("weather.temp_c"), .string(""), .string("user")])
        if case let .string(m)? = report[2]["message"] { #expect(m.contains("'nobody'")) } else { Issue.record("no message") }
        #expect(r.stderr.contains("10 records: 7 picks, 3 rejected (lines 3, 6, 8)"), "\(r.stderr)")
    }

    @Test("A directory as input: an error naming it, exit 2, for batch and replay")
    func directoryInput() async throws {
        let (dir, db) = try await Logs.database(users: users)
        for command in ["batch", "replay"] {
            let r = try await CLI.run([command, "--db", db, dir.path])
            #expect(r.status == 2, "\(command): \(r.stderr)")
            #expect(r.stderr.contains("'\(dir.path)' (a directory)"), "\(command): \(r.stderr)")
        }
    }

    @Test("--fail-fast stops at the first bad line and keeps the picks before it")
    func failFast() async throws {
        let (dir, db) = try await Logs.database(users: users)
        var lines = Logs.snapshots(10, users: users)
        lines[4] = #"{"user":"u-2","at":"2026-03-09T07:00:00+01:00","location":{"lat":300}}"#
        lines[8] = "garbage"
        let input = dir.appendingPathComponent("snaps.jsonl")
        try Logs.write(lines, input)
        let r = try await CLI.run(["batch", "--db", db, "--fail-fast", input.path])
        #expect(r.status == 2)
        #expect(Logs.jsonLines(r.stdout).count == 4)
        #expect(r.stderr.contains("line 5: location.lat"), "\(r.stderr)")
        #expect(!r.stderr.contains("line 9"), "\(r.stderr)")
        #expect(r.stderr.contains("stopped at line 5"), "\(r.stderr)")
        let picked = try Store(path: db).users().reduce(0) { $0 + $1.picks }
        #expect(picked == 0)  // picks are not recorded by default…
        let counters = try users.map { try CrashTests.state(db, user: $0).pickCounter }.reduce(0, +)
        #expect(counters == 4)  // …but the four picks before the bad line were learned
    }

    @Test("--fail-fast in a later block, with the reader blocks ahead: earlier blocks are written and learned, nothing after")
    func failFastAcrossBlocks() async throws {
        let (dir, db) = try await Logs.database(users: users)
        var lines = Logs.snapshots(60, users: users)
        lines[37] = "not json"
        let input = dir.appendingPathComponent("snaps.jsonl")
        try Logs.write(lines, input)
        let r = try await CLI.run(["batch", "--db", db, "--fail-fast", "--workers", "2", "--block-bytes", "1200", input.path])
        #expect(r.status == 2)
        let picks = Logs.jsonLines(r.stdout)
        #expect(picks.count == 37)
        #expect(picks.map { $0["at"] } == lines.prefix(37).map { try! JSONParser.parse($0)["at"] })
        #expect(r.stderr.contains("stopped at line 38"), "\(r.stderr)")
        let counters = try users.map { try CrashTests.state(db, user: $0).pickCounter }.reduce(0, +)
        #expect(counters == 37)
    }

    @Test("--fail-fast on a pipe whose writer is still running stops at the bad line without waiting for more input")
    func failFastOnLivePipe() async throws {
        let (_, db) = try await Logs.database(users: users)
        var lines = Logs.snapshots(12, users: users)
        lines[5] = "not json"
        let p = try Child(CLI.executable, arguments: ["batch", "--db", db, "--fail-fast", "--workers", "2", "--block-bytes", "600", "-"], input: .pipe)
        let inp = p.standardInput!
        // The lines, then nothing more: the pipe stays open, as a producer that is still running.
        inp.write(Data(lines.map { $0 + "\n" }.joined().utf8))
        let finished = await offPool { [p] in p.waitUntilExit(timeout: 30) }
        try inp.close()
        if !finished { kill(p.processIdentifier, SIGKILL) }
        await offPool { [p] in p.waitUntilExit() }
        #expect(finished, "batch waited for more input after the bad line")
        #expect(p.terminationStatus == 2)
        let stdout = String(decoding: p.standardOutput!.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: p.standardError!.readDataToEndOfFile(), as: UTF8.self)
        #expect(Logs.jsonLines(stdout).count == 5)
        #expect(stderr.contains("stopped at line 6"), "\(stderr)")
    }

    @Test("--read-only leaves the database unchanged")
    func readOnly() async throws {
        let (dir, db) = try await Logs.database(users: users)
        let input = dir.appendingPathComponent("snaps.jsonl")
        try Logs.write(Logs.snapshots(20, users: users), input)
        // Some state first, so that there is something to leave alone.
        #expect(try await CLI.run(["batch", "--db", db, input.path]).status == 0)
        let before = try users.map { try CrashTests.state(db, user: $0) }
        let counts = try users.map { try Store(path: db).rowCounts(user: $0) }
        let r = try await CLI.run(["batch", "--db", db, "--read-only", input.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Logs.jsonLines(r.stdout).count == 20)
        let after = try users.map { try CrashTests.state(db, user: $0) }
        for (a, b) in zip(before, after) {
            #expect(a.bins == b.bins)
            #expect(a.session == b.session)
            #expect(a.pickCounter == b.pickCounter)
            #expect(a.weights == b.weights)
        }
        #expect(try users.map { try Store(path: db).rowCounts(user: $0) } == counts)
    }

    @Test("--record-picks stores every pick, so feedback can name it")
    func recordPicks() async throws {
        let (dir, db) = try await Logs.database(users: users)
        let input = dir.appendingPathComponent("snaps.jsonl")
        try Logs.write(Logs.snapshots(12, users: users), input)
        let r = try await CLI.run(["batch", "--db", db, "--record-picks", "--block-bytes", "1000", input.path])
        #expect(r.status == 0, "\(r.stderr)")
        let picks = Logs.jsonLines(r.stdout)
        #expect(try Store(path: db).users().reduce(0) { $0 + $1.picks } == 12)
        guard case let .string(pickId)? = picks[0]["pick_id"], case let .string(user)? = picks[0]["user"],
            case let .string(track)? = picks[0]["track"]?["id"], case let .string(at)? = picks[0]["at"]
        else {
            Issue.record("pick without id")
            return
        }
        let fb = try await CLI.run(
            ["feedback", "--db", db, "-"], stdin: #"{"id":"ev-x","user":"\#(user)","at":"\#(at)","track":"\#(track)","signal":"like","pick_id":"\#(pickId)"}"#)
        #expect(fb.status == 0, "\(fb.stderr)")
    }
}
