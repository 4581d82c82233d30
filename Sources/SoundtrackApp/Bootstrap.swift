import Foundation
import Logging
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackStore

/// The model files the engine runs on: thresholds, default weights and cold-start priors.
public struct Models: Sendable {
    /// Thresholds, rates and default weights.
    public var config: EngineConfig
    /// Cold-start priors.
    public var priors: ColdStartPriors
    /// The blend of the track ranker.
    public var ranker: RankerModel

    /// The models compiled into the binary (identical to the files in `Models/`).
    public static func bundled() throws -> Models {
        try Models(
            thresholds: Thresholds.decode(Data(BundledModels.thresholdsJSON.utf8)),
            weights: DefaultWeights.decode(Data(BundledModels.weightsJSON.utf8)),
            priors: ColdStartPriors.decode(Data(BundledModels.priorsJSON.utf8)),
            ranker: BundledModels.ranker())
    }

    /// The models in a directory (`thresholds.v2.json`, `weights.v2.json`, `priors.v1.json`,
    /// `ranker.v1.json`).
    /// - Throws: ``InputError`` naming the file and field of a malformed model.
    public static func load(directory: URL) throws -> Models {
        func file(_ name: String) throws -> Data {
            let url = directory.appendingPathComponent(name)
            do { return try Data(contentsOf: url) } catch {
                throw InputError(path: name, expected: "a readable model file in \(directory.path)", got: "no such file")
            }
        }
        func named<T>(_ name: String, _ body: (Data) throws(InputError) -> T) throws -> T {
            do { return try body(try file(name)) } catch let e as InputError {
                var e = e
                e.path = e.path.isEmpty ? name : "\(name): \(e.path)"
                throw e
            }
        }
        return try Models(
            thresholds: named("thresholds.v2.json") { d throws(InputError) in try Thresholds.decode(d) },
            weights: named("weights.v2.json") { d throws(InputError) in try DefaultWeights.decode(d) },
            priors: named("priors.v1.json") { d throws(InputError) in try ColdStartPriors.decode(d) },
            ranker: named("ranker.v1.json") { d throws(InputError) in try RankerModel.decode(d) })
    }

    init(thresholds: Thresholds, weights: [Float], priors: ColdStartPriors, ranker: RankerModel) {
        config = EngineConfig(thresholds: thresholds, weights: weights)
        self.priors = priors
        self.ranker = ranker
    }
}

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

    /// Opens the database at `path` (creating it), and loads the first catalog candidate that exists
    /// when the database has no tracks yet (`nil` candidates: never load one).
    /// - Returns: the service, and the import report when a catalog was loaded now.
    public static func open(
        path: String, models: Models, seed: UInt64, catalogCandidates: [URL]?, durable: Bool = true,
        logger: Logger = Logger(label: "soundtrack")
    ) throws -> (service: SoundtrackService, imported: (URL, CatalogReadReport)?) {
        let store: Store
        do {
            store = try Store(path: path, durable: durable)
        } catch {
            throw AppError.cannotOpen(path: path, reason: "\(error)")
        }
        var imported: (URL, CatalogReadReport)?
        if let catalogCandidates, try !store.hasTracks() {
            guard let url = catalogCandidates.first(where: { FileManager.default.fileExists(atPath: $0.path) }) else {
                throw AppError.noCatalog(searched: catalogCandidates.map(\.path))
            }
            imported = (url, try importCatalog(url, into: store))
        }
        let engine = Recommender(
            config: models.config, catalog: IndexCatalog(CatalogIndex(tracks: [])), priors: models.priors, seed: seed, ranker: models.ranker)
        logger.debug("opened database", metadata: ["path": "\(path)", "seed": "\(seed)"])
        return (SoundtrackService(store: store, engine: engine, logger: logger), imported)
    }

    /// Reads a catalog file (CSV or JSON Lines) and upserts its valid rows in batches of
    /// `batchSize` rows, one transaction each, with a large page cache; invalid rows are reported
    /// with their line numbers and skipped. A failure keeps the batches already committed.
    public static func importCatalog(_ url: URL, format: CatalogFormat? = nil, into store: Store, batchSize: Int = 50_000) throws -> CatalogReadReport {
        try store.withLargeCache {
            var batch: [Track] = []
            batch.reserveCapacity(batchSize)
            let report = try CatalogReader().read(contentsOf: url, format: format) { track in
                batch.append(track)
                if batch.count == batchSize {
                    try store.upsertTracks(batch)
                    batch.removeAll(keepingCapacity: true)
                }
            }
            if !batch.isEmpty { try store.upsertTracks(batch) }
            return report
        }
    }
}
