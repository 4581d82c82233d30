import Foundation
import GRDB
import Logging
import PostgresNIO
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackPostgres
import SoundtrackRules
import SoundtrackStore
import SoundtrackTestSupport
import Testing

/// The stores the conformance suite runs on: each test body is written once against
/// ``PersonStore`` and runs on both.
enum Backend: String, CaseIterable, CustomTestStringConvertible {
    case sqlite, postgres

    var testDescription: String { rawValue }
}

/// A store under test (a person's core path, the catalog, the blends and the history), and how to count a
/// person's rows in every personal table of its schema (SQLite: every table with a `user_id`
/// column, and `users`; PostgreSQL: every table `PostgresSchema.tables` lists as personal), as SQL
/// sees them.
struct StoreUnderTest {
    let store: any PersonStore & CatalogStore & BlendStore & HistoryStore
    let rowCounts: (_ user: String) async throws -> [String: Int]
}

extension Backend {
    /// Runs `body` on a new store of this kind: SQLite in a file of a scratch directory, PostgreSQL
    /// in a database of its own (skipped, saying why, when the tests have no server; a failure
    /// under CI=true).
    func withStore(_ body: (StoreUnderTest) async throws -> Void) async throws {
        switch self {
        case .sqlite:
            let dir = Scratch.directory("conformance")
            defer { try? FileManager.default.removeItem(at: dir) }
            let path = dir.appendingPathComponent("s.sqlite").path
            let store = try Store(path: path, durable: false, emailKey: .key(.random()))
            try await body(StoreUnderTest(store: store) { user in try Self.sqliteRowCounts(path: path, user: user) })
        case .postgres:
            guard try Self.postgresConfigured() else { return }
            try await TestDatabase.withFreshDatabase { endpoint in
                let store = try await PostgresStore.open(endpoint, emailKey: .random(), logger: TestDatabase.logger)
                defer { store.close() }
                try await body(StoreUnderTest(store: store) { user in try await Self.postgresRowCounts(endpoint, user: user) })
            }
        }
    }

    /// Whether a PostgreSQL server is configured; without one the test case is cancelled (skipped)
    /// after printing why, and under CI=true it fails.
    static func postgresConfigured() throws -> Bool {
        let environment = ProcessInfo.processInfo.environment
        if let url = environment[TestDatabase.variable], !url.isEmpty { return true }
        let reason = "\(TestDatabase.variable) is not set: no PostgreSQL server (bash scripts/postgres-cluster.sh run swift test --skip-build)"
        if environment["CI"] == "true" { throw TestDatabase.NotConfigured(description: "under CI=true the PostgreSQL tests may not skip: \(reason)") }
        print("PostgreSQL case skipped: \(reason)")
        try Test.cancel(Comment(rawValue: reason))
    }

    static func sqliteRowCounts(path: String, user: String) throws -> [String: Int] {
        var config = Configuration()
        config.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: config)
        return try queue.read { db in
            var out: [String: Int] = ["users": try Int.fetchOne(db, sql: "SELECT count(*) FROM users WHERE id = ?", arguments: [user]) ?? 0]
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            where try db.columns(in: table).contains(where: { $0.name == "user_id" }) {
                out[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table) WHERE user_id = ?", arguments: [user]) ?? 0
            }
            return out
        }
    }

    static func postgresRowCounts(_ endpoint: PostgresEndpoint, user: String) async throws -> [String: Int] {
        try await endpoint.withConnection(logger: TestDatabase.logger) { c in
            var out: [String: Int] = [:]
            for table in PostgresSchema.tables where table.personal {
                var binds = PostgresBindings()
                binds.append(user)
                let rows = try await c.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table.name) WHERE user_id = $1", binds: binds), logger: TestDatabase.logger)
                for try await n in rows.decode(Int.self) { out[table.name] = n }
            }
            return out
        }
    }
}

