import Foundation
import SoundtrackCatalog

/// The catalog in a store: the songs, in the order they were first added, and the similarity index
/// built from them (`catalog_index`), which every catalog write the store makes keeps current in
/// its own transaction. A sibling of ``PersonStore``; the SQLite ``Store`` conforms, and so does
/// the PostgreSQL store (`SoundtrackPostgres.PostgresStore`), checked by one conformance suite.
///
/// ```swift
/// let report = try store.importCatalog(data: csv, format: .csv)
/// let index = try store.loadCatalogIndex()   // the stored index, read back instead of built
/// ```
///
/// Every method is synchronous; each write is one transaction, except an import, which commits a
/// transaction a batch. A track's id is its key: a write of a known id changes that track and
/// keeps its place in the order.
public protocol CatalogStore: AnyObject, Sendable {
    /// Inserts or updates tracks by id, in one transaction, and stores the catalog's new index.
    /// - Returns: how many rows were written.
    @discardableResult
    func upsertTracks(_ tracks: [Track]) throws -> Int

    /// Adds the tracks whose ids are not in the catalog yet; existing tracks are left as they are.
    /// - Returns: how many were added.
    @discardableResult
    func insertMissingTracks(_ tracks: [Track]) throws -> Int

    /// Reads a catalog file (CSV or JSON Lines) and upserts its valid rows in batches of
    /// `batchSize`, a transaction each, the index stored with the last; invalid rows are reported
    /// with their line numbers and skipped. A failure keeps the batches already committed.
    /// - Parameter format: the file's format; `nil` decides by its name.
    func importCatalog(_ url: URL, format: CatalogFormat?, batchSize: Int) throws -> CatalogReadReport

    /// Reads a catalog held in memory and upserts it as ``importCatalog(_:format:batchSize:)`` does.
    func importCatalog(data: Data, format: CatalogFormat, batchSize: Int) throws -> CatalogReadReport

    /// Whether the catalog has any track.
    func hasTracks() throws -> Bool

    /// The number of tracks in the catalog.
    func trackCount() throws -> Int

    /// Tracks by id; unknown ids are left out.
    func tracks(ids: [String]) throws -> [String: Track]

    /// Every track, in the catalog's order.
    func allTracks() throws -> [Track]

    /// Every track with only what the similarity index needs (titles and artists empty), in the
    /// catalog's order.
    func indexTracks() throws -> [Track]

    /// The catalog's similarity index: the stored one when it is of this build's layout, else built
    /// from the songs (``indexTracks()``).
    func loadCatalogIndex() throws -> CatalogIndex

    /// Whether the catalog's index is stored (a change of the songs the store did not make drops it).
    func hasStoredCatalogIndex() throws -> Bool
}

extension CatalogStore {
    /// ``importCatalog(_:format:batchSize:)`` in batches of 50,000 rows.
    public func importCatalog(_ url: URL, format: CatalogFormat? = nil) throws -> CatalogReadReport {
        try importCatalog(url, format: format, batchSize: 50_000)
    }

    /// ``importCatalog(data:format:batchSize:)`` in batches of 50,000 rows.
    public func importCatalog(data: Data, format: CatalogFormat) throws -> CatalogReadReport {
        try importCatalog(data: data, format: format, batchSize: 50_000)
    }
}
