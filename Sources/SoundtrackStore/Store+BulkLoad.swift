import Foundation
import GRDB
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

extension Store {
    /// Loads many users' states with one statement per table (users, bins, bin songs, weights,
    /// places, sessions, feedback, settings) over the requested ids, reading columns by index
    /// through cursors: the same states as ``loadState(_:user:defaults:)`` user by user, without
    /// nine queries and a row copy per fetched row for each user. Unknown users are left out.
    static func loadStates(
        _ db: Database, users: [String], defaults: [Float]
    ) throws -> [String: (cached: CachedUserState, lastEventAt: Double?)] {
        final class Partial {
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
            init(pickCounter: Int64, nextBinNumber: Int, weights: [Float]) {
                self.pickCounter = pickCounter
                self.nextBinNumber = nextBinNumber
                self.weights = weights
            }
        }
        guard !users.isEmpty else { return [:] }
        let ids = JSONValue.array(users.map { .string($0) }).serialized()
        let wanted = "(SELECT value FROM json_each(?))"
        var parts: [String: Partial] = [:]
        parts.reserveCapacity(users.count)

        let u = try Row.fetchCursor(db, sql: "SELECT id, pick_counter, next_bin_number FROM users WHERE id IN \(wanted)", arguments: [ids])
        while let r = try u.next() {
            parts[r[0]] = Partial(pickCounter: r[1], nextBinNumber: r[2], weights: defaults)
        }
        guard !parts.isEmpty else { return [:] }

        // Bins in (user, number) order; the bin's row id → where it went.
        var binAt: [Int64: (Partial, Int)] = [:]
        let b = try Row.fetchCursor(db, sql: """
            SELECT user_id, id, number, label, layout_version, centroid, spread, observed, observations, prior, created_at, updated_at
            FROM bins WHERE user_id IN \(wanted) ORDER BY user_id, number
            """, arguments: [ids])
        while let r = try b.next() {
            guard let p = parts[r[0] as String] else { continue }
            let version: Int = r[4]
            guard version == FeatureLayout.version else {
                throw StoreError.layoutMismatch(table: "bins", found: version, expected: FeatureLayout.version)
            }
            binAt[r[1]] = (p, p.bins.count)
            p.bins.append(Bin(
                number: r[2], label: r[3],
                centroid: try VectorCoding.decode(r, 5), spread: try VectorCoding.decode(r, 6), observed: try VectorCoding.decode(r, 7),
                observations: r[8], songs: [], prior: r[9],
                createdAt: Date(timeIntervalSince1970: r[10]), updatedAt: Date(timeIntervalSince1970: r[11])))
        }
        if !binAt.isEmpty {
            // Members in (bin, position) order: rows come in (bin, song) order, sorted by position per bin.
            // Track ids repeat across users: one string per distinct id, shared.
            var interned: [String: String] = [:]
            var current: Int64?
            var rows: [(position: Int, song: BinSong)] = []
            func flush() {
                guard let bin = current, let (p, i) = binAt[bin] else { return }
                p.bins[i].songs = rows.sorted { ($0.position, $0.song.trackId) < ($1.position, $1.song.trackId) }.map(\.song)
            }
            let s = try Row.fetchCursor(db, sql: """
                SELECT bin_id, position, song_id, likes, dislikes FROM bin_songs
                WHERE bin_id IN (SELECT id FROM bins WHERE user_id IN \(wanted)) ORDER BY bin_id
                """, arguments: [ids])
            while let r = try s.next() {
                let bin: Int64 = r[0]
                if bin != current {
                    flush()
                    current = bin
                    rows.removeAll(keepingCapacity: true)
                }
                let raw: String = r[2]
                let id: String
                if let known = interned[raw] { id = known } else { interned[raw] = raw; id = raw }
                rows.append((r[1], BinSong(trackId: id, likes: r[3], dislikes: r[4])))
            }
            flush()
        }
        let w = try Row.fetchCursor(db, sql: "SELECT user_id, layout_version, vector FROM weights WHERE user_id IN \(wanted)", arguments: [ids])
        while let r = try w.next() {
            guard let p = parts[r[0] as String] else { continue }
            let version: Int = r[1]
            guard version == FeatureLayout.version else {
                throw StoreError.layoutMismatch(table: "weights", found: version, expected: FeatureLayout.version)
            }
            p.weights = try VectorCoding.decode(r, 2)
        }
        let pl = try Row.fetchCursor(db, sql: "SELECT user_id, id, lat, lon, count FROM places WHERE user_id IN \(wanted) ORDER BY user_id, rowid", arguments: [ids])
        while let r = try pl.next() {
            parts[r[0] as String]?.places.append(LearnedPlace(id: r[1], lat: r[2], lon: r[3], count: r[4]))
        }
        let se = try Row.fetchCursor(db, sql: """
            SELECT user_id, current_bin, dislike_streak, avoided, switched_to, last_at, recent_tracks
            FROM sessions WHERE user_id IN \(wanted)
            """, arguments: [ids])
        while let r = try se.next() {
            guard let p = parts[r[0] as String] else { continue }
            p.session.currentBin = r[1]
            p.session.dislikeStreak = r[2]
            p.session.avoided = Self.decodeInts(r[3])
            p.session.switchedTo = r[4]
            p.session.lastAt = (r[5] as Double?).map { Date(timeIntervalSince1970: $0) }
            p.recent = Self.decodeStrings(r[6])
        }
        let f = try Row.fetchCursor(db, sql: """
            SELECT user_id, max(applied_seq), max(at) FROM feedback WHERE user_id IN \(wanted) GROUP BY user_id
            """, arguments: [ids])
        while let r = try f.next() {
            guard let p = parts[r[0] as String] else { continue }
            p.seq = r[1] ?? 0
            p.lastAt = r[2]
        }
        let k = try Row.fetchCursor(db, sql: "SELECT user_id, keep_raw_snapshots FROM user_settings WHERE user_id IN \(wanted)", arguments: [ids])
        while let r = try k.next() {
            parts[r[0] as String]?.keep = (r[1] as Bool?) ?? false
        }

        var out: [String: (cached: CachedUserState, lastEventAt: Double?)] = [:]
        out.reserveCapacity(parts.count)
        for (user, p) in parts {
            let state = UserState(
                user: user, bins: p.bins, weights: p.weights, places: PlaceBook(places: p.places), session: p.session,
                recentTracks: p.recent, pickCounter: p.pickCounter, nextBinNumber: p.nextBinNumber)
            out[user] = (CachedUserState(state: state, feedbackSeq: p.seq, keepRawSnapshots: p.keep), p.lastAt)
        }
        return out
    }
}
