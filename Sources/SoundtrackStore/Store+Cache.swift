import Foundation
import GRDB
import SoundtrackContext
import SoundtrackEngine

/// A user's engine state plus what the rules need to stage feedback without reading the database
/// again: the state a front-end keeps in memory between events.
public struct CachedUserState: Sendable {
    /// The engine state.
    public var state: UserState
    /// The `applied_seq` of the user's last applied feedback event (0 when none).
    public var feedbackSeq: Int64
    /// The time of the user's last applied feedback event (seconds since 1970, as stored), `nil`
    /// when none: an event before it is out of time order.
    public var lastEventAt: Double?
    /// The user's `keep_raw_snapshots` setting.
    public var keepRawSnapshots: Bool
    /// The user's `location_services` setting: off, the rules strip coordinates, accuracy and speed
    /// from every snapshot before anything learns, scores or stores it (``Rules``).
    public var locationServices = true
    /// The user's `volume_control` setting.
    public var volumeControl = false
    /// The user's `calendar_titles` setting: off, the rules remove calendar titles from every
    /// snapshot before anything learns, scores or stores it (``Rules``).
    public var calendarTitles = true

    /// The user's settings, as held with the state.
    public var settings: UserSettings {
        get {
            UserSettings(
                locationServices: locationServices, volumeControl: volumeControl, keepRawSnapshots: keepRawSnapshots, calendarTitles: calendarTitles)
        }
        set {
            locationServices = newValue.locationServices
            volumeControl = newValue.volumeControl
            keepRawSnapshots = newValue.keepRawSnapshots
            calendarTitles = newValue.calendarTitles
        }
    }
    /// Applied events the loaded state does not include yet, in the order applied: the state was
    /// loaded from a checkpoint of the view that these events came after
    /// (``UserWrite/pendingFeedback(_:event:)``). ``feedbackSeq`` and ``lastEventAt`` are those of
    /// the state as loaded, before them. The rules apply them again before anything else
    /// (`Rules.catchUp`); empty for a state that is up to date.
    public var pending: [PendingEvent] = []

    /// Creates a cached state.
    public init(state: UserState, feedbackSeq: Int64 = 0, lastEventAt: Double? = nil, keepRawSnapshots: Bool = false) {
        self.state = state
        self.feedbackSeq = feedbackSeq
        self.lastEventAt = lastEventAt
        self.keepRawSnapshots = keepRawSnapshots
    }

    /// What ``Store/commit(_:)`` needs of the state to write its changes since the last call, and
    /// clears them: the state without the bins that did not change. A queued write holding this
    /// instead of the whole state does not keep the other bins (and the scoring rows) shared with
    /// the live state, so the next change to the live state does not copy them.
    public mutating func takeChanges() -> UserState {
        let changes = state.changes
        var numbers = changes.bins
        numbers.formUnion(changes.songs)
        // A copy shares the small parts (weights, places, session, recent tracks and their keys,
        // which a fresh state would hash again); the bins and the scoring rows are replaced.
        var part = state
        part.bins = numbers.isEmpty ? [] : state.bins.filter { numbers.contains($0.number) }
        part.dropScoring()
        state.changes = UserState.Changes()
        return part
    }
}

extension Store {
    /// Loads a user's state with the feedback sequence, the time of the last event and the
    /// settings, for a cache; `nil` when there is no such user.
    public func loadCachedState(user: String, defaults: [Float]) throws -> CachedUserState? {
        try database.read { db in try Self.loadCachedState(db, user: user, defaults: defaults) }
    }