/// The engine and rules the suite stages picks and events with (the small committed catalog, the
/// bundled models), and the steps of the rules through a ``PersonStore``, as the CLI's service runs them.
enum Person {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let tracks: [Track] = try! CatalogReader().read(contentsOf: root.appendingPathComponent("datasets/catalog-small.csv")).tracks
    /// At most three bins, so that a day of six places makes, merges and moves bins.
    static let engine: Recommender = {
        let m = try! Models.bundled()
        var config = m.config
        config.binCap = 3
        return Recommender(config: config, catalog: IndexCatalog(CatalogIndex(tracks: tracks)), priors: m.priors, seed: 1)
    }()
    static let rules = Rules(engine: engine)
    static var defaults: [Float] { engine.config.defaultWeights }

    static func snapshot(_ place: String, _ at: String, user: String) -> Snapshot {
        Snapshot(
            user: user, at: Timestamp(rfc3339: at)!, location: Location(lat: 52.5, lon: 13.4, speedMps: 0, place: place),
            motion: Motion(activity: place == "gym" ? .running : .stationary, heartRateBpm: place == "gym" ? 150 : 65))
    }

    /// A pick for `snapshot`, staged and committed in one transaction of the person.
    static func pick(_ store: any PersonStore, _ snapshot: Snapshot) throws -> StagedPick {
        try store.updatePerson(snapshot.user, defaults: defaults) { user, _ in
            let staged = try rules.stagePick(snapshot, user: &user)
            return (staged, [.pick(staged.row, state: user!.state)])
        }
    }

    /// A feedback event judged and committed in one transaction of the person (rule 1 through
    /// the store's lookups, the pick it names of whatever person).
    static func feedback(_ store: any PersonStore, _ event: FeedbackEvent) throws -> FeedbackVerdict {
        try store.updatePerson(event.user, defaults: defaults) { user, reads in
            let owner = try reads.feedbackOwner(eventId: event.id)
            let position = try reads.feedbackLogSize() + 1
            let pick = try Rules.pickNamed(by: event, appliedBy: owner, lookup: reads.pickRecord(id:))
            let verdict = try rules.stageFeedback(event, appliedBy: owner, user: &user, position: position, pick: pick)
            guard case let .applied(row) = verdict else { return (verdict, []) }
            return (verdict, [.feedback(row, state: user!.state)])
        }
    }

    /// A day of picks at several places with a reaction to every other one (likes, ratings,
    /// dislikes, skips): bins made, merged and moved, songs rated, the session's lists and runs.
    /// - Returns: the picks and the events applied.
    @discardableResult
    static func day(_ store: any PersonStore, user: String, picks n: Int = 24, eventPrefix: String? = nil) throws -> (picks: [StagedPick], events: [FeedbackEvent]) {
        let places = ["library", "gym", "home", "cafe", "office", "park"]
        let signals: [(Signal, Int?)] = [(.like, nil), (.skip, nil), (.dislike, nil), (.rate, 5), (.complete, nil), (.rate, 2)]
        var picks: [StagedPick] = [], events: [FeedbackEvent] = []
        for i in 0..<n {
            let at = String(format: "2026-03-11T%02d:%02d:00+01:00", 6 + i / 6, (i % 6) * 10)
            let staged = try pick(store, snapshot(places[(i * 5 + i / 7) % places.count], at, user: user))
            picks.append(staged)
            guard i % 2 == 1 else { continue }
            let (signal, rating) = signals[(i / 2) % signals.count]
            let event = FeedbackEvent(
                id: "\(eventPrefix ?? user)-e\(i)", user: user, at: staged.pick.at, track: staged.pick.track.id, signal: signal, rating: rating,
                pickId: staged.pick.pickId)
            guard case .applied = try feedback(store, event) else { throw Unexpected(what: "event \(event.id) not applied") }
            events.append(event)
        }
        return (picks, events)
    }

    struct Unexpected: Error, CustomStringConvertible {
        var what: String
        var description: String { what }
    }
}
