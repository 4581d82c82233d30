import ArgumentParser
import Foundation
import Logging
import SoundtrackApp
import SoundtrackContext
import SoundtrackEngine
import SoundtrackProviders
import SoundtrackRules
import SoundtrackStore
import Synchronization

/// Options every command that opens the database shares.
struct StoreOptions: ParsableArguments {
    @Option(
        name: .long,
        help:
            "The SQLite database (default: $SOUNDTRACK_DB, else ./soundtrack.sqlite). Created and loaded with the bundled catalog on first use by the commands that add data (users add, users import, catalog import, replay, onboard, keys create, demo, serve); the others refuse one that does not exist."
    )
    var db: String?

    @Option(name: .long, help: "Log level on standard error: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .warning

    @Option(name: .long, help: "The configuration file (default: $SOUNDTRACK_CONFIG, else ./soundtrack.json when it exists; see docs/configuration.md).")
    var config: String?

    @Option(
        name: .long,
        help:
            "The key of the users' email hashes: a file of 64 or more hex digits, e.g. from `openssl rand -hex 32` (default: $SOUNDTRACK_EMAIL_KEY_FILE, else the configuration file's database.email_key_file, else <db>.email-key beside the database, created with mode 0600 when first needed)."
    )
    var emailKeyFile: String?

    /// The key file of the email hashes: `--email-key-file`, else `$SOUNDTRACK_EMAIL_KEY_FILE`, else
    /// the configuration file's `database.email_key_file`, else `nil` (the store's default, the file
    /// beside the database).
    /// - Throws: a configuration file that does not read.
    func emailKeyPath() throws -> String? {
        if let emailKeyFile { return emailKeyFile }
        if let env = ProcessInfo.processInfo.environment["SOUNDTRACK_EMAIL_KEY_FILE"], !env.isEmpty { return env }
        return try configuration().emailKeyFile
    }

    /// The database file: `--db`, else `$SOUNDTRACK_DB`, else the configuration file's `database.path`,
    /// else `./soundtrack.sqlite`.
    /// - Throws: a configuration file that does not read (it is not skipped silently).
    func path() throws -> String {
        if let db { return db }
        if let env = ProcessInfo.processInfo.environment["SOUNDTRACK_DB"] { return env }
        return try configuration().databasePath ?? "soundtrack.sqlite"
    }

    /// The configuration file's path: `--config`, else `$SOUNDTRACK_CONFIG`, else `./soundtrack.json` if it exists.
    var configPath: String? {
        if let config { return config }
        if let env = ProcessInfo.processInfo.environment["SOUNDTRACK_CONFIG"], !env.isEmpty { return env }
        return FileManager.default.fileExists(atPath: "soundtrack.json") ? "soundtrack.json" : nil
    }

    /// The configuration (defaults without a file) with the secrets of the environment.
    /// - Throws: ``InputError`` naming the file and the key path at fault.
    func configuration() throws -> SoundtrackConfiguration {
        try ConfigLoader.load(path: configPath)
    }

    /// The model files: `models` (`--models`), else the configuration file's `models_dir`, else the
    /// ones built in.
    func loadModels(_ models: String? = nil) throws -> Models {
        let modelsDir = try models ?? configuration().modelsDir
        return try modelsDir.map { try Models.load(directory: URL(fileURLWithPath: $0)) } ?? Models.bundled()
    }

    /// Opens the service, loading the bundled catalog into a new database (reported on stderr).
    /// - Parameter community: rebuild the community model of all users' feedback (for commands that
    ///   rank tracks: pick, batch, serve, bench).
    /// - Parameter writesCommunity: the command writes the community model as it goes (replay,
    ///   feedback, serve, demo), so it writes it at once when it had events after the stored one.
    /// - Parameter oneShot: one pick and the process ends: the community model's rows are read
    ///   once each and not kept.
    /// - Parameter existing: the command reads or changes what a database holds (a user, their
    ///   picks): a database that does not exist is refused (``InputError``, exit 2), instead of a new
    ///   one made and then found empty (a typo in `--db`).
    /// - Parameter engine: the engine's options, for a command that ranks or learns (``RankingOptions``);
    ///   the others open with the defaults.
    func open(
        engine: RankingOptions.Values = RankingOptions.Values(), durable: Bool = true, loadBundledCatalog: Bool = true,
        community: Bool = false, writesCommunity: Bool = false, existing: Bool = false, oneShot: Bool = false
    ) throws -> SoundtrackService {
        if existing {
            let path = try path()
            guard FileManager.default.fileExists(atPath: path) else {
                throw InputError(
                    path: "db", expected: "an existing database (a new one is made by `soundtrack users add`, `catalog import`, `replay --create-users` or `users import`)",
                    got: "'\(path)', which does not exist")
            }
        }
        var m = try loadModels(engine.models)
        if let explore = engine.explore { m.config.exploration = explore }
        let candidates = bundledCatalogCandidates()
        let level = logLevel
        LoggingSystem.bootstrapOnce { label in
            var h = LazyMetadataLogHandler(StreamLogHandler.standardError(label: label))
            h.logLevel = level
            return h
        }
        let path = try path()
        let (service, imported) = try Bootstrap.open(
            path: path, models: m, seed: engine.seed, catalogCandidates: loadBundledCatalog ? candidates : nil, durable: durable,
            emailKey: try emailKeyPath().map(EmailKeySource.file),
            community: community, writesCommunity: writesCommunity, logger: Logger(label: "soundtrack"), keepsCommunityRows: !oneShot)
        if let (source, report) = imported {
            stderr("created \(path): loaded \(report.accepted) tracks from \(source)\(report.rejectedCount > 0 ? " (\(report.rejectedCount) rows rejected)" : "")")
        }
        return service
    }
}

/// The options of the engine, declared by the commands that rank or learn (pick, feedback, batch,
/// replay, serve, onboard, import, demo, bench, models show and fit), not by those that only read
/// or change what is stored.
struct RankingOptions: ParsableArguments {
    @Option(name: .long, help: "The engine's random seed: the same seed and inputs give the same picks.")
    var seed: UInt64 = 42

