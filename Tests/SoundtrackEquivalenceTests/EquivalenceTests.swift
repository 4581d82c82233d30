import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import SoundtrackContext
import SoundtrackEngine
import SoundtrackRules
import SoundtrackServer
import SoundtrackStore
import SoundtrackTestSupport
import Testing

/// The same feedback events through the three front-ends: `soundtrack feedback` (the built
/// executable), `POST /v1/feedback` (the Hummingbird application driven in process, one event a
/// request, with its per-user cache and group commit) and `soundtrack replay` (the built
/// executable, in small blocks and in one block). Each must give every event the same verdict and
/// leave the same database, row by row.
///
/// The log mixes, over three users and in this order: events answering picks and events with
/// snapshots; a duplicate later in the log and one right after its event; an id another user's
/// event holds; an event earlier than its user's previous one, and later an event with the same
/// time as the previous one; an event of an unknown user; an unknown track; a pick that does not
/// exist (with and without a snapshot); another user's pick; a pick whose bin is gone (with and
/// without a snapshot); a malformed event; an event reusing the id of a rejected one.
@Suite("Front-ends agree", .serialized)
struct EquivalenceTests {
    @Test("CLI feedback, POST /v1/feedback and replay give the same verdicts and the same database")
    func sameDatabase() async throws {
        let fixture = try await Base.make()
        let log = try EventLog.make(fixture)
        let file = fixture.dir.appendingPathComponent("log.jsonl")
        try (log.lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)

        // soundtrack feedback: each event its own transaction.
        let cliDB = try fixture.copy("cli")
        let cli = try await CLI.run(["feedback", "--db", cliDB, file.path])
        #expect(cli.status == 2, "\(cli.stderr)")
        let (cliVerdicts, cliRules) = try Verdicts.fromCLIWithRules(cli, lines: log.lines.count)

        // soundtrack replay, in blocks of a few events (repeats across blocks) and in one block
        // (repeats within a block).
        var replays: [(db: String, verdicts: [Verdict])] = []
        for (name, blockBytes) in [("replay-small", "3000"), ("replay-one", "100000000")] {
            let db = try fixture.copy(name)
            let errors = fixture.dir.appendingPathComponent("\(name)-errors.jsonl")
            let r = try await CLI.run(["replay", "--db", db, "--block-bytes", blockBytes, "--errors", errors.path, file.path])
            #expect(r.status == 2, "\(r.stderr)")
            let count = { (v: Verdict) in log.expected.filter { $0 == v }.count }
            let rejected = log.expected.count - count(.applied) - count(.duplicate)
            #expect(
                r.stderr.contains("\(log.lines.count) records: \(count(.applied)) applied, \(count(.duplicate)) duplicates skipped, \(rejected) rejected"),
                "\(r.stderr)")
            replays.append((db, try Verdicts.fromReplay(errorReport: errors, database: db, log: log)))
            // The same rule, not only the same field (unknownPick, pickOfAnotherUser and
            // pickBinGone all name pick_id): the message each rule writes.
            #expect(try Verdicts.rulesFromReplay(errorReport: errors) == cliRules, "\(name)")
        }

        // POST /v1/feedback, one event a request, in log order.
        let serverDB = try fixture.copy("server")
        let (serverVerdicts, serverRules) = try await Verdicts.fromServerWithRules(database: serverDB, log: log, key: fixture.adminKey)
        #expect(serverRules == cliRules, "server")
        #expect(Set(cliRules.values).count >= 6, "the log breaks several rules: \(cliRules)")

        #expect(cliVerdicts == log.expected, "CLI")
        #expect(serverVerdicts == log.expected, "server")
        for r in replays { #expect(r.verdicts == log.expected, "\(r.db)") }

        let reference = try Dump.rows(cliDB)
        // Every applied event is a row, with its snapshot only where the user keeps them (u-2).
        let feedback = reference.filter { $0.hasPrefix("feedback|") }
        #expect(feedback.count == log.expected.filter { $0 == .applied }.count)
        #expect(feedback.filter { !$0.contains("snapshot:NULL") }.allSatisfy { $0.contains("user_id:\"u-2\"") })
        #expect(feedback.contains { $0.contains("user_id:\"u-2\"") && !$0.contains("snapshot:NULL") })
        #expect(reference.filter { $0.hasPrefix("bins|") }.count >= 6)
        for db in [serverDB] + replays.map(\.db) {
            let rows = try Dump.rows(db)
            #expect(rows.count == reference.count, "\(db)")
            for (a, b) in zip(reference, rows) where a != b {
                Issue.record("\(db): \(b)\n  the CLI's: \(a)")
                break
            }
        }
    }
}