    static func loadCachedState(_ db: Database, user: String, defaults: [Float]) throws -> CachedUserState? {
        guard let state = try loadState(db, user: user, defaults: defaults) else { return nil }
        var cached = CachedUserState(state: state)
        let last = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT applied_seq, at FROM feedback WHERE user_id = ? ORDER BY applied_seq DESC LIMIT 1"),
            arguments: [user])
        if let last {
            cached.feedbackSeq = last[0]
            cached.lastEventAt = last[1]
        }
        cached.settings = try settings(db, user: user)
        try loadPending(db, into: &cached)
        return cached
    }

    /// Reads the events a loaded state does not include yet into ``CachedUserState/pending``, and
    /// sets its feedback sequence and last event time to those of the event before them.
    static func loadPending(_ db: Database, into cached: inout CachedUserState) throws {
        cached.pending = try pendingEvents(db, user: cached.state.user)
        try positionBeforePending(db, &cached)
    }

    /// Sets a state's feedback sequence and last event time to those of the event before its
    /// pending events (when it has any).
    private static func positionBeforePending(_ db: Database, _ cached: inout CachedUserState) throws {
        guard let first = cached.pending.first else { return }
        cached.feedbackSeq = first.seq - 1
        cached.lastEventAt = try Double.fetchOne(
            db.cachedStatement(sql: "SELECT at FROM feedback WHERE user_id = ? AND applied_seq = ?"),
            arguments: [cached.state.user, first.seq - 1])
    }

    /// ``loadPending(_:into:)`` for several users: the rows are read in turn and the events
    /// decoded on several threads (after a crash of the service, tens of thousands of them).
    static func loadPending(_ db: Database, into states: inout [String: CachedUserState], users: [String]) throws {
        let users = users.filter { states[$0] != nil }
        let rows = try users.map { try pendingRows(db, user: $0) }
        let decoded = ParallelDecode.map(rows.indices) { i in Result { try rows[i].map { try $0.decode(user: users[i]) } } }
        for (i, user) in users.enumerated() {
            states[user]!.pending = try decoded[i].get()
            try positionBeforePending(db, &states[user]!)
        }
    }

    /// Loads several users' states like ``loadCachedState(user:defaults:)``, in one read with one
    /// statement per table. Unknown users are left out.
    public func loadCachedStates(users: [String], defaults: [Float]) throws -> [String: CachedUserState] {
        try database.read { db in try Self.loadStates(db, users: users, defaults: defaults) }
    }

    /// How far each user's stored state is behind the user's feedback (``CachedUserState/pending``):
    /// the number of applied events it does not include, for the users with any.
    public func usersBehind() throws -> [String: Int] {
        try database.read { db in
            var out: [String: Int] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT p.user_id, count(*) FROM pending_events p JOIN users u ON u.id = p.user_id
                    WHERE p.applied_seq > u.view_seq GROUP BY p.user_id
                    """)
            {
                out[row[0]] = row[1]
            }
            return out
        }
    }

    /// The user a committed feedback event id belongs to, or `nil` when the id is new.
    /// (One statement, prepared once per connection, in its own implicit read transaction: the
    /// service asks this for every event.)
    public func feedbackOwner(eventId: String) throws -> String? {
        try database.unsafeRead { db in try Self.feedbackOwner(db, eventId: eventId) }
    }

    static func feedbackOwner(_ db: Database, eventId: String) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT user_id FROM feedback WHERE id = ?"), arguments: [eventId])
    }

    /// The owners of those of `ids` that are committed feedback event ids.
    public func feedbackOwners(ids: [String]) throws -> [String: String] {
        try database.read { db in
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

    /// A committed pick by id, of whatever user, or `nil`.
    public func pickRecord(id: String) throws -> PickRecord? {
        try database.read { db in try Self.loadPick(db, id: id) }
    }

    /// Committed picks by id (of any user), for feedback that names them.
    public func pickRecords(ids: [String]) throws -> [String: PickRecord] {
        try database.read { db in
            var out: [String: PickRecord] = [:]
            for id in ids where out[id] == nil {
                if let r = try Self.loadPick(db, id: id) { out[id] = r }
            }
            return out
        }
    }

    /// The greatest pick id `x` with `lower <= x < upper`, or `nil` (one step down the index on `picks.id`).
    public func greatestPickId(from lower: String, below upper: String) throws -> String? {
        try database.read { db in
            try String.fetchOne(db, sql: "SELECT id FROM picks WHERE id >= ? AND id < ? ORDER BY id DESC LIMIT 1", arguments: [lower, upper])
        }
    }

    /// The number of feedback rows: all users, or one (for tests).
    func feedbackCount(user: String? = nil) throws -> Int {
        try database.read { db in
            if let user {
                return try Int.fetchOne(db, sql: "SELECT count(*) FROM feedback WHERE user_id = ?", arguments: [user]) ?? 0
            }
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM feedback") ?? 0
        }
    }
}

/// An applied feedback event a user's stored state does not include yet (``CachedUserState/pending``).
public struct PendingEvent: Sendable, Equatable {
    /// Its `applied_seq`.
    public var seq: Int64
    /// The event as it came, its snapshot included.
    public var event: FeedbackEvent
    /// The bin its row says it landed in (applying it again must give the same).
    public var bin: Int
    /// The bin its row says the user switched to, if any.
    public var switchedTo: Int?

    /// Creates one.
    public init(seq: Int64, event: FeedbackEvent, bin: Int, switchedTo: Int? = nil) {
        self.seq = seq
        self.event = event
        self.bin = bin
        self.switchedTo = switchedTo
    }
}

/// Maps indices on as many threads as there are cores (each index on one thread).
enum ParallelDecode {
    static func map<T: Sendable>(_ indices: Range<Int>, _ transform: @Sendable (Int) -> T) -> [T] {
        let n = indices.count
        guard n > 1 else { return indices.map(transform) }
        let out = UnsafeMutableBufferPointer<T?>.allocate(capacity: n)
        out.initialize(repeating: nil)
        defer { out.deallocate() }
        let slots = Slots(out: out)
        let workers = min(n, ProcessInfo.processInfo.activeProcessorCount)
        DispatchQueue.concurrentPerform(iterations: workers) { w in
            for k in stride(from: w, to: n, by: workers) { slots.out[k] = transform(indices.lowerBound + k) }
        }
        let result = out.map { $0! }
        _ = out.deinitialize()
        return result
    }

    /// The output buffer, each element written by one thread.
    private struct Slots<T>: @unchecked Sendable {
        let out: UnsafeMutableBufferPointer<T?>
    }
}

/// Which pending events a state was loaded with (``CachedUserState/pending``): how many, and the
/// `applied_seq` of the last. A writer that changes a user brings its state up to date first and
/// deletes its pending events, and a new event adds one: the same mark at write time means nobody
/// wrote the user since the state was loaded.
public struct PendingMark: Sendable, Equatable {
    /// How many events.
    public var count: Int
    /// The `applied_seq` of the last.
    public var last: Int64
}

extension CachedUserState {
    /// The mark of the pending events loaded with the state, `nil` when it had none.
    public var pendingMark: PendingMark? {
        pending.last.map { PendingMark(count: pending.count, last: $0.seq) }
    }
}

extension Store {
    /// Writes states brought up to date from the pending events they were loaded with, in one
    /// transaction, as checkpoints of the view (their events' rows are left for
    /// ``prunePending(slice:)``), each only when its user's pending events are still those of its mark: a user
    /// another writer changed since it was loaded (and so brought up to date itself), or that was
    /// forgotten, is left as that writer left it.
    /// - Returns: the users left out so.
    /// - Throws: database errors (nothing is written then).
    public func commitCaughtUp(_ states: [(state: UserState, mark: PendingMark)]) throws -> [String] {
        try database.write { db in
            let probe = try RawStatement(
                db,
                cached: """
                    SELECT count(*), max(applied_seq) FROM pending_events
                    WHERE user_id = ?1 AND applied_seq > (SELECT view_seq FROM users WHERE id = ?1)
                    """)
            var writes: [UserWrite] = []
            var skipped: [String] = []
            for (state, mark) in states {
                try probe.bind(1, state.user)
                _ = try probe.step()
                let now = PendingMark(count: probe.int(0), last: probe.isNull(1) ? 0 : probe.int64(1))
                probe.reset()
                if now == mark { writes.append(.view(state)) } else { skipped.append(state.user) }
            }
            try Self.commit(writes, db)
            return skipped
        }
    }

    /// Deletes every pending event that its user's stored state includes (at or below the user's
    /// view mark, `users.view_seq`), oldest first, in transactions of at most `slice` rows: after
    /// ``commitCaughtUp(_:)`` and checkpoints of the view (``UserWrite/view(_:)``), which mark their
    /// users' events as included and leave the rows.
    ///
    /// When every pending event is included (the end of a catch-up that brought every user up to
    /// date), the table is emptied by one `DELETE` without a `WHERE`, in one transaction that
    /// checks first that no event is left above its user's mark: SQLite then frees the table's
    /// pages without visiting its rows (zeroed all the same, `secure_delete` being on). Deleting a
    /// million caught-up events row by row rewrote every page of them: about 8.5 s, against 1–2.5 s.
    /// - Returns: the number of rows deleted.
    /// - Throws: database errors (the transactions before the failing one stay committed).
    @discardableResult
    public func prunePending(slice: Int = 8192) throws -> Int {
        if let all = try prunePendingIfAllIncluded() { return all }
        var total = 0
        while true {
            let n = try database.write { db in try Self.prunePending(db, limit: max(1, slice)) }
            total += n
            if n < max(1, slice) { return total }
        }
    }

    /// Empties `pending_events` when every row is at or below its user's view mark; `nil` (and
    /// nothing deleted) when one is not, or when the table is empty.
    private func prunePendingIfAllIncluded() throws -> Int? {
        try database.writeWithoutTransaction { db in
            // SQLite empties a whole table without visiting its rows only while foreign keys are
            // off (they can be switched outside a transaction only). Deleting rows of this table
            // cannot break one: it references `users`, and no table references it.
            let keys = try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") ?? false
            if keys { try db.execute(sql: "PRAGMA foreign_keys = OFF") }
            defer { if keys { try? db.execute(sql: "PRAGMA foreign_keys = ON") } }
            var deleted: Int?
            try db.inTransaction(.immediate) {
                // One step down the (user_id, applied_seq) index per user, not a scan of the events.
                let pendingLeft =
                    try Bool.fetchOne(
                        db,
                        sql: """
                            SELECT EXISTS (SELECT 1 FROM users u WHERE EXISTS (
                                SELECT 1 FROM pending_events p WHERE p.user_id = u.id AND p.applied_seq > u.view_seq))
                            """) ?? true
                let any = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM pending_events)") ?? false
                guard any, !pendingLeft else { return .commit }
                try db.execute(sql: "DELETE FROM pending_events")
                deleted = db.changesCount
                return .commit
            }
            return deleted
        }
    }
}
