import Foundation
import GRDB
import SoundtrackContext
import SoundtrackEngine

/// A pick as the store keeps it: the record feedback can name, and its place in the user's picks.
public struct PickRow: Sendable, Equatable {
    /// The record.
    public var record: PickRecord
    /// Its sequence number among the user's picks (the user's pick counter before it).
    public var seq: Int64

    /// Creates a row.
    public init(record: PickRecord, seq: Int64) {
        self.record = record
        self.seq = seq
    }
}

/// An applied feedback event as the store keeps it.
public struct FeedbackRow: Sendable, Equatable {
    /// The event; its snapshot is stored only when ``keepSnapshot`` is set.
    public var event: FeedbackEvent
    /// What it did.
    public var outcome: FeedbackOutcome
    /// Its `applied_seq` (the user's previous one + 1).
    public var seq: Int64
    /// Whether its snapshot is stored (the user's `keep_raw_snapshots` setting).
    public var keepSnapshot: Bool
    /// The query the event taught the blend, when it made one (``Recommender/feedback(_:pick:state:position:)``):
    /// stored with the row, in `blend_examples`.
    public var example: BlendExample?

    /// Creates a row.
    public init(event: FeedbackEvent, outcome: FeedbackOutcome, seq: Int64, keepSnapshot: Bool, example: BlendExample? = nil) {
        self.event = event
        self.outcome = outcome
        self.seq = seq
        self.keepSnapshot = keepSnapshot
        self.example = example
    }
}

/// One change to one user's rows: what the rules (`SoundtrackRules`) stage, and the one thing
/// ``Store/commit(_:)`` writes. Every front-end commits a sequence of them in one transaction:
/// the CLI one pick or event with the user's state, the HTTP service the writes of many requests
/// (group commit), batch and replay a block's rows and the final state of each user it changed.
public indirect enum UserWrite: Sendable {
    /// A new user with default settings (replay's `--create-users`), created at `at`.
    case addUser(String, at: Date)
    /// A pick's row, and the user's state after it when it is to be written with it.
    case pick(PickRow, state: UserState?)
    /// A feedback event's row, and the user's state after it when it is to be written with it.
    case feedback(FeedbackRow, state: UserState?)
    /// A feedback event's row whose effect on the user's state is written later, by the user's
    /// next state write (a checkpoint of the view: the HTTP service). Until then the event, as it
    /// came (`event`, its snapshot included, serialized by the request's thread rather than the
    /// committer's), waits in `pending_events`, and loading the user applies it again
    /// (``CachedUserState/pending``).
    case pendingFeedback(FeedbackRow, event: PendingEventText)
    /// Feedback rows in the order applied, their users' states written apart (with ``state(_:)``):
    /// a replay block's rows, thousands of them, without a write each.
    case feedbackRows([FeedbackRow])
    /// A user's state: what ``UserState/changes`` records (bins, weights, places, counters) and the session.
    /// The user's pending events it includes are deleted with it.
    case state(UserState)
    /// A user's state as a checkpoint of the view (the HTTP service): as ``state(_:)``, but the
    /// pending events it includes are only marked as included (`users.view_seq`) and left for a
    /// later ``prunePending(limit:)``, which deletes the rows of many users in the order they were
    /// written instead of rewriting each shared page once per user.
    case view(UserState)
    /// Deletes up to `limit` pending events that their users' stored states include, oldest first.
    case prunePending(limit: Int)
    /// Deleting every row of a user.
    case forget(String)
    /// A user's settings (``Store/writeSettings(_:user:_:scrubLocation:)``), written in order with
    /// the user's other writes: the HTTP service queues the user's state before it, so that no
    /// event waits to be applied again under other settings than it was applied with.
    case settings(String, UserSettings, scrubLocation: Bool)

    /// The users the write is about.
    public var users: [String] {
        switch self {
        case let .addUser(user, _), let .forget(user), let .settings(user, _, _): [user]
        case let .pick(row, _): [row.record.user]
        case let .feedback(row, _), let .pendingFeedback(row, _): [row.event.user]
        case let .feedbackRows(rows): rows.map(\.event.user)
        case let .state(state), let .view(state): [state.user]
        case .prunePending: []
        }
    }

    /// The state the write carries, if any.
    public var state: UserState? {
        switch self {
        case let .pick(_, state), let .feedback(_, state): state
        case let .state(state), let .view(state): state
        case .addUser, .feedbackRows, .pendingFeedback, .forget, .prunePending, .settings: nil
        }
    }
}

extension UserWrite {
    /// Where a sequence of writes writes each user's state: at the user's last state before the
    /// user's next `forget` (or the end). Most users have one state, which is then written as it
    /// is; the earlier states of a user are merged into the one written (``merge(_:then:)``).
    /// - Returns: for each write, whether the state it carries (merged with the user's earlier
    ///   ones since the last point) is written there.
    public static func stateWritePoints(_ writes: [UserWrite]) -> [Bool] {
        var saveAt = [Bool](repeating: false, count: writes.count)
        var lastOf: [String: Int] = [:]
        for (i, w) in writes.enumerated() {
            if case let .forget(user) = w {
                if let j = lastOf.removeValue(forKey: user) { saveAt[j] = true }
            } else if let state = w.state {
                lastOf[state.user] = i
            }
        }
        for j in lastOf.values { saveAt[j] = true }
        return saveAt
    }

    /// A later state of a user with the union of both states' changes (what a store writes for
    /// several states of one user in one commit; ``stateWritePoints(_:)``).
    public static func merge(_ old: UserState, then new: UserState) -> UserState { Store.merge(old, then: new) }
}

