import Foundation
import GRDB
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

/// A feedback event applied in memory, waiting to be written by ``Store/commitBulk(_:)``.
public struct AppliedFeedback: Sendable {
    /// The event.
    public var event: FeedbackEvent
    /// What it did.
    public var outcome: FeedbackOutcome
    /// Its `applied_seq` (the user's previous one + 1).
    public var seq: Int64
    /// Whether its snapshot is stored (the user's `keep_raw_snapshots` setting).
    public var keepSnapshot: Bool

    /// Creates an applied event.
    public init(event: FeedbackEvent, outcome: FeedbackOutcome, seq: Int64, keepSnapshot: Bool) {
        self.event = event
        self.outcome = outcome
        self.seq = seq
        self.keepSnapshot = keepSnapshot
    }
}

/// Everything a batch job or a replay computed in memory for one transaction: users to create,
/// the final states of the users it touched (each with the union of its ``UserState/changes``),
/// feedback rows and pick records.
public struct BulkWrite: Sendable {
    /// Users to create first (id only, default settings), e.g. replay's `--create-users`.
    public var newUsers: [String] = []
    /// Latest states, one per user, with every change since the last write.
    public var states: [UserState] = []
    /// Feedback rows, in the order applied.
    public var feedback: [AppliedFeedback] = []
    /// Pick records with their sequence numbers.
    public var picks: [(record: PickRecord, seq: Int64)] = []
    /// When new users are created.
    public var at = Date(timeIntervalSince1970: 0)

    /// An empty write.
    public init() {}

    /// True when there is nothing to write.
    public var isEmpty: Bool { newUsers.isEmpty && states.isEmpty && feedback.isEmpty && picks.isEmpty }
}

extension Store {
    /// The ids among `ids` that are users.
    public func existingUsers(_ ids: [String]) throws -> Set<String> {
        try writer.read { db in
            var out = Set<String>()
            let stmt = try db.cachedStatement(sql: "SELECT 1 FROM users WHERE id = ?")
            for id in ids where try Bool.fetchOne(stmt, arguments: [id]) == true { out.insert(id) }
            return out
        }
    }

    /// Loads several users' states (with feedback sequence, setting and time of the last event) in one read.
    /// Unknown users are left out.
    public func loadCachedStates(users: [String], defaults: [Float]) throws -> [String: (cached: CachedUserState, lastEventAt: Double?)] {
        try writer.read { db in try Self.loadStates(db, users: users, defaults: defaults) }
    }

    /// The owners of those of `ids` that are committed feedback event ids.
    public func feedbackOwners(ids: [String]) throws -> [String: String] {
        try writer.read { db in
            var out: [String: String] = [:]
            let stmt = try RawStatement(db, cached: "SELECT user_id FROM feedback WHERE id = ?")
            for id in ids {
                try stmt.bind(1, id)
                if try stmt.step() { out[id] = stmt.text(0) }
                stmt.reset()
            }
            return out
        }
    }

    /// Committed picks by id (of any user), for feedback that names them.
    public func pickRecords(ids: [String]) throws -> [String: PickRecord] {
        try writer.read { db in
            var out: [String: PickRecord] = [:]
            let stmt = try db.cachedStatement(sql: "SELECT user_id FROM picks WHERE id = ?")
            for id in ids where out[id] == nil {
                guard let user = try String.fetchOne(stmt, arguments: [id]) else { continue }
                if let r = try Self.loadPick(db, id: id, user: user) { out[id] = r }
            }
            return out
        }
    }

    /// Adds the tracks whose ids are not in the catalog yet; existing tracks are left as they are.
    /// - Returns: how many were added.
    @discardableResult
    public func insertMissingTracks(_ tracks: [Track]) throws -> Int {
        try writer.write { db in
            var added = 0
            for t in tracks where try Bool.fetchOne(db, sql: "SELECT 1 FROM songs WHERE id = ?", arguments: [t.id]) != true {
                _ = try Self.upsertTracks(db, [t])
                added += 1
            }
            return added
        }
    }

    /// Writes a ``BulkWrite`` in one transaction (with the store's `synchronous` setting, so a
    /// durable store's commit reaches the disk): new users, then states, then feedback rows and picks.
    /// - Throws: a database error; then nothing of it is written.
    public func commitBulk(_ bulk: BulkWrite) throws {
        guard !bulk.isEmpty else { return }
        try writer.write { db in
            let created = Timestamp(date: bulk.at, offsetSeconds: 0).rfc3339
            for user in bulk.newUsers {
                try db.cachedStatement(sql: "INSERT INTO users (id, created_at) VALUES (?, ?)").execute(arguments: [user, created])
                try db.cachedStatement(sql: "INSERT INTO user_settings (user_id) VALUES (?)").execute(arguments: [user])
            }
            for var s in bulk.states { try Self.saveState(db, &s) }
            if !bulk.feedback.isEmpty {
                let insert = try Self.feedbackInsert(db)
                for f in bulk.feedback {
                    try Self.insertFeedback(insert, f.event, outcome: f.outcome, seq: f.seq, keepSnapshot: f.keepSnapshot)
                }
            }
            for p in bulk.picks { try Self.insertPick(db, p.record, seq: p.seq) }
        }
    }
}

extension Store {
    /// Copies the write-ahead log into the database file and empties it, so that the file alone
    /// holds the whole database (for copying it).
    public func checkpoint() throws {
        try writer.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
    }
}