extension EquivalenceTests {
    /// A valid event padded with spaces past the one size limit of a document (1 MiB).
    static func oversizedEvent(_ base: Base) -> String {
        let event =
            #"{"id":"e-big","user":"u-1","at":"\#(EventLog.at(minute: 90))","track":"\#(base.tracks[3])","signal":"like","snapshot":"#
            + EventLog.snapshot(user: "u-1", minute: 90, context: 1)
        return event + String(repeating: " ", count: 2 << 20) + "}"
    }

    @Test("One size limit: a 2 MiB event is refused alike by feedback (a document and a line), replay and POST /v1/feedback")
    func oneSizeLimit() async throws {
        let fixture = try await Base.make()
        let big = Self.oversizedEvent(fixture)
        let expected = "expected a document of at most \(Snapshot.maxBytes) bytes"
        let single = fixture.dir.appendingPathComponent("big.json"), lines = fixture.dir.appendingPathComponent("big.jsonl")
        try big.write(to: single, atomically: true, encoding: .utf8)
        try
            (big + "\n"
            + #"{"id":"e-small","user":"u-1","at":"\#(EventLog.at(minute: 91))","track":"\#(fixture.tracks[4])","signal":"like","pick_id":"\#(fixture.picks["u-1"]![0].pickId)"}"#
            + "\n")
            .write(to: lines, atomically: true, encoding: .utf8)

        let one = try await CLI.run(["feedback", "--db", try fixture.copy("size-one"), single.path])
        #expect(one.status == 2 && one.stderr.contains(expected), "\(one.status) \(one.stderr)")
        let perLine = try await CLI.run(["feedback", "--db", try fixture.copy("size-lines"), lines.path])
        #expect(perLine.status == 2 && perLine.stderr.contains("line 1: ") && perLine.stderr.contains(expected), "\(perLine.stderr)")
        let errors = fixture.dir.appendingPathComponent("size-errors.jsonl")
        let replay = try await CLI.run(["replay", "--db", try fixture.copy("size-replay"), "--errors", errors.path, lines.path])
        #expect(replay.status == 2 && replay.stderr.contains("1 applied") && replay.stderr.contains("1 rejected"), "\(replay.stderr)")
        #expect(try String(contentsOf: errors, encoding: .utf8).contains(expected))

        // The service with a body limit above the event's size: the document limit still holds.
        let store = try Store(path: try fixture.copy("size-server"), durable: false)
        let models = try Models.bundled()
        let service = SoundtrackService(
            store: store, engine: Recommender(config: models.config, catalog: IndexCatalog(.init(tracks: [])), priors: models.priors, seed: 42),
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        var config = ServerConfiguration()
        config.port = 0
        config.maxBodyBytes = 8 << 20
        let api = try SoundtrackAPI(service: service, configuration: config, logger: service.logger)
        let key = fixture.adminKey
        // One event, and the same event in a batch (an array), padded with a field past the limit.
        let padded = big.replacingOccurrences(of: #""signal":"like","#, with: #""signal":"like","padding":"\#(String(repeating: "x", count: 2 << 20))","#)
        let answers = try await api.buildApplication().test(.router) { client in
            var out: [(HTTPResponse.Status, String)] = []
            for body in [big, "[" + padded + "]"] {
                let r = try await client.execute(
                    uri: "/v1/feedback", method: .post, headers: [.contentType: "application/json", .authorization: "Bearer \(key)"],
                    body: ByteBuffer(string: body))
                out.append((r.status, String(buffer: r.body)))
            }
            return out
        }
        #expect(answers[0].0 == .badRequest && answers[0].1.contains(expected), "\(answers[0])")
        #expect(answers[1].0 == .badRequest && answers[1].1.contains(expected) && answers[1].1.contains(#""field":"[0]""#), "\(answers[1].1.prefix(300))")
        #expect(try store.user("u-1")?.feedback == 0)
    }
}

/// A verdict as every front-end can report it: applied, duplicate, or rejected naming the field.
enum Verdict: Equatable, CustomStringConvertible {
    case applied
    case duplicate
    case rejected(field: String)

    var description: String {
        switch self {
        case .applied: "applied"
        case .duplicate: "duplicate"
        case let .rejected(field): "rejected(\(field))"
        }
    }
}

/// The starting database: the small catalog, three users, an admin key, a few picks, and one
/// bin deleted under a pick (a pick whose bin is gone). Every front-end starts from a copy.
struct Base {
    let dir: URL
    let path: String
    let adminKey: String
    /// Picks made before the log: user → pick records, in order.
    let picks: [String: [PickRecord]]
    /// The pick of u-3 whose bin was deleted.
    let orphanPick: PickRecord
    let tracks: [String]

    static let users = ["u-1", "u-2", "u-3"]

    static func make() async throws -> Base {
        let dir = CLI.tempDir()
        let path = dir.appendingPathComponent("base.sqlite").path
        let catalog = CLI.root.appendingPathComponent("datasets/catalog-small.csv").path
        var r = try await CLI.run(["catalog", "import", catalog, "--db", path])
        precondition(r.status == 0, r.stderr)
        for u in users {
            r = try await CLI.run(["users", "add", u, "--db", path])
            precondition(r.status == 0, r.stderr)
        }
        let store = try Store(path: path)
        try store.updateSettings(user: "u-2") { $0.keepRawSnapshots = true }
        var rng = SystemRandomNumberGenerator()
        let (secret, record) = APIKeys.generate(role: .admin, user: nil, label: "test", at: Date(timeIntervalSince1970: 0), using: &rng)
        try store.insertKey(record)
        let models = try Models.bundled()
        let service = SoundtrackService(
            store: store, engine: Recommender(config: models.config, catalog: IndexCatalog(.init(tracks: [])), priors: models.priors, seed: 42))
        var picks: [String: [PickRecord]] = [:]
        for (k, u) in users.enumerated() {
            for j in 0..<3 {
                let snapshot = try Snapshot(json: JSONParser.parse(EventLog.snapshot(user: u, minute: j * 5, context: k + j)))
                let pick = try service.pick(snapshot)
                guard let record = try store.pickRecord(id: pick.pickId) else { preconditionFailure("pick not stored") }
                picks[u, default: []].append(record)
            }
        }
        // u-3's first pick loses its bin (as a bin removed by a later version of the engine).
        let orphan = picks["u-3"]![0]
        try TestDatabase.execute(path, "DELETE FROM bins WHERE user_id = 'u-3' AND number = \(orphan.binNumber)")
        let tracks = try store.allTracks().map(\.id)
        return Base(dir: dir, path: path, adminKey: secret, picks: picks, orphanPick: orphan, tracks: tracks)
    }

    /// A copy of the starting database (the file alone: the store checkpointed it on close).
    func copy(_ name: String) throws -> String {
        let to = dir.appendingPathComponent("\(name).sqlite").path
        try TestDatabase.execute(path, "PRAGMA wal_checkpoint(TRUNCATE)")
        try FileManager.default.copyItem(atPath: path, toPath: to)
        return to
    }
}

/// The log and the verdict each event must get.
struct EventLog {
    var lines: [String] = []
    var ids: [String] = []
    var expected: [Verdict] = []

    static func snapshot(user: String, minute: Int, context: Int) -> String {
        let places = ["library", "gym", "home", "work", "car"]
        let place = places[context % places.count]
        let at = Timestamp(date: Date(timeIntervalSince1970: 1_773_468_000 + Double(minute * 60)), offsetSeconds: 3600).rfc3339
        let moving = place == "gym" || place == "car"
        return
            #"{"user":"\#(user)","at":"\#(at)","location":{"place":"\#(place)","speed_mps":\#(moving ? 3.5 : 0)},"motion":{"activity":"\#(moving ? "running" : "stationary")","heart_rate_bpm":\#(moving ? 140 : 66)},"weather":{"temp_c":\#(5 + context),"condition":"clouds"}}"#
    }

    static func at(minute: Int) -> String {
        Timestamp(date: Date(timeIntervalSince1970: 1_773_468_000 + Double(minute * 60)), offsetSeconds: 3600).rfc3339
    }

    mutating func add(
        _ id: String, user: String, minute: Int, track: String, signal: String = "like", pick: String? = nil, snapshot context: Int? = nil,
        expect verdict: Verdict
    ) {
        var s = #"{"id":"\#(id)","user":"\#(user)","at":"\#(Self.at(minute: minute))","track":"\#(track)","signal":"\#(signal)","played_ms":\#(20_000 + minute)"#
        if let pick { s += #","pick_id":"\#(pick)""# }
        if let context { s += #","snapshot":\#(Self.snapshot(user: user, minute: minute, context: context))"# }
        lines.append(s + "}")
        ids.append(id)
        expected.append(verdict)
    }

    mutating func addRaw(_ line: String, id: String, expect verdict: Verdict) {
        lines.append(line)
        ids.append(id)
        expected.append(verdict)
    }

    static func make(_ base: Base) throws -> EventLog {
        var log = EventLog()
        let t = base.tracks
        let p1 = base.picks["u-1"]!, p2 = base.picks["u-2"]!, p3 = base.picks["u-3"]!
        // Answers to picks, the picked tracks liked and skipped.
        log.add("e-01", user: "u-1", minute: 30, track: p1[0].trackId, pick: p1[0].pickId, expect: .applied)
        log.add("e-02", user: "u-2", minute: 31, track: p2[0].trackId, signal: "skip", pick: p2[0].pickId, expect: .applied)
        log.add("e-03", user: "u-1", minute: 32, track: p1[1].trackId, signal: "complete", pick: p1[1].pickId, expect: .applied)
        // The same event again right away: a duplicate (in the same replay block).
        log.add("e-03", user: "u-1", minute: 32, track: p1[1].trackId, signal: "complete", pick: p1[1].pickId, expect: .duplicate)
        // Events with snapshots: a dislike streak that switches bins.
        for i in 0..<4 {
            log.add("e-1\(i)", user: "u-1", minute: 40 + i, track: t[(i * 37) % t.count], signal: "dislike", snapshot: 1, expect: .applied)
        }
        log.add("e-20", user: "u-2", minute: 41, track: t[11], snapshot: 2, expect: .applied)  // u-2 keeps raw snapshots
        // Another user's event with an id u-1 holds.
        log.add("e-01", user: "u-2", minute: 45, track: t[12], snapshot: 2, expect: .rejected(field: "id"))
        // Earlier than u-1's previous event: out of time order.
        log.add("e-30", user: "u-1", minute: 35, track: t[13], snapshot: 0, expect: .rejected(field: "at"))
        // The same time as u-1's previous event: in order.
        log.add("e-31", user: "u-1", minute: 43, track: t[14], snapshot: 0, expect: .applied)
        // A user the database does not know.
        log.add("e-32", user: "ghost", minute: 50, track: t[15], snapshot: 0, expect: .rejected(field: "user"))
        // A track not in the catalog.
        log.add("e-33", user: "u-2", minute: 50, track: "spotify:track:nope", snapshot: 1, expect: .rejected(field: "track"))
        // A pick that does not exist: rejected alone, with a snapshot the snapshot is the context.
        log.add("e-34", user: "u-2", minute: 51, track: t[16], pick: "p-nope", expect: .rejected(field: "pick_id"))
        log.add("e-35", user: "u-2", minute: 52, track: t[17], pick: "p-nope", snapshot: 3, expect: .applied)
        // Another user's pick, even with a snapshot.
        log.add("e-36", user: "u-3", minute: 53, track: p1[2].trackId, pick: p1[2].pickId, snapshot: 1, expect: .rejected(field: "pick_id"))
        // A pick whose bin is gone: rejected alone, with a snapshot the snapshot is the context.
        let orphan = base.orphanPick
        log.add("e-37", user: "u-3", minute: 54, track: orphan.trackId, pick: orphan.pickId, expect: .rejected(field: "pick_id"))
        log.add("e-38", user: "u-3", minute: 55, track: orphan.trackId, signal: "dislike", pick: orphan.pickId, snapshot: 4, expect: .applied)
        log.add("e-39", user: "u-3", minute: 56, track: p3[1].trackId, pick: p3[1].pickId, snapshot: 3, expect: .applied)
        // A malformed event.
        log.addRaw(#"{"id":"e-40","user":"u-1","at":"\#(at(minute: 60))","track":"x","signal":"meh","pick_id":"p-1"}"#, id: "e-40", expect: .rejected(field: "signal"))
        // An unknown pick and an unknown track: the track is judged first (it does not depend on
        // the user's past, so a replay run again names it again).
        log.add("e-41", user: "u-2", minute: 62, track: "spotify:track:nope", pick: "p-nope", expect: .rejected(field: "track"))
        // The id of the rejected out-of-order event, now in order: judged on its own.
        log.add("e-30", user: "u-1", minute: 61, track: t[18], snapshot: 2, expect: .applied)
        // A duplicate far from its event.
        log.add("e-02", user: "u-2", minute: 31, track: p2[0].trackId, signal: "skip", pick: p2[0].pickId, expect: .duplicate)
        // More of each user, interleaved.
        for i in 0..<12 {
            let user = Base.users[i % 3]
            log.add(
                "e-5\(String(format: "%02d", i))", user: user, minute: 70 + i, track: t[(i * 53 + 7) % t.count],
                signal: ["like", "skip", "complete", "dislike"][i % 4], snapshot: i % 5, expect: .applied)
        }
        return log
    }
}

/// Reading each front-end's verdicts.
enum Verdicts {
    /// `soundtrack feedback`: a JSON line per applied or duplicate event on standard output, in
    /// order, and `error: line N: FIELD: …` on standard error for each rejected one.
    /// Also the rule each rejection names: its message after the field, by line.
    static func fromCLIWithRules(_ r: CLI.Result, lines: Int) throws -> (verdicts: [Verdict], rules: [Int: String]) {
        var rejected: [Int: String] = [:], rules: [Int: String] = [:]
        for line in r.stderr.split(separator: "\n") where line.hasPrefix("error: line ") {
            let rest = line.dropFirst("error: line ".count)
            let parts = rest.split(separator: ":", maxSplits: 2)
            rejected[Int(parts[0])!] = parts[1].trimmingCharacters(in: .whitespaces)
            rules[Int(parts[0])!] = parts.count > 2 ? parts[2].trimmingCharacters(in: .whitespaces) : ""
        }
        var outputs = r.stdout.split(separator: "\n").map { try? JSONParser.parse(String($0)) }.makeIterator()
        let verdicts = (1...lines).map { line -> Verdict in
            if let field = rejected[line] { return .rejected(field: field) }
            guard case let .object(pairs)?? = outputs.next(), let status = pairs.first(where: { $0.0 == "status" })?.1 else {
                return .rejected(field: "?")
            }
            return status == .string("duplicate") ? .duplicate : .applied
        }
        return (verdicts, rules)
    }

    /// `soundtrack replay`: rejected lines from the error report; of the others, the first line
    /// whose id, user and time the event's row holds applied it, the others are duplicates.
    static func fromReplay(errorReport: URL, database: String, log: EventLog) throws -> [Verdict] {
        var rejected: [Int: String] = [:]
        for (line, entry) in try reportEntries(errorReport) { rejected[line] = entry.field }
        let queue = try DatabaseQueue(path: database)
        let rows = try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT id, user_id, at FROM feedback").reduce(into: [String: (String, Double)]()) {
                $0[$1["id"]] = ($1["user_id"], $1["at"])
            }
        }
        var applied = Set<String>()
        return try log.lines.enumerated().map { i, line in
            if let field = rejected[i + 1] { return .rejected(field: field) }
            let event = try FeedbackEvent.decode(Data(line.utf8))
            guard let row = rows[event.id], row.0 == event.user, row.1 == event.at.date.timeIntervalSince1970,
                applied.insert(event.id).inserted
            else { return .duplicate }
            return .applied
        }
    }

    /// The rule each line of replay's error report names: its message, by line.
    static func rulesFromReplay(errorReport: URL) throws -> [Int: String] {
        try reportEntries(errorReport).mapValues(\.message)
    }

    /// The error report's entries (`line`, `field`, `message`) by line.
    static func reportEntries(_ errorReport: URL) throws -> [Int: (field: String, message: String)] {
        var out: [Int: (field: String, message: String)] = [:]
        for line in try String(contentsOf: errorReport, encoding: .utf8).split(separator: "\n") {
            let o = try JSONParser.parse(String(line))
            guard case let .object(pairs) = o, case let .number(n)? = pairs.first(where: { $0.0 == "line" })?.1,
                case let .string(field)? = pairs.first(where: { $0.0 == "field" })?.1,
                case let .string(message)? = pairs.first(where: { $0.0 == "message" })?.1
            else { continue }
            out[Int(n)] = (field, message)
        }
        return out
    }

    /// `POST /v1/feedback`, one event a request: 200 with `status` applied or duplicate, else an
    /// error naming the field.
    /// Also the rule each rejection names: its message after the field, by line.
    static func fromServerWithRules(database: String, log: EventLog, key: String) async throws -> (verdicts: [Verdict], rules: [Int: String]) {
        let models = try Models.bundled()
        let store = try Store(path: database, durable: false)
        let service = SoundtrackService(
            store: store, engine: Recommender(config: models.config, catalog: IndexCatalog(.init(tracks: [])), priors: models.priors, seed: 42),
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        var config = ServerConfiguration()
        config.port = 0
        let api = try SoundtrackAPI(service: service, configuration: config, logger: service.logger)
        let lines = log.lines
        return try await api.buildApplication().test(.router) { client in
            var verdicts: [Verdict] = []
            var rules: [Int: String] = [:]
            for (i, line) in lines.enumerated() {
                let r = try await client.execute(
                    uri: "/v1/feedback", method: .post,
                    headers: [.contentType: "application/json", .authorization: "Bearer \(key)"], body: ByteBuffer(string: line))
                let body = try JSONParser.parse(String(buffer: r.body))
                guard r.status == .ok else {
                    guard case let .object(o) = body, case let .object(e)? = o.first(where: { $0.0 == "error" })?.1,
                        case let .string(field)? = e.first(where: { $0.0 == "field" })?.1
                    else {
                        verdicts.append(.rejected(field: "?"))
                        continue
                    }
                    verdicts.append(.rejected(field: field))
                    if case let .string(message)? = e.first(where: { $0.0 == "message" })?.1 {
                        rules[i + 1] = message.hasPrefix(field + ": ") ? String(message.dropFirst(field.count + 2)) : message
                    }
                    continue
                }
                guard case let .object(o) = body, let status = o.first(where: { $0.0 == "status" })?.1 else {
                    verdicts.append(.rejected(field: "?"))
                    continue
                }
                verdicts.append(status == .string("duplicate") ? .duplicate : .applied)
            }
            return (verdicts, rules)
        }
    }
}

/// Every row a feedback event can change, as comparable text, in a stable order. No column is
/// normalised: the front-ends write no wall-clock time into these tables for feedback (users'
/// `created_at` comes from the starting database, bins' times from the events).
enum Dump {
    static let queries = [
        ("users", "SELECT id, email_hash, age, region, created_at, pick_counter, next_bin_number FROM users ORDER BY id"),
        ("user_settings", "SELECT * FROM user_settings ORDER BY user_id"),
        (
            "bins",
            """
            SELECT user_id, number, label, layout_version, hex(centroid), hex(spread), hex(observed), observations, prior,
                   created_at, updated_at, songs
            FROM bins ORDER BY user_id, number
            """
        ),
        ("weights", "SELECT user_id, layout_version, hex(vector) FROM weights ORDER BY user_id"),
        ("places", "SELECT user_id, id, lat, lon, count FROM places ORDER BY user_id, id"),
        ("sessions", "SELECT * FROM sessions ORDER BY user_id"),
        ("picks", "SELECT id, user_id, seq, at, bin_number, track_id, layout_version, hex(features), hex(mask), hex(ranking) FROM picks ORDER BY id"),
        (
            "feedback",
            """
            SELECT id, user_id, at, track_id, signal, played_ms, pick_id, bin_number, switched_to, snapshot, applied_seq
            FROM feedback ORDER BY id
            """
        ),
        ("songs", "SELECT count(*) FROM songs")
    ]

    static func rows(_ path: String) throws -> [String] {
        var config = Configuration()
        config.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: config)
        return try queue.read { db in
            var out: [String] = []
            for (table, sql) in queries {
                for row in try Row.fetchAll(db, sql: sql) { out.append("\(table)|\(row.description)") }
            }
            return out
        }
    }
}

enum TestDatabase {
    static func execute(_ path: String, _ sql: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in try db.execute(sql: sql) }
    }
}
