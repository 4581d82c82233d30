import Foundation
import SoundtrackCatalog
import SoundtrackContext

/// Paths of the repository's committed files, relative to this source file.
enum Repo {
    /// The repository root (symlinks resolved, so this also works from a scratch package that links the sources).
    static let root: URL = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func url(_ relative: String) -> URL { root.appendingPathComponent(relative) }

    static let fullCatalog = url("datasets/musicoset/catalog.csv")
    static let smallCatalog = url("datasets/catalog-small.csv")
}

/// Reads CSV or JSON Lines text through a reader, collecting tracks.
func readText(
    _ text: String, format: CatalogFormat = .csv, reader: CatalogReader = CatalogReader()
) throws -> (tracks: [Track], report: CatalogReadReport) {
    try reader.read(data: Data(text.utf8), format: format)
}

/// The full shipped catalog and its index, loaded once for all tests.
enum Shipped {
    static let tracks: [Track] = {
        (try? CatalogReader().read(contentsOf: Repo.fullCatalog).tracks) ?? []
    }()
    static let index = CatalogIndex(tracks: tracks)
}
