import Foundation
import GRDB
import SoundtrackCatalog
import SoundtrackContext

extension Store {
    /// Inserts or updates tracks by id, in one transaction.
    /// - Returns: how many rows were written.
    @discardableResult
    public func upsertTracks(_ tracks: [Track]) throws -> Int {
        try writeCatalog { db in try Self.upsertTracks(db, tracks) }
    }

    /// Runs a catalog write and, when it changed the songs (their triggers then dropped the stored
    /// index) or no index is stored yet, stores the catalog's new index in the same transaction
    /// (``storeCatalogIndex(_:)``), which this process then keeps.
    func writeCatalog<R>(_ write: (Database) throws -> R) throws -> R {
        let (result, index) = try database.write { db in
            let result = try write(db)
            return (result, try Self.storedCatalogIndexExists(db) ? nil : try Self.storeCatalogIndex(db))
        }
        if let index { catalogIndex.set(index) }
        return result
    }

    /// Adds the tracks whose ids are not in the catalog yet; existing tracks are left as they are.
    /// - Returns: how many were added.
    @discardableResult
    public func insertMissingTracks(_ tracks: [Track]) throws -> Int {
        try writeCatalog { db in
            var added = 0
            for t in tracks where try Bool.fetchOne(db, sql: "SELECT 1 FROM songs WHERE id = ?", arguments: [t.id]) != true {
                _ = try Self.upsertTracks(db, [t])
                added += 1
            }
            return added
        }
    }

    /// Reads a catalog file (CSV or JSON Lines) and upserts its valid rows in batches of
    /// `batchSize` rows, one transaction each, with a large page cache; invalid rows are reported
    /// with their line numbers and skipped. A failure keeps the batches already committed.
    /// - Parameter format: the file's format; `nil` decides by its name.
    public func importCatalog(_ url: URL, format: CatalogFormat? = nil, batchSize: Int = 50_000) throws -> CatalogReadReport {
        let format = try format ?? CatalogReader.guessFormat(url)
        return try importCatalog(batchSize: batchSize) { try CatalogReader().read(contentsOf: url, format: format, onTrack: $0) }
    }

    /// Reads a catalog held in memory and upserts it as ``importCatalog(_:format:batchSize:)`` does.
    public func importCatalog(data: Data, format: CatalogFormat, batchSize: Int = 50_000) throws -> CatalogReadReport {
        try importCatalog(batchSize: batchSize) { try CatalogReader().read(data: data, format: format, onTrack: $0) }
    }

    /// The import loop: `read` hands every accepted track to its argument. The catalog's index is
    /// stored once, with the last batch (each batch's transaction would build it again).
    private func importCatalog(batchSize: Int, read: ((Track) throws -> Void) throws -> CatalogReadReport) throws -> CatalogReadReport {
        catalogIndex.clear()
        return try withLargeCache {
            var batch: [Track] = []
            batch.reserveCapacity(batchSize)
            let report = try read { track in
                batch.append(track)
                if batch.count == batchSize {
                    try database.write { db in _ = try Self.upsertTracks(db, batch) }
                    batch.removeAll(keepingCapacity: true)
                }
            }
            try writeCatalog { db in _ = try Self.upsertTracks(db, batch) }
            return report
        }
    }

    static func upsertTracks(_ db: Database, _ tracks: [Track]) throws -> Int {
        try upsertTracks(
            db, tracks,
            onConflict: """
                title = excluded.title, artist = excluded.artist, album = excluded.album,
                year = excluded.year, genres = excluded.genres, duration_ms = excluded.duration_ms,
                popularity = excluded.popularity, tempo = excluded.tempo, energy = excluded.energy,
                valence = excluded.valence, danceability = excluded.danceability, acousticness = excluded.acousticness,
                instrumentalness = excluded.instrumentalness, speechiness = excluded.speechiness, loudness = excluded.loudness
                """)
    }

    /// Inserts tracks, and on an existing id applies the `SET` list `onConflict` (which decides
    /// what a new row overwrites): the one insert loop of every catalog write.
    static func upsertTracks(_ db: Database, _ tracks: [Track], onConflict: String) throws -> Int {
        let stmt = try db.cachedStatement(
            sql: """
                INSERT INTO songs (id, title, artist, album, year, genres, duration_ms, popularity, tempo, energy, valence,
                                   danceability, acousticness, instrumentalness, speechiness, loudness)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET \(onConflict)
                """)
        for t in tracks {
            let a = t.audio
            try stmt.execute(arguments: [
                t.id, t.title, t.artist, t.album, t.year, t.genres.joined(separator: ";"), t.durationMs, t.popularity,
                a.tempo, a.energy, a.valence, a.danceability, a.acousticness, a.instrumentalness, a.speechiness, a.loudness
            ])
        }
        return tracks.count
    }

