import SoundtrackCatalog

/// The SQLite store's catalog methods keep ``CatalogStore``'s semantics: the stored index is
/// written with every catalog change the store makes, and a change of `songs` it did not make
/// drops it (the schema's triggers).
extension Store: CatalogStore {
    /// The catalog's index: the stored one when it is of this build's layout, else built from the
    /// songs; kept by this process until the store changes the catalog.
    public func loadCatalogIndex() throws -> CatalogIndex {
        try catalogIndex.get { try database.read { try Self.loadCatalogIndex($0) } }
    }
}
