import Foundation
import SoundtrackApp
import SoundtrackContext
import SoundtrackEngine
import SoundtrackStore
import SoundtrackTestSupport
import Testing

/// What a process reads before its first pick does not grow with the feedback log (issue 40): two
/// databases where one person has the same history and everyone else ten times the events, opened
/// as a one-shot `pick` opens them (``Bootstrap/open(path:models:seed:catalogCandidates:durable:emailKey:community:writesCommunity:logger:statementCounter:)``),
/// then one read-only pick, every statement counted by SQLite itself (``StatementCounter``).
@Suite("Start-up reads")
struct StartupReadsTests {
    static let person = "probe"
    static let others = ["o-1", "o-2", "o-3", "o-4", "o-5", "o-6"]

    /// A database of the person's 80 events and `others` events of six other people.
    static func database(others count: Int) async throws -> String {
        let (dir, db) = try await CLI.smallDatabase(user: person)
        let own = try CrashTests.multiUserLog(80, users: [person])
        let rest = try CrashTests.multiUserLog(count, users: others).map { $0.replacingOccurrences(of: #""id":"ev-"#, with: #""id":"o-ev-"#) }
        let log = dir.appendingPathComponent("log.jsonl")
        try Logs.write(own + rest, log)
        let r = try await CLI.run(["replay", log.path, "--create-users", "--no-fit", "--db", db])
        precondition(r.status == 0, r.stderr)
        return db
    }

    /// The statements' cost of opening `db` as a one-shot pick does and picking once for the person.
    static func startUp(_ db: String) throws -> StatementCounter {
        let counter = StatementCounter()
        let (service, _) = try Bootstrap.open(
            path: db, models: try Models.bundled(), seed: 42, catalogCandidates: nil, community: true, statementCounter: counter)
        let snapshot = try Snapshot.decode(Data(Logs.snapshot(user: person, minute: 10_000, context: 2).utf8))
        _ = try service.pick(snapshot, top: 1, learn: false)
        return counter
    }

    @Test("The rows SQLite visits before the first pick do not grow with twenty times the log")
    func startUpReadsDoNotGrowWithTheLog() async throws {
        let small = try Self.startUp(try await Self.database(others: 300))
        let large = try Self.startUp(try await Self.database(others: 6_000))
        let (s, l) = (small.total, large.total)
        #expect(s.steps > 0 && s.runs > 0)
        // What may differ is which of the pick's candidates (at most 200) have a stored row of
        // contexts to read, a few steps each. Something that read the log, or a table growing with
        // it, would visit a row for each of the 5,700 more events, several steps a row.
        #expect(abs(l.steps - s.steps) < 1_000, "steps \(s.steps) → \(l.steps): \(Self.growth(small, large))")
        #expect(l.scanSteps <= s.scanSteps + 100, "full-scan steps \(s.scanSteps) → \(l.scanSteps): \(Self.growth(small, large))")
    }

    /// The statements whose cost grew most, for the failure message.
    static func growth(_ small: StatementCounter, _ large: StatementCounter) -> String {
        let a = small.byStatement, b = large.byStatement
        return b.map { ($0.key, $0.value.steps - (a[$0.key]?.steps ?? 0)) }.sorted { $0.1 > $1.1 }.prefix(3)
            .map { "\($0.0.prefix(90)): +\($0.1)" }.joined(separator: "; ")
    }
}