extension Store {
    /// Commits writes in one transaction, in order (with the store's `synchronous` setting, so a
    /// durable store's commit reaches the disk). Successive states of one user are written once,
    /// from the latest with the union of their changes (a state may hold only the bins it changed,
    /// as ``CachedUserState/takeChanges()`` gives it: a bin an earlier state changed and a later
    /// one does not hold is written from the earlier); every pick and feedback row is inserted.
    /// - Throws: a database error; then nothing of them is written.
    public func commit(_ writes: [UserWrite]) throws {
        guard !writes.isEmpty else { return }
        try database.write { db in try Self.commit(writes, db) }
    }

    /// Commits writes handed over in parts, in one transaction: `nextPart` is called until it
    /// returns `nil`, each part written as ``commit(_:)`` writes its writes (a user's states are
    /// merged within a part, so a user's writes should be in one part).
    /// - Throws: what `nextPart` throws; a database error; then nothing of them is written.
    public func commit(parts nextPart: () throws -> [UserWrite]?) throws {
        try database.write { db in
            while let part = try nextPart() { try Self.commit(part, db) }
        }
    }

    static func commit(_ writes: [UserWrite], _ db: Database) throws {
        var staging = StateStaging(writes)
        func stage(_ state: UserState, at i: Int, deleteCovered: Bool = true) throws {
            guard var due = staging.stage(state, at: i, deleteCovered: deleteCovered) else { return }
            try saveState(db, &due.state, deleteCovered: due.deleteCovered)
        }
        // Looked up in the statement cache once, not once a row (a replay block inserts thousands).
        var feedbackInsert: RawStatement?
        func insert(_ row: FeedbackRow) throws {
            if feedbackInsert == nil { feedbackInsert = try Self.feedbackInsert(db) }
            try insertFeedback(feedbackInsert!, row.event, outcome: row.outcome, seq: row.seq, keepSnapshot: row.keepSnapshot)
            if let example = row.example { try insertExample(db, example, seq: row.seq) }
        }
        for (i, w) in writes.enumerated() {
            switch w {
            case let .addUser(user, at):
                try insertUser(db, user, at: at)
            case let .pick(row, state):
                try insertPick(db, row.record, seq: row.seq)
                if let state { try stage(state, at: i) }
            case let .feedback(row, state):
                try insert(row)
                if let state { try stage(state, at: i) }
            case let .pendingFeedback(row, event):
                try insert(row)
                try insertPending(db, user: row.event.user, event, seq: row.seq)
            case let .feedbackRows(rows):
                for row in rows { try insert(row) }
            case let .state(state):
                try stage(state, at: i)
            case let .view(state):
                try stage(state, at: i, deleteCovered: false)
            case let .prunePending(limit):
                _ = try prunePending(db, limit: limit)
            case let .forget(user):
                try Self.dropCommunity(db, forgetting: user)
                try db.execute(sql: "DELETE FROM users WHERE id = ?", arguments: [user])
            case let .settings(user, settings, scrub):
                try writeSettings(db, user: user, settings, scrubLocation: scrub)
            }
        }
    }

    /// Inserts a user with no profile and default settings.
    static func insertUser(_ db: Database, _ user: String, at: Date) throws {
        let created = Timestamp(date: at, offsetSeconds: 0).rfc3339
        try db.cachedStatement(sql: "INSERT INTO users (id, created_at) VALUES (?, ?)").execute(arguments: [user, created])
        try db.cachedStatement(sql: "INSERT INTO user_settings (user_id) VALUES (?)").execute(arguments: [user])
    }

    /// A later state of a user with the union of both states' changes; the bins the earlier one
    /// changed and the later one does not hold are carried over from the earlier, unless the
    /// later one merged them away (bin numbers are never given again, so a removed bin stays
    /// removed).
    static func merge(_ old: UserState, then new: UserState) -> UserState {
        var c = old.changes
        c.bins.formUnion(new.changes.bins)
        c.songs.formUnion(new.changes.songs)
        c.removedBins.formUnion(new.changes.removedBins)
        c.bins.subtract(c.removedBins)
        c.songs.subtract(c.removedBins)
        c.weights = c.weights || new.changes.weights
        c.places = c.places || new.changes.places
        c.counters = c.counters || new.changes.counters
        var merged = new
        var carried = old.changes.bins
        carried.formUnion(old.changes.songs)
        carried.subtract(c.removedBins)
        for number in carried where merged.binIndex(number: number) == nil {
            if let i = old.binIndex(number: number) { merged.bins.append(old.bins[i]) }
        }
        merged.changes = c
        return merged
    }

    /// Writes a whole user state (every bin, weight, place and the session), creating the user if
    /// needed: for benchmarks and tests that build a state in memory.
    public func saveWholeState(_ state: UserState, at: Date) throws {
        var state = state
        for b in state.bins {
            state.changes.bins.insert(b.number)
            state.changes.songs.insert(b.number)
        }
        state.changes.weights = true
        state.changes.places = true
        state.changes.counters = true
        try database.write { db in
            if try !Self.userExists(db, state.user) { try Self.insertUser(db, state.user, at: at) }
            // Bins stored but no longer in the state (merged or folded since) go.
            let stored = try Int.fetchAll(db, sql: "SELECT number FROM bins WHERE user_id = ?", arguments: [state.user])
            state.changes.removedBins = Set(stored).subtracting(state.bins.map(\.number))
            try Self.saveState(db, &state)
        }
    }
}

/// A feedback event in the interchange format, as ``UserWrite/pendingFeedback(_:event:)`` keeps it.
public struct PendingEventText: Sendable {
    /// The event's JSON text (UTF-8).
    public let utf8: [UInt8]

    /// The event, serialized (`FeedbackEvent(json:)` reads it back as it was).
    public init(_ event: FeedbackEvent) {
        utf8 = Array(event.json().serialized().utf8)
    }
}
