import Foundation
import GRDB
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

extension Store {
    /// Loads many users' states with one statement per table (users, bins, bin songs, weights,
    /// places, sessions, feedback, settings) over the requested ids, reading columns by index
    /// through SQLite's C API (``RawStatement``): the same states as ``loadState(_:user:defaults:)``
    /// user by user, without nine queries per user and without GRDB's row decoding, which cost
    /// more than SQLite itself over millions of member rows. Unknown users are left out.
    static func loadStates(
        _ db: Database, users: [String], defaults: [Float]
    ) throws -> [String: CachedUserState] {
        guard !users.isEmpty else { return [:] }
        let ids = JSONValue.array(users.map { .string($0) }).serialized()
        let parts = try readUsers(db, ids, defaults: defaults)
        guard !parts.isEmpty else { return [:] }
        try readBins(db, ids, into: parts)
        try readWeights(db, ids, into: parts)
        try readPlaces(db, ids, into: parts)
        try readSessions(db, ids, into: parts)
        try readLastEvents(db, ids, into: parts)
        try readSettings(db, ids, into: parts)
        let behind = try usersWithPendingEvents(db, ids)
        var out = assemble(parts)
        try loadPending(db, into: &out, users: behind)
        return out
    }

    /// The requested ids as a JSON array bound to `?`, and the subquery that lists them.
    private static let wanted = "(SELECT value FROM json_each(?))"

    /// The users' rows: a partial state for each user found.
    private static func readUsers(_ db: Database, _ ids: String, defaults: [Float]) throws -> [String: PartialState] {
        var parts: [String: PartialState] = [:]
        let u = try RawStatement(
            db, "SELECT id, pick_counter, next_bin_number, rowid, place_names, tag_names, merged_into FROM users WHERE id IN \(wanted)", text: ids)
        while try u.step() {
            let p = PartialState(pickCounter: u.int64(1), nextBinNumber: u.int(2), weights: defaults)
            (p.vocabulary, p.mergedInto) = try Self.decodeUserLists(
                row: u.int64(3), placeNames: u.text(4), tagNames: u.text(5), mergedInto: u.text(6))
            parts[u.text(0)] = p
        }
        return parts
    }

    /// The users' bins.
    private static func readBins(_ db: Database, _ ids: String, into parts: [String: PartialState]) throws {
        // Bins in (user, number) order, each with its songs (``SongListCoding``). Track ids repeat
        // across users: one string per distinct id, shared, found by its hash.
        var interned: [UInt64: String] = [:]
        let b = try RawStatement(
            db,
            """
            SELECT user_id, id, number, label, layout_version, centroid, spread, observed, observations, prior, created_at, updated_at, songs,
                mean_time, transitions
            FROM bins WHERE user_id IN \(wanted) ORDER BY user_id, number
            """, text: ids)
        var lastUser = "", lastPart: PartialState?
        var songs: [BinSong] = []
        while try b.step() {
            let userBytes = b.bytes(0)
            if lastPart == nil || !Self.equal(lastUser, userBytes) {
                lastUser = b.text(0)
                lastPart = parts[lastUser]
            }
            guard let p = lastPart else { continue }
            let version = b.int(4)
            guard version == FeatureLayout.version else {
                throw StoreError.layoutMismatch(table: "bins", found: version, expected: FeatureLayout.version)
            }
            songs.removeAll(keepingCapacity: true)
            let ok = SongListCoding.decode(b.bytes(12)) { raw, likes, dislikes, rating in
                let key = StableHash.fnv1a(bytes: raw)
                let id: String
                if let known = interned[key], Self.equal(known, raw) {
                    id = known
                } else {
                    id = String(decoding: raw, as: UTF8.self)
                    if interned[key] == nil { interned[key] = id }
                }
                songs.append(BinSong(trackId: id, key: TrackKey(hash: key), likes: likes, dislikes: dislikes, rating: rating))
            }
            guard ok else { throw SongListCoding.unreadable(bin: b.int64(1)) }
            p.bins.append(
                Bin(
                    number: b.int(2), label: b.text(3),
                    centroid: b.floats(5), spread: b.floats(6), observed: b.floats(7),
                    observations: b.int(8), songs: songs, prior: b.optionalText(9),
                    createdAt: Date(timeIntervalSince1970: b.double(10)), updatedAt: Date(timeIntervalSince1970: b.double(11)),
                    meanTime: b.isNull(13) ? nil : b.double(13), transitions: try Self.decodeTransitions(b.text(14), bin: b.int64(1))))
        }
    }

    /// The users' feature weights.
    private static func readWeights(_ db: Database, _ ids: String, into parts: [String: PartialState]) throws {
        let w = try RawStatement(db, "SELECT user_id, layout_version, vector FROM weights WHERE user_id IN \(wanted)", text: ids)
        while try w.step() {
            guard let p = parts[w.text(0)] else { continue }
            let version = w.int(1)
            guard version == FeatureLayout.version else {
                throw StoreError.layoutMismatch(table: "weights", found: version, expected: FeatureLayout.version)
            }
            p.weights = w.floats(2)
        }
    }

    /// The users' learned places.
    private static func readPlaces(_ db: Database, _ ids: String, into parts: [String: PartialState]) throws {
        let pl = try RawStatement(db, "SELECT user_id, id, lat, lon, count, name FROM places WHERE user_id IN \(wanted) ORDER BY user_id, rowid", text: ids)
        while try pl.step() {
            parts[pl.text(0)]?.places.append(LearnedPlace(id: pl.text(1), lat: pl.double(2), lon: pl.double(3), count: pl.int(4), name: pl.optionalText(5)))
        }
    }