    @Option(name: .long, help: "A directory with thresholds.v2.json, weights.v2.json, priors.v1.json and ranker.v1.json (default: the models built in, identical to Models/).")
    var models: String?

    @Option(
        name: .long,
        help:
            "The share of single picks that play one of the next best tracks instead of the best (0...1, default 0.15); 0 makes every pick the best-ranked track. Ranked lists (--top) are never shuffled."
    )
    var explore: Float?

    func validate() throws {
        if let explore, !(explore >= 0 && explore <= 1) { throw ValidationError("--explore must be in 0...1, got \(explore)") }
    }

    /// The options as plain values (what ``StoreOptions/open(engine:durable:loadBundledCatalog:community:writesCommunity:existing:)`` takes).
    struct Values {
        var seed: UInt64 = 42
        var models: String?
        var explore: Float?
    }

    var values: Values { Values(seed: seed, models: models, explore: explore) }
}

func stderr(_ s: String) {
    FileHandle.standardError.write(Data((s + "\n").utf8))
}

/// Reads a whole input: a file path, or `-` for standard input (opened and checked as
/// ``ChunkReader`` opens the inputs of `batch` and `replay`).
func readInput(_ path: String) throws -> Data {
    let reader = try ChunkReader(path)
    var out = Data()
    if let size = reader.size { out.reserveCapacity(size) }
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    while true {
        let n = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
        if n == 0 { return out }
        out.append(buffer, count: n)
    }
}

/// Splits JSON Lines input into (line number, bytes) records, skipping blank lines.
func jsonLines(_ data: Data) -> [(Int, Data)] {
    var out: [(Int, Data)] = []
    var line = 0
    var start = data.startIndex
    let nl = UInt8(ascii: "\n")
    while start < data.endIndex {
        line += 1
        let end = data[start...].firstIndex(of: nl) ?? data.endIndex
        let rec = data[start..<end]
        if rec.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) { out.append((line, Data(rec))) }
        start = end < data.endIndex ? data.index(after: end) : end
    }
    return out
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// `StreamLogHandler`'s output, with the logger's own metadata formatted only when a message is
/// logged. `StreamLogHandler` formats its metadata on every change, and the HTTP server changes it
/// on every request (Hummingbird gives each request's logger a request id), whether or not
/// anything is logged: a few percent of the service's CPU.
struct LazyMetadataLogHandler: LogHandler {
    private var inner: StreamLogHandler
    var metadata: Logger.Metadata = [:]

    init(_ inner: StreamLogHandler) {
        self.inner = inner
    }

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        if !metadata.isEmpty {
            // The message's own metadata wins over the logger's, as in StreamLogHandler.
            event.metadata = metadata.merging(event.metadata ?? [:]) { _, explicit in explicit }
        }
        inner.log(event: event)
    }
}

extension LoggingSystem {
    private static let once = Mutex(false)

    /// Bootstraps logging the first time only (LoggingSystem traps on a second bootstrap).
    static func bootstrapOnce(_ factory: @escaping @Sendable (String) -> any LogHandler) {
        let first = once.withLock { done in
            defer { done = true }
            return !done
        }
        if first { bootstrap(factory) }
    }
}

/// Reads the configuration file the executable was pointed at, with the environment's secrets.
enum ConfigLoader {
    static func load(path: String?) throws -> SoundtrackConfiguration {
        let env = ProcessInfo.processInfo.environment
        guard let path else {
            var c = SoundtrackConfiguration()
            c.secrets = .init(environment: env)
            return c
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw InputError(path: "", expected: "a readable configuration file", got: "'\(path)' (not found or unreadable)")
        }
        do {
            return try SoundtrackConfiguration.parse(data, environment: env)
        } catch {
            var e = error
            e.path = e.path.isEmpty ? path : "\(path): \(e.path)"
            throw e
        }
    }
}
