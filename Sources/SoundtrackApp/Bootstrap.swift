import CSupport
import Foundation
import Logging
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackRules
import SoundtrackStore

/// Failures at start-up that are not bad input.
public enum AppError: Error, CustomStringConvertible, Sendable {
    /// The database has no tracks and no bundled catalog was found.
    case noCatalog(searched: [String])
    /// The database file could not be opened or migrated.
    case cannotOpen(path: String, reason: String)

    public var description: String {
        switch self {
        case let .noCatalog(searched):
            return "the database has no tracks and no bundled catalog was found (looked in: \(searched.joined(separator: ", "))); run `soundtrack catalog import FILE`"
        case let .cannotOpen(path, reason):
            return "cannot open the database \(path): \(reason)"
        }
    }
}

/// Opening the embedded default: a SQLite file created on first use and loaded with the bundled catalog.
public enum Bootstrap {
    /// The bundled catalog (`datasets/musicoset/catalog.csv` at build time) as built into the
    /// executable, or `nil` when the build did not embed it.
    public static func embeddedCatalog() -> Data? {
        var size = 0
        guard let bytes = soundtrack_bundled_catalog(&size), size > 0 else { return nil }
        return Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes), count: size, deallocator: .none)
    }

    /// How the bundled catalog of a new database is named in messages when it came from the executable.
    public static let embeddedCatalogName = "the catalog built into the executable"

    /// Where the bundled catalog is looked for, in order: the working directory's `datasets/`, then
    /// the checkout the executable was built in (`.build/<config>/soundtrack` → `../../datasets`).
    public static func catalogCandidates(executable: URL?, workingDirectory: URL) -> [URL] {
        var out = [workingDirectory.appendingPathComponent("datasets/musicoset/catalog.csv")]
        if let exe = executable?.resolvingSymlinksInPath() {
            var dir = exe.deletingLastPathComponent()
            for _ in 0..<4 {
                dir = dir.deletingLastPathComponent()
                out.append(dir.appendingPathComponent("datasets/musicoset/catalog.csv"))
            }
        }
        return out
    }

    /// Opens the database at `path` (creating it), and when the database has no tracks yet loads
    /// the first catalog candidate that exists, else the catalog built into the executable
    /// (``embeddedCatalog()``); `nil` candidates: never load one.
    /// - Returns: the service, and where the catalog loaded now came from (a path, or
    ///   ``embeddedCatalogName``) with the import report.
    public static func open(
        path: String, models: Models, seed: UInt64, catalogCandidates: [URL]?, durable: Bool = true,
        community: Bool = false, logger: Logger = Logger(label: "soundtrack")
    ) throws -> (service: SoundtrackService, imported: (source: String, report: CatalogReadReport)?) {
        let store: Store
        do {
            store = try Store(path: path, durable: durable)
        } catch {
            throw AppError.cannotOpen(path: path, reason: "\(error)")
        }
        var imported: (source: String, report: CatalogReadReport)?
        if let catalogCandidates, try !store.hasTracks() {
            if let url = catalogCandidates.first(where: { FileManager.default.fileExists(atPath: $0.path) }) {
                imported = (url.path, try store.importCatalog(url))
            } else if let data = embeddedCatalog() {
                imported = (embeddedCatalogName, try store.importCatalog(data: data, format: .csv))
            } else {
                throw AppError.noCatalog(searched: catalogCandidates.map(\.path))
            }
        }
        var engine = Recommender(
            config: models.config, catalog: IndexCatalog(CatalogIndex(tracks: [])), priors: models.priors, seed: seed, ranker: models.ranker)
        if community {
            // The collaborative and popularity signals of the ranker: rebuilt from the feedback log,
            // then kept current by every event this process applies.
            engine = engine.with(community: SharedCommunity(try store.rebuildCommunity()))
        }
        logger.debug("opened database", metadata: ["path": "\(path)", "seed": "\(seed)"])
        return (SoundtrackService(store: store, engine: engine, logger: logger), imported)
    }
}
