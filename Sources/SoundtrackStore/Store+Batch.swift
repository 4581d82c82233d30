import Foundation
import GRDB
import SoundtrackContext
import SoundtrackEngine

/// A user's engine state plus what the store needs to apply feedback without reading it again:
/// the state a serving layer keeps in memory between requests.
public struct CachedUserState: Sendable {
    /// The engine state.
    public var state: UserState
    /// The `applied_seq` of the user's last applied feedback event (0 when none).
    public var feedbackSeq: Int64
    /// The user's `keep_raw_snapshots` setting.
    public var keepRawSnapshots: Bool

    /// Creates a cached state.
    public init(state: UserState, feedbackSeq: Int64, keepRawSnapshots: Bool) {
        self.state = state
        self.feedbackSeq = feedbackSeq
        self.keepRawSnapshots = keepRawSnapshots
    }
}

/// One change computed in memory and waiting to be written: several are committed together in
/// one transaction by ``Store/commit(_:)`` (group commit).
public enum PendingWrite: Sendable {
    /// A pick: the user's state after it (with its ``UserState/changes``), the pick record and its sequence number.
    case pick(state: UserState, record: PickRecord, seq: Int64)
    /// A feedback event: the state after it, the event, what it did, its `applied_seq`, and whether to keep its snapshot.
    case feedback(state: UserState, event: FeedbackEvent, outcome: FeedbackOutcome, seq: Int64, keepSnapshot: Bool)
    /// Deleting every row of a user.
    case forget(user: String)

    /// The user the write is about.
    public var user: String {
        switch self {
        case let .pick(state, _, _): return state.user
        case let .feedback(state, _, _, _, _): return state.user
        case let .forget(user): return user
        }
    }
}

extension UserState {
    /// What ``Store/commit(_:)`` needs of this state to write its ``changes``: the state without
    /// the bins that did not change. A queued write holding this instead of the whole state does
    /// not keep the other bins (and the scoring rows) shared with the live state, so the next
    /// change to the live state does not copy them.
    public var pendingPart: UserState {
        var numbers = changes.bins
        numbers.formUnion(changes.songs)
        // A copy shares the small parts (weights, places, session, recent tracks and their keys,
        // which a fresh state would hash again); the bins and the scoring rows are replaced.
        var part = self
        part.bins = numbers.isEmpty ? [] : bins.filter { numbers.contains($0.number) }
        part.dropScoring()
        return part
    }
}

extension Store {
    /// Loads a user's state with the feedback sequence and settings, for a cache.
    /// - Throws: ``InputError`` (`user`) when there is no such user.
    public func loadCachedState(user: String, defaults: [Float]) throws -> CachedUserState {
        try writer.read { db in
            let state = try Self.loadState(db, user: user, defaults: defaults)
            let seq = try Int64.fetchOne(db, sql: "SELECT max(applied_seq) FROM feedback WHERE user_id = ?", arguments: [user]) ?? 0
            let keep = try Bool.fetchOne(db, sql: "SELECT keep_raw_snapshots FROM user_settings WHERE user_id = ?", arguments: [user]) ?? false
            return CachedUserState(state: state, feedbackSeq: seq, keepRawSnapshots: keep)
        }
    }

    /// A committed pick of a user, or `nil`.
    public func pickRecord(id: String, user: String) throws -> PickRecord? {
        try writer.read { db in try Self.loadPick(db, id: id, user: user) }
    }

    /// The greatest pick id `x` with `lower <= x < upper`, or `nil` (one step down the index on `picks.id`).
    public func greatestPickId(from lower: String, below upper: String) throws -> String? {
        try writer.read { db in
            try String.fetchOne(db, sql: "SELECT id FROM picks WHERE id >= ? AND id < ? ORDER BY id DESC LIMIT 1", arguments: [lower, upper])
        }
    }

    /// The user a committed feedback event id belongs to, or `nil` when the id is new.
    /// (One statement, prepared once per connection, in its own implicit read transaction: the
    /// service asks this for every event.)
    public func feedbackOwner(eventId: String) throws -> String? {
        try writer.unsafeRead { db in
            try String.fetchOne(db.cachedStatement(sql: "SELECT user_id FROM feedback WHERE id = ?"), arguments: [eventId])
        }
    }

    /// The number of feedback rows: all users, or one.
    public func feedbackCount(user: String? = nil) throws -> Int {
        try writer.read { db in
            if let user {
                return try Int.fetchOne(db, sql: "SELECT count(*) FROM feedback WHERE user_id = ?", arguments: [user]) ?? 0
            }
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM feedback") ?? 0
        }
    }

    /// The ids of all committed feedback events.
    public func feedbackIds() throws -> [String] {
        try writer.read { db in try String.fetchAll(db, sql: "SELECT id FROM feedback ORDER BY id") }
    }

    /// Commits writes in one transaction, in order. Successive states of one user are written
    /// once, from the latest state with the union of their changes (a state may hold only the bins
    /// it changed, as ``UserState/pendingPart``: a bin an earlier state changed and a later one
    /// does not hold is written from the earlier); every pick and feedback row is inserted.
    /// - Throws: a database error; then nothing of the batch is written.
    public func commit(_ writes: [PendingWrite]) throws {
        try writer.write { db in try Self.commit(writes, db) }
    }

    static func commit(_ writes: [PendingWrite], _ db: Database) throws {
        // Each user's state is written at the user's last write before the user's next `forget`
        // (or the end of the batch): most users of a batch have one write, whose state is then
        // written as it is, without being merged or held.
        var saveAt = [Bool](repeating: false, count: writes.count)
        var lastOf: [String: Int] = [:]
        for (i, w) in writes.enumerated() {
            if case let .forget(user) = w {
                if let j = lastOf.removeValue(forKey: user) { saveAt[j] = true }
            } else {
                lastOf[w.user] = i
            }
        }
        for j in lastOf.values { saveAt[j] = true }
        lastOf = [:]

        // The merged states of users with more writes to come.
        var held: [String: UserState] = [:]
        func stage(_ state: UserState, at i: Int) throws {
            var s = state
            if let earlier = held.removeValue(forKey: s.user) { s = merge(earlier, then: s) }
            if saveAt[i] {
                try saveState(db, &s)
            } else {
                held[s.user] = s
            }
        }
        for (i, w) in writes.enumerated() {
            switch w {
            case let .pick(state, record, seq):
                try insertPick(db, record, seq: seq)
                try stage(state, at: i)
            case let .feedback(state, event, outcome, seq, keep):
                try insertFeedback(db, event, outcome: outcome, seq: seq, keepSnapshot: keep)
                try stage(state, at: i)
            case let .forget(user):
                try db.execute(sql: "DELETE FROM users WHERE id = ?", arguments: [user])
            }
        }
    }

    /// A later state of a user with the union of both states' changes; the bins the earlier one
    /// changed and the later one does not hold are carried over from the earlier.
    static func merge(_ old: UserState, then new: UserState) -> UserState {
        var c = old.changes
        c.bins.formUnion(new.changes.bins)
        c.songs.formUnion(new.changes.songs)
        c.weights = c.weights || new.changes.weights
        c.places = c.places || new.changes.places
        c.counters = c.counters || new.changes.counters
        var merged = new
        var carried = old.changes.bins
        carried.formUnion(old.changes.songs)
        for number in carried where merged.binIndex(number: number) == nil {
            if let i = old.binIndex(number: number) { merged.bins.append(old.bins[i]) }
        }
        merged.changes = c
        return merged
    }
}
