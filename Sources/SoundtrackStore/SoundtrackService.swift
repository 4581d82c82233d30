import Foundation
import GRDB
import Logging
import Synchronization
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

/// The two paths of Soundtrack over a ``Store``: snapshot → pick and feedback → changed bins,
/// each one SQLite transaction that loads the user's state, runs the engine and writes what changed.
public final class SoundtrackService: Sendable {
    /// The database.
    public let store: Store
    /// The engine (its catalog is replaced per transaction by the store's).
    public let engine: Recommender
    /// Where the service reports what it did (user ids, bin ids, counts; never coordinates, titles or device names).
    public let logger: Logger
    private let indexCache = IndexCache()

    /// Creates a service.
    public init(store: Store, engine: Recommender, logger: Logger = Logger(label: "soundtrack.service")) {
        self.store = store
        self.engine = engine
        self.logger = logger
    }

    /// The result of one feedback event.
    public enum FeedbackResult: Sendable, Equatable {
        /// The event was applied in its own committed transaction.
        case applied(FeedbackOutcome)
        /// An event with this id was applied before: nothing changed.
        case duplicate
    }

    /// Picks a track for a snapshot of a known user.
    /// - Parameters:
    ///   - top: how many ranked tracks to return.
    ///   - learn: when false nothing is written (the pick, session and any new bin are discarded).
    /// - Throws: ``InputError`` for an unknown user; database errors otherwise.
    public func pick(_ snapshot: Snapshot, top: Int = 1, learn: Bool = true) throws -> Pick {
        if !learn {
            return try store.writer.read { db in
                let engine = self.engine(db)
                var state = try Store.loadState(db, user: snapshot.user, defaults: engine.config.defaultWeights)
                return engine.pick(snapshot, state: &state, top: top).pick
            }
        }
        return try store.writer.write { db in
            let engine = self.engine(db)
            var state = try Store.loadState(db, user: snapshot.user, defaults: engine.config.defaultWeights)
            let seq = state.pickCounter
            let (pick, record) = engine.pick(snapshot, state: &state, top: top)
            try Store.saveState(db, &state)
            try Store.insertPick(db, record, seq: seq)
            logger.debug("pick", metadata: [
                "user": "\(pick.user)", "pick": "\(pick.pickId)", "bin": "\(pick.bin.id)",
                "created": "\(pick.bin.created)", "score": "\(pick.bin.score)", "source": "\(pick.source)",
            ])
            return pick
        }
    }

    /// Applies one feedback event, exactly once per event id.
    /// - Throws: ``InputError`` for an unknown user, an id used by another user, an unknown pick or track.
    public func feedback(_ event: FeedbackEvent) throws -> FeedbackResult {
        try store.writer.write { db in
            if let owner = try String.fetchOne(db, sql: "SELECT user_id FROM feedback WHERE id = ?", arguments: [event.id]) {
                guard owner == event.user else {
                    throw InputError(path: "id", expected: "an event id not used by another user", got: "'\(event.id)'")
                }
                logger.debug("feedback duplicate", metadata: ["user": "\(event.user)", "event": "\(event.id)"])
                return .duplicate
            }
            let engine = self.engine(db)
            var state = try Store.loadState(db, user: event.user, defaults: engine.config.defaultWeights)
            var record: PickRecord?
            if let pickId = event.pickId {
                record = try Store.loadPick(db, id: pickId, user: event.user)
                if record == nil && event.snapshot == nil {
                    throw InputError(path: "pick_id", expected: "a pick of user '\(event.user)'", got: "'\(pickId)'")
                }
            }
            let outcome = try engine.feedback(event, pick: record, state: &state)
            try Store.saveState(db, &state)
            let keep = try Bool.fetchOne(db, sql: "SELECT keep_raw_snapshots FROM user_settings WHERE user_id = ?", arguments: [event.user]) ?? false
            let seq = (try Int64.fetchOne(db, sql: "SELECT max(applied_seq) FROM feedback WHERE user_id = ?", arguments: [event.user]) ?? 0) + 1
            try Store.insertFeedback(db, event, outcome: outcome, seq: seq, keepSnapshot: keep)
            logger.debug("feedback", metadata: [
                "user": "\(event.user)", "event": "\(event.id)", "signal": "\(event.signal.rawValue)",
                "bin": "b-\(outcome.bin)", "streak": "\(outcome.dislikeStreak)",
                "switched_to": "\(outcome.switchedTo.map { "b-\($0)" } ?? "-")",
            ])
            return .applied(outcome)
        }
    }

    /// Onboards a user from one song and the current snapshot (see ``Recommender/onboard(_:song:library:state:)``)
    /// in one transaction, and records the pick of that song so that feedback can name it.
    /// - Parameter library: the user's own tracks, preferred over the catalog when similar enough.
    /// - Throws: ``InputError`` for an unknown user or a song not in the catalog.
    public func onboard(_ snapshot: Snapshot, song: String, library: [String] = []) throws -> Pick {
        try store.writer.write { db in
            let engine = self.engine(db)
            var state = try Store.loadState(db, user: snapshot.user, defaults: engine.config.defaultWeights)
            let seq = state.pickCounter
            let (pick, record) = try engine.onboard(snapshot, song: song, library: library, state: &state)
            try Store.saveState(db, &state)
            try Store.insertPick(db, record, seq: seq)
            logger.debug("onboard", metadata: [
                "user": "\(pick.user)", "pick": "\(pick.pickId)", "bin": "\(pick.bin.id)", "created": "\(pick.bin.created)",
            ])
            return pick
        }
    }

    /// A user's bins, in number order.
    public func bins(user: String) throws -> [Bin] {
        try store.writer.read { db in
            try Store.loadState(db, user: user, defaults: engine.config.defaultWeights).bins
        }
    }

    /// A user's whole engine state.
    public func state(user: String) throws -> UserState {
        try store.writer.read { db in
            try Store.loadState(db, user: user, defaults: engine.config.defaultWeights)
        }
    }

    /// Forgets the cached similarity index (after a catalog import).
    public func catalogChanged() {
        indexCache.clear()
    }

    private func engine(_ db: Database) -> Recommender {
        engine.with(catalog: DatabaseCatalog(db: db, cache: indexCache))
    }
}

/// A catalog source bound to one open transaction. Only valid inside that transaction's closure.
private struct DatabaseCatalog: CatalogSource, @unchecked Sendable {
    let db: Database
    let cache: IndexCache

    func tracks(ids: [String]) -> [String: Track] {
        (try? Store.tracks(db, ids: ids)) ?? [:]
    }

    func index() -> CatalogIndex {
        cache.get { CatalogIndex(tracks: (try? Store.indexTracks(db)) ?? []) }
    }
}

/// The similarity index, loaded on first need and kept.
final class IndexCache: Sendable {
    private let value = Mutex<CatalogIndex?>(nil)

    func get(_ load: () -> CatalogIndex) -> CatalogIndex {
        if let v = value.withLock({ $0 }) { return v }
        let loaded = load()
        value.withLock { $0 = loaded }
        return loaded
    }

    func clear() { value.withLock { $0 = nil } }
}