    /// Runs `body` with the writer connection's page cache raised to `cacheMiB` mebibytes, for bulk
    /// writes such as a catalog import or a replay: the B-tree pages of large tables (and their
    /// indexes) then stay in memory instead of being read back from the file for every batch.
    /// The write-ahead log is also checkpointed less often (every `checkpointPages` pages instead
    /// of SQLite's 1,000), so that pages written again and again in consecutive transactions are
    /// copied back to the database file once per checkpoint instead of after every few blocks
    /// (0: never by the writer, for a caller that runs them itself with a ``WALCheckpointer``);
    /// durability is unchanged (every commit still reaches the log on disk). The settings return to
    /// what they were before afterwards.
    public func withLargeCache<T>(cacheMiB: Int = 256, checkpointPages: Int = 1000, _ body: () throws -> T) throws -> T {
        let before = try database.writeWithoutTransaction { db in
            let saved = (
                cache: try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2000,
                checkpoint: try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") ?? 1000,
                secureDelete: try Int.fetchOne(db, sql: "PRAGMA secure_delete") ?? 0
            )
            try db.execute(sql: "PRAGMA cache_size = -\(max(2, cacheMiB) * 1024)")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(max(0, checkpointPages))")
            // Debian builds SQLite with SECURE_DELETE: every overwritten row would also be zeroed on its page.
            try db.execute(sql: "PRAGMA secure_delete = OFF")
            return saved
        }
        func restore() throws {
            try database.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA cache_size = \(before.cache)")
                try db.execute(sql: "PRAGMA wal_autocheckpoint = \(before.checkpoint)")
                try db.execute(sql: "PRAGMA secure_delete = \(before.secureDelete)")
            }
        }
        let result: T
        do {
            result = try body()
        } catch {
            // The body's failure is the one to report; a failed restore after it would only hide it.
            try? restore()
            throw error
        }
        try restore()
        return result
    }

    /// Whether the catalog has any track (cheaper than counting).
    public func hasTracks() throws -> Bool {
        try database.read { db in try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM songs)") ?? false }
    }

    /// The number of tracks in the catalog.
    public func trackCount() throws -> Int {
        try database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM songs") ?? 0 }
    }

    /// Tracks by id; unknown ids are left out.
    public func tracks(ids: [String]) throws -> [String: Track] {
        try database.read { db in try Self.tracks(db, ids: ids) }
    }

    static func tracks(_ db: Database, ids: [String]) throws -> [String: Track] {
        var out: [String: Track] = [:]
        let stmt = try db.cachedStatement(sql: "SELECT \(columns) FROM songs WHERE id = ?")
        for id in ids where out[id] == nil {
            if let row = try Row.fetchOne(stmt, arguments: [id]) { out[id] = track(row) }
        }
        return out
    }

    /// Every track, in insertion order.
    public func allTracks() throws -> [Track] {
        try database.read { db in try Self.allTracks(db) }
    }

    static func allTracks(_ db: Database) throws -> [Track] {
        try fetchTracks(db, columns: columns)
    }

    /// Every track with only what the similarity index needs (no titles), in insertion order.
    public func indexTracks() throws -> [Track] {
        try database.read { db in try Self.indexTracks(db) }
    }

    /// Every track with only what the similarity index needs (id, genres, popularity, audio features;
    /// titles empty), in insertion order: the catalog-loading hot path of bin creation and refills.
    static func indexTracks(_ db: Database) throws -> [Track] {
        // Through SQLite's C API (``RawStatement``), genres split on their bytes: every process
        // that ranks tracks loads the index once, and GRDB's row decoding cost as much as the rest
        // of a one-shot pick.
        var out: [Track] = []
        out.reserveCapacity(try Int.fetchOne(db, sql: "SELECT count(*) FROM songs") ?? 0)
        let r = try RawStatement(
            db,
            """
            SELECT id, genres, popularity, tempo, energy, valence, danceability, acousticness, instrumentalness, speechiness, loudness
            FROM songs ORDER BY rowid
            """)
        func number(_ i: Int32) -> Double? { r.isNull(i) ? nil : r.double(i) }
        while try r.step() {
            var genres: [String] = []
            let g = r.bytes(1)
            var start = 0
            for k in 0...g.count where k == g.count || g[k] == UInt8(ascii: ";") {
                if k > start { genres.append(String(decoding: UnsafeRawBufferPointer(rebasing: g[start..<k]), as: UTF8.self)) }
                start = k + 1
            }
            out.append(
                Track(
                    id: r.text(0), title: "", artist: "", genres: genres, popularity: r.isNull(2) ? nil : r.int(2),
                    audio: AudioFeatures(
                        tempo: number(3), energy: number(4), valence: number(5), danceability: number(6),
                        acousticness: number(7), instrumentalness: number(8), speechiness: number(9), loudness: number(10))))
        }
        return out
    }

    /// Tracks decoded by ``track(_:)`` from a column list in the order of ``columns``.
    private static func fetchTracks(_ db: Database, columns: String) throws -> [Track] {
        var out: [Track] = []
        out.reserveCapacity(try Int.fetchOne(db, sql: "SELECT count(*) FROM songs") ?? 0)
        let rows = try Row.fetchCursor(db, sql: "SELECT \(columns) FROM songs ORDER BY rowid")
        while let r = try rows.next() { out.append(track(r)) }
        return out
    }

    /// The columns of `songs` in the order ``track(_:)`` reads them by position.
    static let columns =
        "id, title, artist, album, year, genres, duration_ms, popularity, tempo, energy, valence, danceability, acousticness, instrumentalness, speechiness, loudness"

    /// A track from a row of ``columns`` (read by position: this is the catalog-loading hot path).
    static func track(_ r: Row) -> Track {
        let genres: String = r[5]
        return Track(
            id: r[0], title: r[1], artist: r[2], album: r[3], year: r[4],
            genres: genres.isEmpty ? [] : genres.split(separator: ";").map(String.init),
            durationMs: r[6], popularity: r[7],
            audio: AudioFeatures(
                tempo: r[8], energy: r[9], valence: r[10], danceability: r[11],
                acousticness: r[12], instrumentalness: r[13], speechiness: r[14], loudness: r[15]))
    }
}
