import Foundation
import GRDB
import GRDBSQLite
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

extension Store {
    /// Loads everything the engine knows about a user; `nil` when there is no such user.
    /// - Throws: ``StoreError`` for a row the engine cannot read, database errors.
    static func loadState(_ db: Database, user: String, defaults: [Float]) throws -> UserState? {
        guard
            let u = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT rowid, pick_counter, next_bin_number, place_names, tag_names, merged_into FROM users WHERE id = ?"),
                arguments: [user])
        else {
            return nil
        }
        let (vocabulary, mergedInto) = try Self.decodeUserLists(
            row: u["rowid"], placeNames: u["place_names"], tagNames: u["tag_names"], mergedInto: u["merged_into"])
        var bins: [Bin] = []
        let binRows = try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM bins WHERE user_id = ? ORDER BY number"), arguments: [user])
        for r in binRows {
            let version: Int = r["layout_version"]
            guard version == FeatureLayout.version else {
                throw StoreError.layoutMismatch(table: "bins", found: version, expected: FeatureLayout.version)
            }
            let text: String = r["songs"]
            bins.append(
                Bin(
                    number: r["number"], label: r["label"],
                    centroid: VectorCoding.decode(r["centroid"]), spread: VectorCoding.decode(r["spread"]),
                    observed: VectorCoding.decode(r["observed"]), observations: r["observations"],
                    songs: try Self.decodeSongs(text, bin: r["id"]),
                    prior: r["prior"], createdAt: Date(timeIntervalSince1970: r["created_at"]),
                    updatedAt: Date(timeIntervalSince1970: r["updated_at"]), meanTime: r["mean_time"],
                    transitions: try Self.decodeTransitions(r["transitions"], bin: r["id"])))
        }
        var weights = defaults
        if let w = try Row.fetchOne(db.cachedStatement(sql: "SELECT layout_version, vector FROM weights WHERE user_id = ?"), arguments: [user]) {
            let version: Int = w["layout_version"]
            guard version == FeatureLayout.version else {
                throw StoreError.layoutMismatch(table: "weights", found: version, expected: FeatureLayout.version)
            }
            weights = VectorCoding.decode(w["vector"])
        }
        let places = try Row.fetchAll(db.cachedStatement(sql: "SELECT id, lat, lon, count, name FROM places WHERE user_id = ? ORDER BY rowid"), arguments: [user])
            .map { LearnedPlace(id: $0["id"], lat: $0["lat"], lon: $0["lon"], count: $0["count"], name: $0["name"]) }
        var session = SessionState()
        var recent: [String] = []
        if let s = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM sessions WHERE user_id = ?"), arguments: [user]) {
            session.currentBin = s["current_bin"]
            session.dislikeStreak = s["dislike_streak"]
            session.avoided = try Self.decodeInts(s["avoided"], user: user)
            session.switchedTo = s["switched_to"]
            session.lastAt = (s["last_at"] as Double?).map { Date(timeIntervalSince1970: $0) }
            recent = try Self.decodeStrings(s["recent_tracks"], user: user)
            session.tracks = try Self.decodeStrings(s["tracks"], user: user, column: "tracks")
            session.styleRun = Self.styleRun(style: s["style"], since: s["style_since"])
        }
        return UserState(
            user: user, bins: bins, weights: weights, places: PlaceBook(places: places), session: session,
            recentTracks: recent, pickCounter: u["pick_counter"], nextBinNumber: u["next_bin_number"],
            vocabulary: vocabulary, mergedInto: mergedInto)
    }

    /// The vocabulary and the merges of a user from the text of their `users` columns.
    /// - Throws: ``StoreError/corrupt(table:column:row:expected:)`` for a column that does not read.
    static func decodeUserLists(
        row: Int64, placeNames: String, tagNames: String, mergedInto: String
    ) throws(StoreError) -> (FeatureVocabulary, [Int: Int]) {
        func strings(_ text: String, _ column: String, max: Int) throws(StoreError) -> [String] {
            guard case let .array(items)? = try? JSONParser.parse(text), items.count <= max else {
                throw .corrupt(table: "users", column: column, row: row, expected: "a JSON array of at most \(max) strings")
            }
            var out: [String] = []
            for item in items {
                guard case let .string(x) = item else {
                    throw .corrupt(table: "users", column: column, row: row, expected: "a JSON array of at most \(max) strings")
                }
                out.append(x)
            }
            return out
        }
        let places = try strings(placeNames, "place_names", max: FeatureLayout.learnedPlaceSlots)
        let tags = try strings(tagNames, "tag_names", max: FeatureLayout.tagSlots)
        guard let pairs = intList(mergedInto), pairs.count % 2 == 0 else {
            throw .corrupt(table: "users", column: "merged_into", row: row, expected: "a JSON array of bin numbers in pairs (merged, into)")
        }
        var merged: [Int: Int] = [:]
        for k in stride(from: 0, to: pairs.count, by: 2) { merged[pairs[k]] = pairs[k + 1] }
        return (FeatureVocabulary(places: places, tags: tags), merged)
    }

    /// A bin's session transitions from the text of its `transitions` column (other bin, count, …).
    /// - Throws: ``StoreError/corrupt(table:column:row:expected:)`` when it does not read.
    static func decodeTransitions(_ text: String, bin: Int64) throws(StoreError) -> [Int: Int] {
        guard let pairs = intList(text), pairs.count % 2 == 0 else {
            throw .corrupt(table: "bins", column: "transitions", row: bin, expected: "a JSON array of (bin number, count) pairs")
        }
        var out: [Int: Int] = [:]
        for k in stride(from: 0, to: pairs.count, by: 2) { out[pairs[k]] = pairs[k + 1] }
        return out
    }

    /// A JSON array of whole numbers; `nil` when the text is not one.
    static func intList(_ text: String) -> [Int]? {
        guard case let .array(items)? = try? JSONParser.parse(text) else { return nil }
        var out: [Int] = []
        out.reserveCapacity(items.count)
        for v in items {
            guard case let .number(n) = v, n == n.rounded(), abs(n) < 1e15 else { return nil }
            out.append(Int(n))
        }
        return out
    }

    /// A map of numbers as the flat JSON array `[key, value, …]`, keys in ascending order.
    static func encodePairs(_ map: [Int: Int]) -> [UInt8] {
        encodeInts(map.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] })
    }

    /// Writes what the engine changed (``UserState/changes``: bins, memberships, weights, places,
    /// the counters) and the session; clears the changes.
    ///
    /// The state includes every event of the user that waited for a state write
    /// (``UserWrite/pendingFeedback(_:event:)``): writes commit in the order they were staged, so
    /// the pending rows before this write are exactly the events staged before the state was taken.
    /// The user's view mark (`users.view_seq`) moves to the last of them, so they are no longer
    /// pending; with `deleteCovered` their rows are deleted here too, else a later
    /// ``prunePending(_:limit:)`` deletes them with others in the order they were written.
    static func saveState(_ db: Database, _ state: inout UserState, deleteCovered: Bool = true) throws {
        try markPendingIncluded(db, user: state.user, deleteCovered: deleteCovered)
        try writeCounters(db, state)
        try writeVocabulary(db, state)
        try deleteRemovedBins(db, state)
        try writeBins(db, state)
        try writeWeights(db, state)
        try writePlaces(db, state)
        try writeSession(db, state)
        state.changes = UserState.Changes()
    }

    /// Marks the user's pending events as included in the state written (`users.view_seq`), and
    /// deletes them when `deleteCovered`.
    private static func markPendingIncluded(_ db: Database, user: String, deleteCovered: Bool) throws {
        // (A probe of an empty range for every user without any.)
        let last = try RawStatement(db, cached: "SELECT max(applied_seq) FROM pending_events WHERE user_id = ?")
        try last.bind(1, user)
        _ = try last.step()
        let lastPending: Int64? = last.isNull(0) ? nil : last.int64(0)
        last.reset()
        if let lastPending {
            let mark = try RawStatement(db, cached: "UPDATE users SET view_seq = ?1 WHERE id = ?2 AND view_seq < ?1")
            try mark.bind(1, lastPending)
            try mark.bind(2, user)
            try mark.execute()
            if deleteCovered {
                let covered = try RawStatement(db, cached: "DELETE FROM pending_events WHERE user_id = ?")
                try covered.bind(1, user)
                try covered.execute()
            }
        }
    }

    /// The counters every pick changes.
    private static func writeCounters(_ db: Database, _ state: UserState) throws {
        let user = state.user
        // The rows every pick writes (users, sessions, picks) are bound through SQLite's C API
        // (``RawStatement``): the service's writer commits thousands of picks a second.
        if state.changes.counters {
            let stmt = try RawStatement(db, cached: "UPDATE users SET pick_counter = ?, next_bin_number = ? WHERE id = ?")
            try stmt.bind(1, state.pickCounter)
            try stmt.bind(2, state.nextBinNumber)
            try stmt.bind(3, user)
            try stmt.execute()
        }
    }

    /// The vocabulary (places and tags with a slot) and the merges, when places or bins changed.
    private static func writeVocabulary(_ db: Database, _ state: UserState) throws {
        let user = state.user, changes = state.changes
        if changes.places || !changes.removedBins.isEmpty {
            // The vocabulary changes with the places (a new place or tag gets a slot); the merges with the bins.
            let stmt = try RawStatement(db, cached: "UPDATE users SET place_names = ?, tag_names = ?, merged_into = ? WHERE id = ?")
            try stmt.bind(1, utf8: encodeStrings(state.vocabulary.places))
            try stmt.bind(2, utf8: encodeStrings(state.vocabulary.tags))
            try stmt.bind(3, utf8: encodePairs(state.mergedInto))
            try stmt.bind(4, user)
            try stmt.execute()
        }
    }

    /// The rows of bins merged or folded away.
    private static func deleteRemovedBins(_ db: Database, _ state: UserState) throws {
        let user = state.user, changes = state.changes
        if !changes.removedBins.isEmpty {
            let stmt = try RawStatement(db, cached: "DELETE FROM bins WHERE user_id = ? AND number = ?")
            for number in changes.removedBins.sorted() {
                try stmt.bind(1, user)
                try stmt.bind(2, number)
                try stmt.execute()
            }
        }
    }

    /// The bins whose vectors or songs changed.
    private static func writeBins(_ db: Database, _ state: UserState) throws {
        let user = state.user, changes = state.changes
        // The row ids of the user's bins (one index range read): bins are then written by row id,
        // without an index probe per row.
        var binIds: [Int: Int64] = [:]
        if !changes.bins.isEmpty || !changes.songs.isEmpty {
            let ids = try RawStatement(db, cached: "SELECT number, id FROM bins WHERE user_id = ?")
            try ids.bind(1, user)
            while try ids.step() { binIds[ids.int(0)] = ids.int64(1) }
        }
        // A bin's songs are part of its row (``SongListCoding``): a new bin is inserted whole; a
        // stored bin whose vectors changed gets every column, its songs only when they changed too
        // (every change to a bin's songs is in ``UserState/Changes/songs``: a served snapshot moves
        // the vectors alone, and encoding the songs was a tenth of the service's commits of picks);
        // one whose songs alone changed gets its songs.
        var songsOnly = changes.songs
        var songText: [UInt8] = []
        if !changes.bins.isEmpty {
            // Bound through SQLite's C API (``RawStatement``): replay writes thousands of bins per block.
            let update = try RawStatement(
                db,
                cached: """
                    UPDATE bins SET label = ?, centroid = ?, spread = ?, observed = ?, observations = ?, updated_at = ?, songs = ?,
                        mean_time = ?, transitions = ?, prior = ?, created_at = ?
                    WHERE id = ?
                    """)
            let updateKeepingSongs = try RawStatement(
                db,
                cached: """
                    UPDATE bins SET label = ?, centroid = ?, spread = ?, observed = ?, observations = ?, updated_at = ?,
                        mean_time = ?, transitions = ?, prior = ?, created_at = ?
                    WHERE id = ?
                    """)
            let insert = try RawStatement(
                db,
                cached: """
                    INSERT INTO bins (user_id, number, label, layout_version, centroid, spread, observed, observations, prior, created_at, updated_at, songs,
                        mean_time, transitions)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            for number in changes.bins.sorted() {
                guard let i = state.binIndex(number: number) else { continue }
                songsOnly.remove(number)
                let b = state.bins[i]
                if let id = binIds[number] {
                    let withSongs = changes.songs.contains(number)
                    let stmt = withSongs ? update : updateKeepingSongs
                    try stmt.bind(1, b.label)
                    try stmt.bind(2, floats: b.centroid)
                    try stmt.bind(3, floats: b.spread)
                    try stmt.bind(4, floats: b.observed)
                    try stmt.bind(5, b.observations)
                    try stmt.bind(6, b.updatedAt.timeIntervalSince1970)
                    var column: Int32 = 7
                    if withSongs {
                        SongListCoding.encode(b.songs, into: &songText)
                        try stmt.bind(column, utf8: songText)
                        column += 1
                    }
                    try stmt.bind(column, b.meanTime)
                    try stmt.bind(column + 1, utf8: encodePairs(b.transitions))
                    // A merge can give a bin the prior and creation time of the bin merged into it:
                    // the row holds the state's, however many of its changes it was written after.
                    try stmt.bind(column + 2, b.prior)
                    try stmt.bind(column + 3, b.createdAt.timeIntervalSince1970)
                    try stmt.bind(column + 4, id)
                    try stmt.execute()
                } else {
                    try insert.bind(1, user)
                    try insert.bind(2, b.number)
                    try insert.bind(3, b.label)
                    try insert.bind(4, FeatureLayout.version)
                    try insert.bind(5, floats: b.centroid)
                    try insert.bind(6, floats: b.spread)
                    try insert.bind(7, floats: b.observed)
                    try insert.bind(8, b.observations)
                    try insert.bind(9, b.prior)
                    try insert.bind(10, b.createdAt.timeIntervalSince1970)
                    try insert.bind(11, b.updatedAt.timeIntervalSince1970)
                    SongListCoding.encode(b.songs, into: &songText)
                    try insert.bind(12, utf8: songText)
                    try insert.bind(13, b.meanTime)
                    try insert.bind(14, utf8: encodePairs(b.transitions))
                    try insert.execute()
                    binIds[number] = Int64(sqlite3_last_insert_rowid(db.sqliteConnection))
                }
            }
        }
        if !songsOnly.isEmpty {
            let stmt = try RawStatement(db, cached: "UPDATE bins SET songs = ? WHERE id = ?")
            for number in songsOnly.sorted() {
                guard let i = state.binIndex(number: number), let id = binIds[number] else { continue }
                SongListCoding.encode(state.bins[i].songs, into: &songText)
                try stmt.bind(1, utf8: songText)
                try stmt.bind(2, id)
                try stmt.execute()
            }
        }
    }

    /// The feature weights, when they changed.
    private static func writeWeights(_ db: Database, _ state: UserState) throws {
        let user = state.user, changes = state.changes
        if changes.weights {
            try db.cachedStatement(
                sql: """
                    INSERT INTO weights (user_id, layout_version, vector) VALUES (?, ?, ?)
                    ON CONFLICT(user_id) DO UPDATE SET layout_version = excluded.layout_version, vector = excluded.vector
                    """
            ).execute(arguments: [user, FeatureLayout.version, VectorCoding.encode(state.weights)])
        }
    }

    /// The learned places, when they changed.
    private static func writePlaces(_ db: Database, _ state: UserState) throws {
        let user = state.user, changes = state.changes
        if changes.places {
            // Places are added and moved, and all removed when the person turns location services
            // off: the rows of places the state no longer has go, then an upsert of each.
            if state.places.places.isEmpty {
                try db.cachedStatement(sql: "DELETE FROM places WHERE user_id = ?").execute(arguments: [user])
            }
            let stmt = try db.cachedStatement(
                sql: """
                    INSERT INTO places (user_id, id, lat, lon, count, name) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT(user_id, id) DO UPDATE SET lat = excluded.lat, lon = excluded.lon, count = excluded.count, name = excluded.name
                    """)
            for p in state.places.places {
                try stmt.execute(arguments: [user, p.id, p.lat, p.lon, p.count, p.name])
            }
        }
    }

    /// The session (every write).
    private static func writeSession(_ db: Database, _ state: UserState) throws {
        let user = state.user
        let s = state.session
        let session = try RawStatement(
            db,
            cached: """
                INSERT INTO sessions (user_id, current_bin, dislike_streak, avoided, switched_to, last_at, recent_tracks, tracks, style, style_since)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(user_id) DO UPDATE SET current_bin = excluded.current_bin, dislike_streak = excluded.dislike_streak,
                    avoided = excluded.avoided, switched_to = excluded.switched_to, last_at = excluded.last_at,
                    recent_tracks = excluded.recent_tracks, tracks = excluded.tracks, style = excluded.style, style_since = excluded.style_since
                """)
        try session.bind(1, user)
        try session.bind(2, s.currentBin)
        try session.bind(3, s.dislikeStreak)
        try session.bind(4, utf8: encodeInts(s.avoided))
        try session.bind(5, s.switchedTo)
        try session.bind(6, s.lastAt?.timeIntervalSince1970)
        try session.bind(7, utf8: encodeStrings(state.recentTracks))
        try session.bind(8, utf8: encodeStrings(s.tracks))
        try session.bind(9, s.styleRun.map { Int64(bitPattern: $0.style) })
        try session.bind(10, s.styleRun?.since.timeIntervalSince1970)
        try session.execute()
    }

    /// A session's run of one style from its two columns (`nil` when either is NULL).
    static func styleRun(style: Int64?, since: Double?) -> StyleRun? {
        guard let style, let since else { return nil }
        return StyleRun(style: UInt64(bitPattern: style), since: Date(timeIntervalSince1970: since))
    }

    /// Inserts a pick row. The ranking is stored as a BLOB (``VectorCoding/encode(ranking:)``);
    /// rows of earlier versions hold it as JSON text, which ``loadPick(_:id:user:)`` still reads.
    static func insertPick(_ db: Database, _ r: PickRecord, seq: Int64) throws {
        let stmt = try RawStatement(
            db,
            cached: """
                INSERT INTO picks (id, user_id, seq, at, bin_number, track_id, layout_version, features, mask, ranking)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        try stmt.bind(1, r.pickId)
        try stmt.bind(2, r.user)
        try stmt.bind(3, seq)
        try stmt.bind(4, r.at.timeIntervalSince1970)
        try stmt.bind(5, r.binNumber)
        try stmt.bind(6, r.trackId)
        try stmt.bind(7, FeatureLayout.version)
        try stmt.bind(8, floats: r.features.values)
        try stmt.bind(9, blob: VectorCoding.encode(mask: r.features.mask))
        try stmt.bind(10, blob: VectorCoding.encode(ranking: r.ranking))
        try stmt.execute()
    }

    /// The statement ``insertFeedback(_:_:outcome:seq:keepSnapshot:)`` runs (looked up in the
    /// statement cache once per transaction, not once a row).
    static func feedbackInsert(_ db: Database) throws -> RawStatement {
        try RawStatement(
            db,
            cached: """
                INSERT INTO feedback (id, user_id, at, track_id, signal, played_ms, pick_id, bin_number, switched_to, snapshot, applied_seq, rating, context)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
    }

    /// Inserts a feedback row, with the statement of ``feedbackInsert(_:)``: what the event did
    /// (`outcome`), its `applied_seq`, the context attributes the community counted it in
    /// (`context`), and the event's snapshot when the user keeps raw snapshots.
    /// The one feedback INSERT of every write path.
    static func insertFeedback(_ stmt: RawStatement, _ e: FeedbackEvent, outcome: FeedbackOutcome, seq: Int64, keepSnapshot: Bool) throws {
        try stmt.bind(1, e.id)
        try stmt.bind(2, e.user)
        try stmt.bind(3, e.at.date.timeIntervalSince1970)
        try stmt.bind(4, e.track)
        try stmt.bind(5, e.signal.rawValue)
        try stmt.bind(6, e.playedMs)
        try stmt.bind(7, e.pickId)
        try stmt.bind(8, outcome.bin)
        try stmt.bind(9, outcome.switchedTo)
        try stmt.bind(10, keepSnapshot ? e.snapshot?.json().serialized() : nil)
        try stmt.bind(11, seq)
        try stmt.bind(12, e.rating)
        try stmt.bind(13, blob: CommunityCoding.encode(attributes: outcome.attributes))
        try stmt.execute()
    }

    /// Deletes up to `limit` rows of `pending_events` that their users' stored states include
    /// (at or below `users.view_seq`), oldest first: rows written one after the other share pages,
    /// so each page is rewritten once, where deleting them user by user rewrote it once per user.
    /// - Returns: the number of rows deleted.
    static func prunePending(_ db: Database, limit: Int) throws -> Int {
        let stmt = try RawStatement(
            db,
            cached: """
                DELETE FROM pending_events WHERE id IN (
                    SELECT p.id FROM pending_events p JOIN users u ON u.id = p.user_id
                    WHERE p.applied_seq <= u.view_seq ORDER BY p.id LIMIT ?)
                """)
        try stmt.bind(1, limit)
        try stmt.execute()
        return db.changesCount
    }

    /// Keeps an applied event whose effect on the user's state is not written yet, as it came
    /// (``UserWrite/pendingFeedback(_:event:)``).
    static func insertPending(_ db: Database, user: String, _ event: PendingEventText, seq: Int64) throws {
        let stmt = try RawStatement(db, cached: "INSERT INTO pending_events (user_id, applied_seq, event) VALUES (?, ?, ?)")
        try stmt.bind(1, user)
        try stmt.bind(2, seq)
        try stmt.bind(3, utf8: event.utf8)
        try stmt.execute()
    }

    /// The events of `user` its stored state does not include yet, in the order applied.
    /// - Throws: ``StoreError/corrupt(table:column:row:expected:)`` for an event that does not read.
    static func pendingEvents(_ db: Database, user: String) throws -> [PendingEvent] {
        try pendingRows(db, user: user).map { try $0.decode(user: user) }
    }

    /// A user's pending events as stored, not decoded yet (a bulk load decodes them on several threads).
    static func pendingRows(_ db: Database, user: String) throws -> [PendingRow] {
        let stmt = try RawStatement(
            db,
            cached: """
                SELECT p.applied_seq, p.event, f.bin_number, f.switched_to
                FROM pending_events p LEFT JOIN feedback f ON f.user_id = p.user_id AND f.applied_seq = p.applied_seq
                WHERE p.user_id = ?1 AND p.applied_seq > (SELECT view_seq FROM users WHERE id = ?1) ORDER BY p.applied_seq
                """)
        try stmt.bind(1, user)
        var out: [PendingRow] = []
        while try stmt.step() {
            out.append(
                PendingRow(
                    seq: stmt.int64(0), text: Array(stmt.textBytes(1)), bin: stmt.isNull(2) ? nil : stmt.int(2),
                    switchedTo: stmt.isNull(3) ? nil : stmt.int(3)))
        }
        return out
    }

    /// A row of `pending_events` with its feedback row's bin and switch.
    struct PendingRow: Sendable {
        let seq: Int64
        let text: [UInt8]
        let bin: Int?
        let switchedTo: Int?

        /// The event, read back as written (`FeedbackEvent(json: e.json()) == e`), whatever its size:
        /// by the decoder of the service and replay (the bytes straight into the event), which
        /// takes documents of up to 1 MiB, else by the general parser (a service may take larger
        /// bodies: `--max-body-bytes`).
        /// - Throws: ``StoreError/corrupt(table:column:row:expected:)`` for an event that does not
        ///   read, is another user's, or has no feedback row.
        func decode(user: String) throws -> PendingEvent {
            let event =
                text.count <= Snapshot.maxBytes
                ? text.withUnsafeBytes { try? FeedbackEvent.decode(bytes: $0) }
                : try? FeedbackEvent(json: JSONParser.parse(Data(text)))
            guard let event, event.user == user, let bin else {
                throw StoreError.corrupt(
                    table: "pending_events", column: "event", row: seq, expected: "a feedback event of user '\(user)' with its feedback row")
            }
            return PendingEvent(seq: seq, event: event, bin: bin, switchedTo: switchedTo)
        }
    }

    /// A committed pick by id, of whatever user; `nil` when there is none.
    /// - Throws: ``StoreError/corruptPick(id:)`` for a ranking that does not read,
    ///   ``StoreError/corrupt(table:column:row:expected:)`` for features or a mask of another
    ///   length than the layout's, database errors.
    static func loadPick(_ db: Database, id: String) throws -> PickRecord? {
        guard let r = try Row.fetchOne(db.cachedStatement(sql: "SELECT rowid, * FROM picks WHERE id = ?"), arguments: [id]) else {
            return nil
        }
        let values = VectorCoding.decode(r["features"] as Data)
        guard values.count == FeatureLayout.dimension else {
            throw StoreError.corrupt(
                table: "picks", column: "features", row: r["rowid"], expected: "\(FeatureLayout.dimension) Float32 values of feature layout v\(FeatureLayout.version)")
        }
        guard let mask = (r["mask"] as Data).withUnsafeBytes({ VectorCoding.decode(mask: $0, count: values.count) }) else {
            throw StoreError.corrupt(
                table: "picks", column: "mask", row: r["rowid"], expected: "a presence mask of \(values.count) slots (one bit or one Float32 a slot)")
        }
        var ranking: [RankedBin] = []
        switch (r["ranking"] as DatabaseValue).storage {
        case .blob(let data):
            ranking = data.withUnsafeBytes { VectorCoding.decodeRanking($0) }
        case .string(let text):
            // Written before rankings were stored as BLOBs: [[bin, score], …].
            guard case let .array(items)? = try? JSONParser.parse(text) else { throw StoreError.corruptPick(id: id) }
            for item in items {
                guard case let .array(pair) = item, pair.count == 2, case let .number(b) = pair[0], case let .number(s) = pair[1] else {
                    throw StoreError.corruptPick(id: id)
                }
                ranking.append(RankedBin(bin: Int(b), score: Float(s)))
            }
        default:
            throw StoreError.corruptPick(id: id)
        }
        return PickRecord(
            pickId: r["id"], user: r["user_id"], at: Date(timeIntervalSince1970: r["at"]), binNumber: r["bin_number"],
            trackId: r["track_id"],
            features: FeatureVector(values: values, mask: mask),
            ranking: ranking)
    }

    /// A JSON array of integers, as UTF-8 bytes.
    static func encodeInts(_ v: [Int]) -> [UInt8] {
        jsonArray(v, capacity: 2 + 4 * v.count) { JSONValue.writeNumber(Double($0), into: &$1) }
    }

    /// A JSON array of strings, as UTF-8 bytes.
    static func encodeStrings(_ v: [String]) -> [UInt8] {
        jsonArray(v, capacity: 2 + v.reduce(0) { $0 + $1.utf8.count + 3 }) { JSONValue.writeString($0, into: &$1) }
    }

    /// `[`, each element written by `write`, separated by commas, `]`.
    private static func jsonArray<T>(_ v: [T], capacity: Int, _ write: (T, inout [UInt8]) -> Void) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(capacity)
        out.append(UInt8(ascii: "["))
        for (k, x) in v.enumerated() {
            if k > 0 { out.append(UInt8(ascii: ",")) }
            write(x, &out)
        }
        out.append(UInt8(ascii: "]"))
        return out
    }

    /// The session's `avoided` bins from their JSON text.
    /// - Throws: ``StoreError/corruptSession(user:column:)`` when the text is not an array of integers.
    static func decodeInts(_ s: String, user: String) throws(StoreError) -> [Int] {
        guard let ints = intList(s) else { throw .corruptSession(user: user, column: "avoided") }
        return ints
    }

    /// A session's track list (`recent_tracks`, `tracks`) from its JSON text.
    /// - Throws: ``StoreError/corruptSession(user:column:)`` when the text is not an array of strings.
    static func decodeStrings(_ s: String, user: String, column: String = "recent_tracks") throws(StoreError) -> [String] {
        guard case let .array(items)? = try? JSONParser.parse(s) else { throw .corruptSession(user: user, column: column) }
        return try items.map { v throws(StoreError) in
            guard case let .string(x) = v else { throw .corruptSession(user: user, column: column) }
            return x
        }
    }
}

extension Store {
    /// A bin's songs from the text of its `songs` column.
    /// - Throws: ``StoreError/corrupt(table:column:row:expected:)`` when the text is not a song list.
    static func decodeSongs(_ text: String, bin: Int64) throws -> [BinSong] {
        var text = text
        var songs: [BinSong] = []
        let ok = text.withUTF8 { utf8 in
            SongListCoding.decode(UnsafeRawBufferPointer(utf8)) { id, likes, dislikes, rating in
                songs.append(BinSong(trackId: String(decoding: id, as: UTF8.self), likes: likes, dislikes: dislikes, rating: rating))
            }
        }
        guard ok else { throw SongListCoding.unreadable(bin: bin) }
        return songs
    }
}
