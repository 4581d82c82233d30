import Foundation
import PostgresNIO
import SoundtrackCatalog
import SoundtrackStore

/// The catalog's writes on PostgreSQL and its stored index (`catalog_index`), which every process
/// that ranks reads back instead of building it from every song (the SQLite store's form and
/// bytes: ``CatalogIndex/storedForm()``).
extension PostgresStore {
    /// What a catalog write does with the stored index.
    enum IndexUpkeep {
        /// Stores the new index when the write changed the songs or none is stored.
        case store
        /// Deletes the stored index (a batch of an import: the last one stores it).
        case drop
    }

    /// What a write of a track whose id is in the catalog does.
    enum TrackConflict {
        /// Overwrites the track's columns (its place in the order is kept).
        case update
        /// Leaves the track as it is.
        case keep
    }

    /// Runs a catalog write in one transaction holding the lock that keeps out every other writer
    /// of `songs` (readers go on), then keeps the stored index as `index` says.
    /// - Parameter write: returns its result and whether it changed the songs.
    func writeCatalog<R>(index: IndexUpkeep, _ write: (PostgresTransaction) throws -> (R, changed: Bool)) throws -> R {
        try transaction(locking: []) { tx in
            try tx.execute("LOCK TABLE songs IN SHARE ROW EXCLUSIVE MODE")
            let (result, changed) = try write(tx)
            switch index {
            case .drop:
                try tx.execute("DELETE FROM catalog_index")
            case .store:
                if try changed || !Self.storedCatalogIndexExists(tx) { try Self.storeCatalogIndex(tx) }
            }
            return result
        }
    }

    /// Inserts tracks by id in statements of up to ``tracksAStatement`` rows, in their order (a
    /// new id's `rowid` is its place in the catalog). Of an id repeated, the first place is kept and
    /// the last values written (``TrackConflict/update``), as the SQLite store's row-by-row upsert
    /// leaves them; or the first kept whole (``TrackConflict/keep``).
    /// - Returns: how many rows were inserted or updated.
    @discardableResult
    static func insertTracks(_ tx: PostgresTransaction, _ tracks: [Track], onConflict: TrackConflict) throws -> Int {
        var written = 0
        for start in stride(from: 0, to: tracks.count, by: tracksAStatement) {
            let chunk = Array(tracks[start..<min(tracks.count, start + tracksAStatement)])
            written += try insertChunk(tx, onConflict == .update ? lastValuesFirstPlaces(chunk) : chunk, onConflict: onConflict)
        }
        return written
    }

    /// Rows of one insert statement (16 parameters a row, under the protocol's 65,535).
    static let tracksAStatement = 1000

    private static func insertChunk(_ tx: PostgresTransaction, _ tracks: [Track], onConflict: TrackConflict) throws -> Int {
        guard !tracks.isEmpty else { return 0 }
        var binds = PostgresBindings(capacity: tracks.count * 16)
        var rows: [String] = []
        rows.reserveCapacity(tracks.count)
        for (k, t) in tracks.enumerated() {
            rows.append("(" + (1...16).map { "$\(k * 16 + $0)" }.joined(separator: ", ") + ")")
            let a = t.audio
            binds.append(t.id)
            binds.append(t.title)
            binds.append(t.artist)
            binds.append(t.album)
            binds.append(t.year.map(Int64.init))
            binds.append(StoredForm.genres(t.genres))
            binds.append(t.durationMs.map(Int64.init))
            binds.append(t.popularity.map(Int64.init))
            for v in [a.tempo, a.energy, a.valence, a.danceability, a.acousticness, a.instrumentalness, a.speechiness, a.loudness] { binds.append(v) }
        }
        let conflict =
            switch onConflict {
            case .keep: "DO NOTHING"
            case .update:
                """
                DO UPDATE SET title = excluded.title, artist = excluded.artist, album = excluded.album,
                    year = excluded.year, genres = excluded.genres, duration_ms = excluded.duration_ms,
                    popularity = excluded.popularity, tempo = excluded.tempo, energy = excluded.energy,
                    valence = excluded.valence, danceability = excluded.danceability, acousticness = excluded.acousticness,
                    instrumentalness = excluded.instrumentalness, speechiness = excluded.speechiness, loudness = excluded.loudness
                """
            }
        let sql = """
            INSERT INTO songs (id, title, artist, album, year, genres, duration_ms, popularity, tempo, energy, valence,
                               danceability, acousticness, instrumentalness, speechiness, loudness)
            VALUES \(rows.joined(separator: ", "))
            ON CONFLICT (id) \(conflict)
            """
        return try tx.execute(PostgresQuery(unsafeSQL: sql, binds: binds))
    }

    /// Tracks with each id once, at its first place with its last values (one statement may not
    /// update a row twice).
    static func lastValuesFirstPlaces(_ tracks: [Track]) -> [Track] {
        var place: [String: Int] = [:]
        var out: [Track] = []
        out.reserveCapacity(tracks.count)
        for t in tracks {
            if let i = place[t.id] {
                out[i] = t
            } else {
                place[t.id] = out.count
                out.append(t)
            }
        }
        return out
    }

    // MARK: - The stored index

    /// The catalog's index: the stored one when it is of this build's layout, else built from the
    /// songs, read in one snapshot. Not kept by the store: another process may change the catalog.
    public func loadCatalogIndex() throws -> CatalogIndex {
        try transaction(locking: [], readOnly: true) { tx in
            if let row = try tx.query("SELECT format, data FROM catalog_index WHERE id = 1").first {
                let (format, data) = try row.decode((Int64, ByteBuffer).self)
                if format == Int64(CatalogIndex.storedFormVersion), let index = try? CatalogIndex(storedForm: Array(data.readableBytesView)) {
                    return index
                }
            }
            return CatalogIndex(tracks: try Self.indexTracks(tx))
        }
    }

    /// Whether the catalog's index is stored.
    public func hasStoredCatalogIndex() throws -> Bool {
        try transaction(locking: [], readOnly: true) { tx in try Self.storedCatalogIndexExists(tx) }
    }

    static func storedCatalogIndexExists(_ tx: PostgresTransaction) throws -> Bool {
        try tx.query("SELECT EXISTS (SELECT 1 FROM catalog_index)").first?.decode(Bool.self) ?? false
    }

    /// Builds the index from the songs and stores it, in `tx`.
    static func storeCatalogIndex(_ tx: PostgresTransaction) throws {
        let index = CatalogIndex(tracks: try indexTracks(tx))
        try tx.execute(
            """
            INSERT INTO catalog_index (id, format, data) VALUES (1, \(Int64(CatalogIndex.storedFormVersion)), \(bytes(index.storedForm())))
            ON CONFLICT (id) DO UPDATE SET format = excluded.format, data = excluded.data
            """)
    }
}
