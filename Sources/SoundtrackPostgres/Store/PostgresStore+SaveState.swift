import Foundation
import PostgresNIO
import SoundtrackContext
import SoundtrackEngine
import SoundtrackStore

extension PostgresStore {
    /// Writes what the engine changed (``UserState/changes``) and the session, as the SQLite
    /// store's `saveState` does: the person's pending events before it are marked as included
    /// (`users.view_seq`), and deleted with `deleteCovered`.
    static func saveState(_ tx: PostgresTransaction, _ state: UserState, deleteCovered: Bool) throws {
        try markPendingIncluded(tx, user: state.user, deleteCovered: deleteCovered)
        try writeUserColumns(tx, state)
        try writeBins(tx, state)
        try writeWeightsAndPlaces(tx, state)
        try writeSession(tx, state)
    }

    private static func markPendingIncluded(_ tx: PostgresTransaction, user: String, deleteCovered: Bool) throws {
        guard let last = try tx.query("SELECT max(applied_seq) FROM pending_events WHERE user_id = \(user)").first?.decode(Int64?.self) else {
            return
        }
        try tx.execute("UPDATE users SET view_seq = \(last) WHERE user_id = \(user) AND view_seq < \(last)")
        if deleteCovered { try tx.execute("DELETE FROM pending_events WHERE user_id = \(user)") }
    }

    /// The counters, the vocabulary and the merges, when they changed.
    private static func writeUserColumns(_ tx: PostgresTransaction, _ state: UserState) throws {
        let user = state.user, changes = state.changes
        if changes.counters {
            try tx.execute(
                "UPDATE users SET pick_counter = \(Int64(state.pickCounter)), next_bin_number = \(Int64(state.nextBinNumber)) WHERE user_id = \(user)")
        }
        if changes.places || !changes.removedBins.isEmpty {
            try tx.execute(
                """
                UPDATE users SET place_names = \(text(StoredForm.strings(state.vocabulary.places))),
                    tag_names = \(text(StoredForm.strings(state.vocabulary.tags))), merged_into = \(text(StoredForm.pairs(state.mergedInto)))
                WHERE user_id = \(user)
                """)
        }
    }

    /// The rows of bins merged away, and the bins whose vectors or songs changed: a new bin
    /// whole, a stored one every column (its songs only when they changed too), or its songs alone.
    private static func writeBins(_ tx: PostgresTransaction, _ state: UserState) throws {
        let user = state.user, changes = state.changes
        for number in changes.removedBins.sorted() {
            try tx.execute("DELETE FROM bins WHERE user_id = \(user) AND number = \(Int64(number))")
        }
        guard !changes.bins.isEmpty || !changes.songs.isEmpty else { return }
        let stored = Set(try tx.query("SELECT number FROM bins WHERE user_id = \(user)").map { try $0.decode(Int.self) })
        var songsOnly = changes.songs
        for number in changes.bins.sorted() {
            guard let i = state.binIndex(number: number) else { continue }
            songsOnly.remove(number)
            let b = state.bins[i]
            let centroid = bytes(StoredForm.vector(b.centroid)), spread = bytes(StoredForm.vector(b.spread))
            let observed = bytes(StoredForm.vector(b.observed)), transitions = text(StoredForm.pairs(b.transitions))
            let songs = text(StoredForm.songs(b.songs))
            let (observations, n) = (Int64(b.observations), Int64(number))
            let (created, updated) = (b.createdAt.timeIntervalSince1970, b.updatedAt.timeIntervalSince1970)
            if !stored.contains(number) {
                try tx.execute(
                    """
                    INSERT INTO bins (user_id, number, label, layout_version, centroid, spread, observed, observations, prior, created_at,
                        updated_at, songs, mean_time, transitions)
                    VALUES (\(user), \(n), \(b.label), \(Int64(FeatureLayout.version)), \(centroid), \(spread), \(observed), \(observations),
                        \(b.prior), \(created), \(updated), \(songs)::json, \(b.meanTime), \(transitions))
                    """)
            } else if changes.songs.contains(number) {
                try tx.execute(
                    """
                    UPDATE bins SET label = \(b.label), centroid = \(centroid), spread = \(spread), observed = \(observed),
                        observations = \(observations), updated_at = \(updated), songs = \(songs)::json, mean_time = \(b.meanTime),
                        transitions = \(transitions), prior = \(b.prior), created_at = \(created)
                    WHERE user_id = \(user) AND number = \(n)
                    """)
            } else {
                try tx.execute(
                    """
                    UPDATE bins SET label = \(b.label), centroid = \(centroid), spread = \(spread), observed = \(observed),
                        observations = \(observations), updated_at = \(updated), mean_time = \(b.meanTime),
                        transitions = \(transitions), prior = \(b.prior), created_at = \(created)
                    WHERE user_id = \(user) AND number = \(n)
                    """)
            }
        }
        for number in songsOnly.sorted() {
            guard let i = state.binIndex(number: number), stored.contains(number) else { continue }
            try tx.execute(
                "UPDATE bins SET songs = \(text(StoredForm.songs(state.bins[i].songs)))::json WHERE user_id = \(user) AND number = \(Int64(number))")
        }
    }

    /// The weights and the learned places, when they changed.
    private static func writeWeightsAndPlaces(_ tx: PostgresTransaction, _ state: UserState) throws {
        let user = state.user, changes = state.changes
        if changes.weights {
            try tx.execute(
                """
                INSERT INTO weights (user_id, layout_version, vector) VALUES (\(user), \(Int64(FeatureLayout.version)), \(bytes(StoredForm.vector(state.weights))))
                ON CONFLICT (user_id) DO UPDATE SET layout_version = excluded.layout_version, vector = excluded.vector
                """)
        }
        if changes.places {
            if state.places.places.isEmpty { try tx.execute("DELETE FROM places WHERE user_id = \(user)") }
            for p in state.places.places {
                try tx.execute(
                    """
                    INSERT INTO places (user_id, id, lat, lon, count, name) VALUES (\(user), \(p.id), \(p.lat), \(p.lon), \(Int64(p.count)), \(p.name))
                    ON CONFLICT (user_id, id) DO UPDATE SET lat = excluded.lat, lon = excluded.lon, count = excluded.count, name = excluded.name
                    """)
            }
        }
    }

    /// The session (every state write).
    private static func writeSession(_ tx: PostgresTransaction, _ state: UserState) throws {
        let s = state.session
        try tx.execute(
            """
            INSERT INTO sessions (user_id, current_bin, dislike_streak, avoided, switched_to, last_at, recent_tracks, tracks, style, style_since)
            VALUES (\(state.user), \(s.currentBin.map(Int64.init)), \(Int64(s.dislikeStreak)), \(text(StoredForm.ints(s.avoided))),
                \(s.switchedTo.map(Int64.init)), \(s.lastAt?.timeIntervalSince1970), \(text(StoredForm.strings(state.recentTracks))),
                \(text(StoredForm.strings(s.tracks))), \(s.styleRun.map { Int64(bitPattern: $0.style) }), \(s.styleRun?.since.timeIntervalSince1970))
            ON CONFLICT (user_id) DO UPDATE SET current_bin = excluded.current_bin, dislike_streak = excluded.dislike_streak,
                avoided = excluded.avoided, switched_to = excluded.switched_to, last_at = excluded.last_at,
                recent_tracks = excluded.recent_tracks, tracks = excluded.tracks, style = excluded.style, style_since = excluded.style_since
            """)
    }
}
