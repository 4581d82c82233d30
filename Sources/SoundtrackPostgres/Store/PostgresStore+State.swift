import Foundation
import PostgresNIO
import SoundtrackContext
import SoundtrackEngine
import SoundtrackStore

extension PostgresStore {
    /// A person's state, feedback position, settings and pending events (``PersonStore/loadCachedState(user:defaults:)``),
    /// read in one snapshot of the store.
    public func loadCachedState(user: String, defaults: [Float]) throws -> CachedUserState? {
        try transaction(locking: [], readOnly: true) { tx in try Self.loadCachedState(tx, user: user, defaults: defaults) }
    }

    /// Loads a person's state, then runs `body` and commits its writes, all in one transaction
    /// holding the person's lock (``PersonStore/updatePerson(_:defaults:_:)``). `body` runs again
    /// on a fresh load when another person's transaction committed an event id this one inserts
    /// (the rules then find it taken), or when the server broke a deadlock.
    public func updatePerson<R>(
        _ user: String, defaults: [Float],
        _ body: (_ user: inout CachedUserState?, _ reads: any PersonReads) throws -> (result: R, writes: [UserWrite])
    ) throws -> R {
        try transaction(locking: [user], startOver: true) { tx in
            var cached = try Self.loadCachedState(tx, user: user, defaults: defaults)
            let (result, writes) = try body(&cached, PostgresReads(tx: tx))
            // The writes' other people (a forget, another person's row) are locked too, after this one:
            // an advisory lock taken twice is held once.
            let others = Set(writes.flatMap(\.users)).subtracting([user]).sorted()
            for other in others {
                try tx.query("SELECT pg_advisory_xact_lock(\(Self.personLockSpace), hashtext(\(other)))")
            }
            try Self.commit(writes, tx)
            return result
        }
    }

    // MARK: - The rules' lookups

    /// The person a committed feedback event id belongs to, or `nil` when the id is new.
    public func feedbackOwner(eventId: String) throws -> String? {
        try transaction(locking: [], readOnly: true) { tx in try Self.feedbackOwner(tx, eventId: eventId) }
    }

    /// A committed pick by id, of whatever person, or `nil`.
    public func pickRecord(id: String) throws -> PickRecord? {
        try transaction(locking: [], readOnly: true) { tx in try Self.loadPick(tx, id: id) }
    }

    /// How many feedback events the store holds: the `rowid` of the newest (a sequence, so a
    /// forget does not move it back).
    public func feedbackLogSize() throws -> Int64 {
        try transaction(locking: [], readOnly: true) { tx in try Self.feedbackLogSize(tx) }
    }

    static func feedbackOwner(_ tx: PostgresTransaction, eventId: String) throws -> String? {
        try tx.query("SELECT user_id FROM event_ids WHERE id = \(eventId)").first?.decode(String.self)
    }

    static func feedbackLogSize(_ tx: PostgresTransaction) throws -> Int64 {
        try tx.query("SELECT max(rowid) FROM feedback").first?.decode(Int64?.self) ?? 0
    }

    /// A pick by id alone (the index `picks_by_id`); `nil` when there is none.
    static func loadPick(_ tx: PostgresTransaction, id: String) throws -> PickRecord? {
        guard
            let row = try tx.query("SELECT user_id, at, bin_number, track_id, features, mask, ranking FROM picks WHERE id = \(id) LIMIT 1").first
        else { return nil }
        let (user, at, bin, track, features, mask, ranking) = try row.decode((String, Double, Int, String, ByteBuffer, ByteBuffer, ByteBuffer).self)
        let values = StoredForm.floats(Array(features.readableBytesView))
        guard values.count == FeatureLayout.dimension else {
            throw StoreError.corrupt(
                table: "picks", column: "features", row: 0, expected: "\(FeatureLayout.dimension) Float32 values of feature layout v\(FeatureLayout.version)")
        }
        guard let presence = StoredForm.mask(Array(mask.readableBytesView), count: values.count) else {
            throw StoreError.corrupt(
                table: "picks", column: "mask", row: 0, expected: "a presence mask of \(values.count) slots (one bit or one Float32 a slot)")
        }
        return PickRecord(
            pickId: id, user: user, at: Date(timeIntervalSince1970: at), binNumber: bin, trackId: track,
            features: FeatureVector(values: values, mask: presence), ranking: StoredForm.ranking(Array(ranking.readableBytesView)))
    }

    // MARK: - Loading a person

    static func loadCachedState(_ tx: PostgresTransaction, user: String, defaults: [Float]) throws -> CachedUserState? {
        guard let state = try loadState(tx, user: user, defaults: defaults) else { return nil }
        var cached = CachedUserState(state: state)
        if let last = try tx.query("SELECT applied_seq, at FROM feedback WHERE user_id = \(user) ORDER BY applied_seq DESC LIMIT 1").first {
            (cached.feedbackSeq, cached.lastEventAt) = try last.decode((Int64, Double?).self)
        }
        cached.settings = try settings(tx, user: user)
        cached.pending = try pendingEvents(tx, user: user)
        if let first = cached.pending.first {
            // The position before the pending events, as the SQLite store sets it.
            cached.feedbackSeq = first.seq - 1
            cached.lastEventAt = try tx.query("SELECT at FROM feedback WHERE user_id = \(user) AND applied_seq = \(first.seq - 1)")
                .first?.decode(Double.self)
        }
        return cached
    }

