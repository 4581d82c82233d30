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
    /// The bundled catalog: the first of `candidates` that exists, else the copy built into the
    /// executable; `nil` when there is neither.
    public static func bundledCatalog(candidates: [URL]) -> BundledCatalog? {
        if let url = candidates.first(where: { FileManager.default.fileExists(atPath: $0.path) }) { return .file(url) }
        var size = 0
        guard let bytes = soundtrack_bundled_catalog(&size), size > 0 else { return nil }
        return .embedded(Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes), count: size, deallocator: .none))
    }

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
    /// the bundled catalog (``bundledCatalog(candidates:)``); `nil` candidates: never load one. Users'
    /// states behind their feedback are brought up to date (``SoundtrackService/catchUp()``).
    /// - Parameters:
    ///   - emailKey: the key of the users' email hashes (`nil`: the store's default, the key file
    ///     beside the database).
    ///   - community: load the community model of all users' feedback (commands that rank tracks or
    ///     apply feedback).
    ///   - writesCommunity: write the model at once when it had events after the stored one (a
    ///     command that will write it as it goes: replay, serve, feedback); a model rebuilt from the
    ///     whole log is written whatever this says.
    ///   - statementCounter: counts what each statement of the store's connections costs (tests of
    ///     what a start-up reads; ``StatementCounter``).
    ///   - keepsCommunityRows: keep the community model's co-occurrence rows once read (false for a
    ///     one-shot pick, which reads each once).
    /// - Returns: the service, and where the catalog loaded now came from (``BundledCatalog/name``)
    ///   with the import report.
    public static func open(
        path: String, models: Models, seed: UInt64, catalogCandidates: [URL]?, durable: Bool = true,
        emailKey: EmailKeySource? = nil, community: Bool = false, writesCommunity: Bool = false, logger: Logger = Logger(label: "soundtrack"),
        statementCounter: StatementCounter? = nil, keepsCommunityRows: Bool = true
    ) throws -> (service: SoundtrackService, imported: (source: String, report: CatalogReadReport)?) {
        let store: Store
        do {
            store = try Store(path: path, durable: durable, emailKey: emailKey, statementCounter: statementCounter)
        } catch {
            throw AppError.cannotOpen(path: path, reason: "\(error)")
        }
        var imported: (source: String, report: CatalogReadReport)?
        if let catalogCandidates, try !store.hasTracks() {
            guard let bundled = bundledCatalog(candidates: catalogCandidates) else {
                throw AppError.noCatalog(searched: catalogCandidates.map(\.path))
            }
            imported = (bundled.name, try bundled.importInto(store))
        }
        // The blend the database learned from its own feedback, once it has one in use; else the models'.
        let ranker = try store.blendInUse()?.model ?? models.ranker
        var engine = Recommender(
            config: models.config, catalog: IndexCatalog(CatalogIndex(tracks: [])), priors: models.priors, seed: seed, ranker: ranker)
        if community {
            // The collaborative and popularity signals of the ranker: the stored model (its rows read
            // as picks need them) and the events after it, then kept current by every event this
            // process applies (docs/architecture.md, "The community model").
            let loaded = try store.loadCommunity(write: writesCommunity, keepRows: keepsCommunityRows)
            engine = engine.with(community: SharedCommunity(loaded.model, seq: loaded.seq, forgotten: loaded.forgotten))
        }
        logger.debug("opened database", metadata: ["path": "\(path)", "seed": "\(seed)"])
        let service = SoundtrackService(store: store, engine: engine, logger: logger)
        // States a service left behind their feedback (killed before its checkpoint) are brought up
        // to date first, so that this command and every SQL reader after it (the notebooks) see them
        // current (docs/batch-and-replay.md, "The record and the view"). Not while a service, replay
        // or batch holds the database: a running service writes its users' states itself.
        if try store.usersBehind().isEmpty == false, let lock = try? WriterLock(databasePath: path, holder: "catch-up") {
            try service.catchUp()
            lock.release()
        }
        return (service, imported)
    }
}

/// Where the bundled catalog comes from: a file beside the working directory or the checkout, or
/// the copy built into the executable (`Sources/CSupport/catalog.c`).
public enum BundledCatalog: Sendable {
    case file(URL)
    case embedded(Data)

    /// How messages name it: the file's path, or "the catalog built into the executable".
    public var name: String {
        switch self {
        case let .file(url): url.path
        case .embedded: "the catalog built into the executable"
        }
    }

    /// Every accepted track, and the report of the rows rejected.
    public func read() throws -> (tracks: [Track], report: CatalogReadReport) {
        switch self {
        case let .file(url): try CatalogReader().read(contentsOf: url)
        case let .embedded(data): try CatalogReader().read(data: data, format: .csv)
        }
    }

    /// Imports it into `store` (``Store/importCatalog(_:format:batchSize:)``).
    public func importInto(_ store: Store) throws -> CatalogReadReport {
        switch self {
        case let .file(url): try store.importCatalog(url)
        case let .embedded(data): try store.importCatalog(data: data, format: .csv)
        }
    }
}
