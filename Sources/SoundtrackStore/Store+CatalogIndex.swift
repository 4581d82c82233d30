import Foundation
import GRDB
import SoundtrackCatalog

/// The catalog's similarity index kept in the database (`catalog_index`, schema v17): written with
/// every catalog change the store makes, deleted by triggers on any other change of `songs`, and
/// read back by every process that ranks instead of being built from every song (issue 40).
extension Store {
    /// The catalog's index: its stored form when there is one of this build's layout, else built
    /// from the songs (``indexTracks(_:)``).
    static func loadCatalogIndex(_ db: Database) throws -> CatalogIndex {
        let r = try RawStatement(db, "SELECT format, data FROM catalog_index WHERE id = 1")
        // The bytes are SQLite's until the statement is reset: `r` lives until they are read.
        let stored = try withExtendedLifetime(r) { () throws -> CatalogIndex? in
            guard try r.step(), r.int(0) == Int(CatalogIndex.storedFormVersion) else { return nil }
            return try? CatalogIndex(storedForm: r.bytes(1))
        }
        return try stored ?? CatalogIndex(tracks: try indexTracks(db))
    }

    /// Builds the index from the songs and stores it, in `db`'s transaction.
    @discardableResult
    static func storeCatalogIndex(_ db: Database) throws -> CatalogIndex {
        let index = CatalogIndex(tracks: try indexTracks(db))
        try db.execute(
            sql: """
                INSERT INTO catalog_index (id, format, data) VALUES (1, ?, ?)
                ON CONFLICT(id) DO UPDATE SET format = excluded.format, data = excluded.data
                """, arguments: [Int(CatalogIndex.storedFormVersion), Data(index.storedForm())])
        return index
    }

    /// Whether the catalog's index is stored (a catalog change the store did not make deletes it).
    public func hasStoredCatalogIndex() throws -> Bool {
        try database.read { db in try Self.storedCatalogIndexExists(db) }
    }

    static func storedCatalogIndexExists(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM catalog_index)") ?? false
    }
}