    /// The events of `user` their stored state does not include yet, in the order applied.
    static func pendingEvents(_ tx: PostgresTransaction, user: String) throws -> [PendingEvent] {
        let rows = try tx.query(
            """
            SELECT p.applied_seq, p.event, f.bin_number, f.switched_to
            FROM pending_events p LEFT JOIN feedback f ON f.user_id = p.user_id AND f.applied_seq = p.applied_seq
            WHERE p.user_id = \(user) AND p.applied_seq > (SELECT view_seq FROM users WHERE user_id = \(user)) ORDER BY p.applied_seq
            """)
        return try rows.map { row in
            let (seq, text, bin, switched) = try row.decode((Int64, String, Int?, Int?).self)
            return try StoredForm.pendingEvent(seq: seq, text: Array(text.utf8), bin: bin, switchedTo: switched, user: user)
        }
    }

    /// Everything the engine knows about a person; `nil` when there is no such person.
    static func loadState(_ tx: PostgresTransaction, user: String, defaults: [Float]) throws -> UserState? {
        guard
            let u = try tx.query(
                "SELECT pick_counter, next_bin_number, place_names, tag_names, merged_into FROM users WHERE user_id = \(user)"
            ).first
        else { return nil }
        let (pickCounter, nextBin, placeNames, tagNames, mergedText) = try u.decode((Int64, Int, String, String, String).self)
        let (vocabulary, mergedInto) = try StoredForm.userLists(row: 0, placeNames: placeNames, tagNames: tagNames, mergedInto: mergedText)
        let bins = try loadBins(tx, user: user)
        var weights = defaults
        if let w = try tx.query("SELECT layout_version, vector FROM weights WHERE user_id = \(user)").first {
            let (version, vector) = try w.decode((Int, ByteBuffer).self)
            guard version == FeatureLayout.version else {
                throw StoreError.layoutMismatch(table: "weights", found: version, expected: FeatureLayout.version)
            }
            weights = StoredForm.floats(Array(vector.readableBytesView))
        }
        let places = try tx.query("SELECT id, lat, lon, count, name FROM places WHERE user_id = \(user) ORDER BY rowid").map { row in
            let (id, lat, lon, count, name) = try row.decode((String, Double, Double, Int, String?).self)
            return LearnedPlace(id: id, lat: lat, lon: lon, count: count, name: name)
        }
        var session = SessionState()
        var recent: [String] = []
        if let s = try tx.query(
            """
            SELECT current_bin, dislike_streak, avoided, switched_to, last_at, recent_tracks, tracks, style, style_since
            FROM sessions WHERE user_id = \(user)
            """
        ).first {
            let (current, streak, avoided, switched, lastAt, recentText, tracks, style, since) =
                try s.decode((Int?, Int, String, Int?, Double?, String, String, Int64?, Double?).self)
            session.currentBin = current
            session.dislikeStreak = streak
            session.avoided = try StoredForm.avoided(avoided, user: user)
            session.switchedTo = switched
            session.lastAt = lastAt.map { Date(timeIntervalSince1970: $0) }
            recent = try StoredForm.trackList(recentText, user: user, column: "recent_tracks")
            session.tracks = try StoredForm.trackList(tracks, user: user, column: "tracks")
            session.styleRun = StoredForm.styleRun(style: style, since: since)
        }
        return UserState(
            user: user, bins: bins, weights: weights, places: PlaceBook(places: places), session: session,
            recentTracks: recent, pickCounter: pickCounter, nextBinNumber: nextBin,
            vocabulary: vocabulary, mergedInto: mergedInto)
    }

    /// A person's bins, by number.
    private static func loadBins(_ tx: PostgresTransaction, user: String) throws -> [Bin] {
        let rows = try tx.query(
            """
            SELECT id, number, label, layout_version, centroid, spread, observed, observations, prior, created_at, updated_at,
                songs::text, mean_time, transitions
            FROM bins WHERE user_id = \(user) ORDER BY number
            """)
        return try rows.map { r in
            let (id, number, label, version, centroid, spread, observed, observations, prior, created, updated, songs, meanTime, transitions) =
                try r.decode((Int64, Int, String, Int, ByteBuffer, ByteBuffer, ByteBuffer, Int, String?, Double, Double, String, Double?, String).self)
            guard version == FeatureLayout.version else {
                throw StoreError.layoutMismatch(table: "bins", found: version, expected: FeatureLayout.version)
            }
            return Bin(
                number: number, label: label,
                centroid: StoredForm.floats(Array(centroid.readableBytesView)), spread: StoredForm.floats(Array(spread.readableBytesView)),
                observed: StoredForm.floats(Array(observed.readableBytesView)), observations: observations,
                songs: try StoredForm.songs(songs, bin: id), prior: prior, createdAt: Date(timeIntervalSince1970: created),
                updatedAt: Date(timeIntervalSince1970: updated), meanTime: meanTime, transitions: try StoredForm.transitions(transitions, bin: id))
        }
    }
}

/// The rules' lookups inside a transaction of ``PostgresStore/updatePerson(_:defaults:_:)``.
struct PostgresReads: PersonReads {
    let tx: PostgresTransaction

    func feedbackOwner(eventId: String) throws -> String? { try PostgresStore.feedbackOwner(tx, eventId: eventId) }
    func pickRecord(id: String) throws -> PickRecord? { try PostgresStore.loadPick(tx, id: id) }
    func feedbackLogSize() throws -> Int64 { try PostgresStore.feedbackLogSize(tx) }
}
