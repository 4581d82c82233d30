import Foundation
import PostgresNIO
import SoundtrackCatalog
import SoundtrackStore

/// The catalog on PostgreSQL (``CatalogStore``): `songs`, a reference table whose `rowid` is the
/// catalog's order, and its stored index (`catalog_index`). Every catalog write first locks
/// `songs` against other writers (readers go on), so the index it stores is built from every song
/// committed; SQLite's triggers that drop the index on a change of `songs` are statements of the
/// write here.
extension PostgresStore: CatalogStore {
    /// Inserts or updates tracks by id, in one transaction, storing the catalog's new index.
    @discardableResult
    public func upsertTracks(_ tracks: [Track]) throws -> Int {
        try writeCatalog(index: .store) { tx in
            try Self.insertTracks(tx, tracks, onConflict: .update)
            return (tracks.count, changed: !tracks.isEmpty)
        }
    }

    /// Adds the tracks whose ids are not in the catalog yet (the first of an id repeated);
    /// existing tracks are left as they are.
    @discardableResult
    public func insertMissingTracks(_ tracks: [Track]) throws -> Int {
        try writeCatalog(index: .store) { tx in
            let added = try Self.insertTracks(tx, tracks, onConflict: .keep)
            return (added, changed: added > 0)
        }
    }

    /// Reads a catalog file and upserts it in batches (``CatalogStore/importCatalog(_:format:batchSize:)``).
    public func importCatalog(_ url: URL, format: CatalogFormat? = nil, batchSize: Int = 50_000) throws -> CatalogReadReport {
        let format = try format ?? CatalogReader.guessFormat(url)
        return try importCatalog(batchSize: batchSize) { try CatalogReader().read(contentsOf: url, format: format, onTrack: $0) }
    }

    /// Reads a catalog held in memory and upserts it in batches (``CatalogStore/importCatalog(data:format:batchSize:)``).
    public func importCatalog(data: Data, format: CatalogFormat, batchSize: Int = 50_000) throws -> CatalogReadReport {
        try importCatalog(batchSize: batchSize) { try CatalogReader().read(data: data, format: format, onTrack: $0) }
    }

    /// The import loop: a transaction a full batch, which drops the stored index, and the last
    /// batch's transaction storing the new one.
    private func importCatalog(batchSize: Int, read: ((Track) throws -> Void) throws -> CatalogReadReport) throws -> CatalogReadReport {
        var batch: [Track] = []
        let size = max(1, batchSize)
        batch.reserveCapacity(min(size, 50_000))
        let report = try read { track in
            batch.append(track)
            if batch.count == size {
                try writeCatalog(index: .drop) { tx in
                    try Self.insertTracks(tx, batch, onConflict: .update)
                    return ((), changed: true)
                }
                batch.removeAll(keepingCapacity: true)
            }
        }
        try writeCatalog(index: .store) { tx in
            try Self.insertTracks(tx, batch, onConflict: .update)
            return ((), changed: !batch.isEmpty)
        }
        return report
    }

    /// Whether the catalog has any track.
    public func hasTracks() throws -> Bool {
        try transaction(locking: [], readOnly: true) { tx in try tx.query("SELECT EXISTS (SELECT 1 FROM songs)").first?.decode(Bool.self) ?? false }
    }

    /// The number of tracks in the catalog.
    public func trackCount() throws -> Int {
        try transaction(locking: [], readOnly: true) { tx in try tx.query("SELECT count(*) FROM songs").first?.decode(Int.self) ?? 0 }
    }

    /// Tracks by id; unknown ids are left out.
    public func tracks(ids: [String]) throws -> [String: Track] {
        guard !ids.isEmpty else { return [:] }
        return try transaction(locking: [], readOnly: true) { tx in
            let rows = try tx.query("SELECT \(unescaped: Self.trackColumns) FROM songs WHERE id = ANY(\(Array(Set(ids))))")
            var out: [String: Track] = [:]
            for row in rows {
                let track = try Self.track(row)
                out[track.id] = track
            }
            return out
        }
    }

    /// Every track, in the catalog's order.
    public func allTracks() throws -> [Track] {
        try transaction(locking: [], readOnly: true) { tx in
            try tx.query("SELECT \(unescaped: Self.trackColumns) FROM songs ORDER BY rowid").map(Self.track)
        }
    }

    /// Every track with only what the similarity index needs, in the catalog's order.
    public func indexTracks() throws -> [Track] {
        try transaction(locking: [], readOnly: true) { tx in try Self.indexTracks(tx) }
    }

    static func indexTracks(_ tx: PostgresTransaction) throws -> [Track] {
        try tx.query(
            """
            SELECT id, genres, popularity, tempo, energy, valence, danceability, acousticness, instrumentalness, speechiness, loudness
            FROM songs ORDER BY rowid
            """
        ).map { row in
            let r = row.makeRandomAccess()
            return Track(
                id: try r[0].decode(String.self), title: "", artist: "", genres: StoredForm.genres(try r[1].decode(String.self)),
                popularity: try r[2].decode(Int?.self), audio: try audio(r, from: 3))
        }
    }

    /// The columns of `songs` in the order ``track(_:)`` reads them.
    static let trackColumns =
        "id, title, artist, album, year, genres, duration_ms, popularity, tempo, energy, valence, danceability, acousticness, instrumentalness, speechiness, loudness"

    /// A track from a row of ``trackColumns``.
    static func track(_ row: PostgresRow) throws -> Track {
        let r = row.makeRandomAccess()
        return Track(
            id: try r[0].decode(String.self), title: try r[1].decode(String.self), artist: try r[2].decode(String.self),
            album: try r[3].decode(String?.self), year: try r[4].decode(Int?.self), genres: StoredForm.genres(try r[5].decode(String.self)),
            durationMs: try r[6].decode(Int?.self), popularity: try r[7].decode(Int?.self), audio: try audio(r, from: 8))
    }

    /// The eight audio features of a row, from column `first` on.
    static func audio(_ r: PostgresRandomAccessRow, from first: Int) throws -> AudioFeatures {
        func number(_ i: Int) throws -> Double? { try r[first + i].decode(Double?.self) }
        return AudioFeatures(
            tempo: try number(0), energy: try number(1), valence: try number(2), danceability: try number(3),
            acousticness: try number(4), instrumentalness: try number(5), speechiness: try number(6), loudness: try number(7))
    }
}