    /// The users' sessions.
    private static func readSessions(_ db: Database, _ ids: String, into parts: [String: PartialState]) throws {
        let se = try RawStatement(
            db,
            """
            SELECT user_id, current_bin, dislike_streak, avoided, switched_to, last_at, recent_tracks, tracks, style, style_since
            FROM sessions WHERE user_id IN \(wanted)
            """, text: ids)
        while try se.step() {
            let user = se.text(0)
            guard let p = parts[user] else { continue }
            p.session.currentBin = se.isNull(1) ? nil : se.int(1)
            p.session.dislikeStreak = se.int(2)
            p.session.avoided = try Self.decodeInts(se.text(3), user: user)
            p.session.switchedTo = se.isNull(4) ? nil : se.int(4)
            p.session.lastAt = se.isNull(5) ? nil : Date(timeIntervalSince1970: se.double(5))
            p.recent = try Self.decodeStrings(se.text(6), user: user)
            p.session.tracks = try Self.decodeStrings(se.text(7), user: user, column: "tracks")
            p.session.styleRun = Self.styleRun(style: se.isNull(8) ? nil : se.int64(8), since: se.isNull(9) ? nil : se.double(9))
        }
    }

    /// Each user's last applied event.
    private static func readLastEvents(_ db: Database, _ ids: String, into parts: [String: PartialState]) throws {
        // The sequence and time of each user's last applied event (SQLite takes the bare column `at`
        // from the row holding the maximum).
        let f = try RawStatement(
            db,
            """
            SELECT user_id, max(applied_seq), at FROM feedback WHERE user_id IN \(wanted) GROUP BY user_id
            """, text: ids)
        while try f.step() {
            guard let p = parts[f.text(0)] else { continue }
            p.seq = f.isNull(1) ? 0 : f.int64(1)
            p.lastAt = f.isNull(2) ? nil : f.double(2)
        }
    }

    /// The users' settings.
    private static func readSettings(_ db: Database, _ ids: String, into parts: [String: PartialState]) throws {
        let k = try RawStatement(
            db, "SELECT user_id, keep_raw_snapshots, location_services, volume_control, calendar_titles FROM user_settings WHERE user_id IN \(wanted)",
            text: ids)
        while try k.step() {
            parts[k.text(0)]?.keep = !k.isNull(1) && k.int(1) != 0
            parts[k.text(0)]?.location = k.isNull(2) || k.int(2) != 0
            parts[k.text(0)]?.volume = !k.isNull(3) && k.int(3) != 0
            parts[k.text(0)]?.titles = k.isNull(4) || k.int(4) != 0
        }

    }

    /// The users with events their stored states do not include yet.
    private static func usersWithPendingEvents(_ db: Database, _ ids: String) throws -> [String] {
        // Events the stored states do not include yet (``CachedUserState/pending``): rare, read
        // user by user (and decoded on several threads).
        var behind: [String] = []
        let pe = try RawStatement(
            db,
            """
            SELECT DISTINCT p.user_id FROM pending_events p JOIN users u ON u.id = p.user_id
            WHERE p.user_id IN \(wanted) AND p.applied_seq > u.view_seq
            """, text: ids)
        while try pe.step() { behind.append(pe.text(0)) }

        return behind
    }

    /// The cached states made of the partial ones.
    private static func assemble(_ parts: [String: PartialState]) -> [String: CachedUserState] {
        var out: [String: CachedUserState] = [:]
        out.reserveCapacity(parts.count)
        for (user, p) in parts {
            let state = UserState(
                user: user, bins: p.bins, weights: p.weights, places: PlaceBook(places: p.places), session: p.session,
                recentTracks: p.recent, pickCounter: p.pickCounter, nextBinNumber: p.nextBinNumber,
                vocabulary: p.vocabulary, mergedInto: p.mergedInto)
            out[user] = CachedUserState(state: state, feedbackSeq: p.seq, lastEventAt: p.lastAt, keepRawSnapshots: p.keep)
            out[user]!.locationServices = p.location
            out[user]!.volumeControl = p.volume
            out[user]!.calendarTitles = p.titles
        }
        return out
    }

    /// Whether a string's UTF-8 bytes are `bytes`.
    static func equal(_ s: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
        if let r = s.utf8.withContiguousStorageIfAvailable({ u in
            u.count == bytes.count && (u.isEmpty || memcmp(u.baseAddress!, bytes.baseAddress!, u.count) == 0)
        }) {
            return r
        }
        return s.utf8.elementsEqual(bytes)
    }
}

/// A user's state as ``Store/loadStates(_:users:defaults:)`` reads it, table by table.
private final class PartialState {
    var pickCounter: Int64
    var nextBinNumber: Int
    var bins: [Bin] = []
    var weights: [Float]
    var places: [LearnedPlace] = []
    var session = SessionState()
    var recent: [String] = []
    var seq: Int64 = 0
    var lastAt: Double?
    var keep = false
    var location = true
    var volume = false
    var titles = true
    var vocabulary = FeatureVocabulary()
    var mergedInto: [Int: Int] = [:]
    init(pickCounter: Int64, nextBinNumber: Int, weights: [Float]) {
        self.pickCounter = pickCounter
        self.nextBinNumber = nextBinNumber
        self.weights = weights
    }
}
