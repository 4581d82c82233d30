import Foundation
import GRDB
import SoundtrackCatalog
import SoundtrackContext

/// One track of a user's library on a streaming service.
public struct LibraryEntry: Sendable, Equatable {
    /// Which list of the library: `saved` (liked songs), `top` (top tracks), `playlist` (a playlist the user created).
    public enum List: String, Sendable, CaseIterable { case saved, top, playlist }

    /// The catalog track id (`spotify:track:…`).
    public var trackID: String
    /// The list it is in.
    public var list: List
    /// Its position in that list (0 first; top tracks: 0 is the most played).
    public var rank: Int
    /// When the user added it, if known.
    public var addedAt: Date?

    /// Creates an entry.
    public init(trackID: String, list: List, rank: Int, addedAt: Date? = nil) {
        self.trackID = trackID
        self.list = list
        self.rank = rank
        self.addedAt = addedAt
    }
}

extension Store {
    /// Imports a user's library in one transaction: the tracks are upserted into the catalog keeping
    /// the audio features (and genres) already there, and the user's library rows of that service are
    /// replaced by `entries` (the library as it is now).
    ///
    /// - Returns: how many tracks were upserted and how many library rows written.
    /// - Throws: ``RuleError/unknownUser(_:)`` for an unknown user; a database error for an entry whose track is neither in `tracks` nor in the catalog.
    @discardableResult
    public func importLibrary(user: String, service: String = "spotify", tracks: [Track], entries: [LibraryEntry], at: Date) throws -> (tracks: Int, entries: Int) {
        try writeCatalog { db in
            guard try Self.userExists(db, user) else { throw RuleError.unknownUser(user) }
            let n = try Self.upsertTracksKeepingFeatures(db, tracks)
            try db.execute(sql: "DELETE FROM library_tracks WHERE user_id = ? AND service = ?", arguments: [user, service])
            let stmt = try db.cachedStatement(
                sql: """
                    INSERT INTO library_tracks (user_id, service, list, track_id, rank, added_at, imported_at) VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(user_id, service, list, track_id) DO NOTHING
                    """)
            var written = 0
            for e in entries {
                try stmt.execute(arguments: [user, service, e.list.rawValue, e.trackID, e.rank, e.addedAt?.timeIntervalSince1970, at.timeIntervalSince1970])
                written += db.changesCount
            }
            return (n, written)
        }
    }

    /// A user's library: entries in list order (saved, top, playlist), then rank.
    public func library(user: String, service: String = "spotify") throws -> [LibraryEntry] {
        try database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT track_id, list, rank, added_at FROM library_tracks WHERE user_id = ? AND service = ?
                    ORDER BY CASE list WHEN 'saved' THEN 0 WHEN 'top' THEN 1 ELSE 2 END, rank
                    """, arguments: [user, service]
            ).map { r in
                let list: String = r[1]
                let added: Double? = r[3]
                return LibraryEntry(trackID: r[0], list: LibraryEntry.List(rawValue: list) ?? .saved, rank: r[2], addedAt: added.map(Date.init(timeIntervalSince1970:)))
            }
        }
    }

    /// Upserts tracks like ``upsertTracks(_:)`` but never loses what a streaming service does not
    /// send: audio features, genres, album, year, duration and popularity already in the catalog are
    /// kept where the new row lacks them.
    @discardableResult
    public func upsertTracksKeepingFeatures(_ tracks: [Track]) throws -> Int {
        try writeCatalog { db in try Self.upsertTracksKeepingFeatures(db, tracks) }
    }

    static func upsertTracksKeepingFeatures(_ db: Database, _ tracks: [Track]) throws -> Int {
        try upsertTracks(
            db, tracks,
            onConflict: """
                title = excluded.title, artist = excluded.artist,
                album = coalesce(excluded.album, songs.album), year = coalesce(excluded.year, songs.year),
                genres = CASE WHEN excluded.genres = '' THEN songs.genres ELSE excluded.genres END,
                duration_ms = coalesce(excluded.duration_ms, songs.duration_ms),
                popularity = coalesce(excluded.popularity, songs.popularity),
                tempo = coalesce(excluded.tempo, songs.tempo), energy = coalesce(excluded.energy, songs.energy),
                valence = coalesce(excluded.valence, songs.valence), danceability = coalesce(excluded.danceability, songs.danceability),
                acousticness = coalesce(excluded.acousticness, songs.acousticness),
                instrumentalness = coalesce(excluded.instrumentalness, songs.instrumentalness),
                speechiness = coalesce(excluded.speechiness, songs.speechiness), loudness = coalesce(excluded.loudness, songs.loudness)
                """)
    }
}
