import SoundtrackCatalog

/// Where the engine finds tracks: metadata by id, and the similarity index for cold start and dry bins.
///
/// The index is only needed when a bin is created or runs dry, so a store can load it lazily.
public protocol CatalogSource: Sendable {
    /// Metadata for the given track ids; unknown ids are left out.
    func tracks(ids: [String]) -> [String: Track]
    /// Metadata for one track id, or `nil` when the catalog does not have it.
    func track(id: String) -> Track?
    /// The similarity index over the whole catalog.
    func index() -> CatalogIndex
}

extension CatalogSource {
    /// One track through ``tracks(ids:)``.
    public func track(id: String) -> Track? { tracks(ids: [id])[id] }
}

/// A ``CatalogSource`` over an index already in memory.
public struct IndexCatalog: CatalogSource {
    /// The index.
    public let catalogIndex: CatalogIndex

    /// Wraps an index.
    public init(_ index: CatalogIndex) { catalogIndex = index }

    public func tracks(ids: [String]) -> [String: Track] {
        var out: [String: Track] = [:]
        for id in ids {
            if let row = catalogIndex.row(of: id) { out[id] = catalogIndex.tracks[row] }
        }
        return out
    }

    public func track(id: String) -> Track? {
        catalogIndex.row(of: id).map { catalogIndex.tracks[$0] }
    }

    public func index() -> CatalogIndex { catalogIndex }
}
