import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import SoundtrackApp
import SoundtrackProviders
import SoundtrackServer
import SoundtrackStore
import UnixSignals

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the HTTP service (JSON API, API keys, Prometheus metrics) until SIGTERM or SIGINT.",
        discussion: """
            Options fall back to the environment: SOUNDTRACK_DB, SOUNDTRACK_HOST, SOUNDTRACK_PORT, SOUNDTRACK_RATE, SOUNDTRACK_BURST, \
            then to the configuration file's `server` section (--config, see docs/configuration.md). \
            On SIGTERM (or SIGINT) /readyz answers 503 for --shutdown-delay seconds while everything else still serves, \
            then the service stops accepting connections, gives the requests in flight up to --drain-timeout seconds, \
            commits every queued write and exits 0. Idle connections and request heads slower than --idle-timeout are \
            closed; a body slower than --body-timeout gets 408.
            """)

    @OptionGroup var store: StoreOptions
    @OptionGroup var engine: RankingOptions
    @Option(help: "The address to bind (default: $SOUNDTRACK_HOST, else 127.0.0.1).") var host: String?
    @Option(help: "The TCP port, 0 for any free one (default: $SOUNDTRACK_PORT, else 8080).") var port: Int?
    @Option(help: "Requests per second allowed to each user key (default: $SOUNDTRACK_RATE, else 50).") var rate: Double?
    @Option(help: "Burst allowed to each user key (default: $SOUNDTRACK_BURST, else twice the rate).") var burst: Double?
    @Option(help: "The largest request body in bytes (default: the configuration file's server.max_body_bytes, else 1 MiB).") var maxBodyBytes: Int?
    @Option(
        help:
            "How long picks may wait to be committed together when no feedback waits, in milliseconds (default 1000; a crash loses at most that much of the last picks, never acknowledged feedback)."
    )
    var pickCommitMs: Int?
    @Option(help: "About how many writes each transaction takes once a second of picks is due, each user's together; feedback waits at most for one of them (default 512).")
    var pickCommitChunk: Int?
    @Option(help: "SQLite's page cache of the write connection, in MiB (default 64; see docs/http-api.md).")
    var writeCacheMib: Int?
    @Option(
        help:
            "Nice value added to the writer and checkpoint threads, so that request threads run first when the cores are busy (default 0; 10 lowers the p99 below capacity by about 1 ms but lets the writer starve past it: see docs/http-api.md)."
    )
    var backgroundNice: Int32?
    @Option(
        help:
            "Seconds a connection may wait for a complete request part before it is closed: idle keep-alive connections and slow request heads (default: server.idle_timeout_s, else 30)."
    )
    var idleTimeout: Double?
    @Option(help: "Seconds a request body may take to arrive; slower gets 408 and the connection is closed (default: server.body_timeout_s, else 20).")
    var bodyTimeout: Double?
    @Option(help: "Seconds /readyz answers 503 after SIGTERM before the listener closes (default: server.shutdown_delay_s, else 1).")
    var shutdownDelay: Double?
    @Option(help: "Seconds the requests in flight get after the listener closes; then they are cut off (default: server.drain_timeout_s, else 10).")
    var drainTimeout: Double?
    @Option(
        help:
            "How often users' states are checkpointed, in milliseconds: feedback commits its events at once and the states it changed follow at the next checkpoint or with the user's next pick (default 5000; a state behind its events is brought up to date when next loaded, so a crash loses no acknowledged event: see docs/batch-and-replay.md)."
    )
    var viewCheckpointMs: Int?
    @Option(help: "Feedback events after which a checkpoint of the users' states runs before its interval is up (default 20000, at most 10000000).")
    var viewCheckpointEvents: Int?
    @Flag(help: "Commit without waiting for the disk (synchronous=NORMAL): faster, but a power loss may lose acknowledged feedback.")
    var noSync = false
    @Flag(
        help:
            "Fill missing weather and calendar sections of snapshots from the configured providers and imported events (see docs/providers.md); picks then carry an `enriched` list."
    )
    var enrich = false
    @Flag(
        name: .customLong("no-fit"),
        help: "Never learn the blend of the track ranker again in the background (by default: once 500 new queries came, or a day with 50; see soundtrack models).")
    var noFit = false
    @Option(help: "How often the service looks whether a refit of the blend is due, in seconds (default 60).")
    var blendRefitS: Double?

    func validate() throws {
        if let port, !(0...65535).contains(port) { throw ValidationError("--port must be in 0...65535, got \(port)") }
        if let rate, rate <= 0 { throw ValidationError("--rate must be positive") }
        if let maxBodyBytes, maxBodyBytes < 1024 { throw ValidationError("--max-body-bytes must be at least 1024") }
        if let backgroundNice, !(0...19).contains(backgroundNice) { throw ValidationError("--background-nice must be in 0...19, got \(backgroundNice)") }
        if let pickCommitMs, !(0...10_000).contains(pickCommitMs) { throw ValidationError("--pick-commit-ms must be in 0...10000") }
        if let writeCacheMib, !(2...4096).contains(writeCacheMib) { throw ValidationError("--write-cache-mib must be in 2...4096, got \(writeCacheMib)") }
        if let pickCommitChunk, !(1...1_000_000).contains(pickCommitChunk) { throw ValidationError("--pick-commit-chunk must be in 1...1000000, got \(pickCommitChunk)") }
        if let viewCheckpointMs, !(1...600_000).contains(viewCheckpointMs) {
            throw ValidationError("--view-checkpoint-ms must be in 1...600000, got \(viewCheckpointMs)")
        }
        if let blendRefitS, !(blendRefitS.isFinite && blendRefitS >= 0.01 && blendRefitS <= 86_400) {
            throw ValidationError("--blend-refit-s must be a number of seconds in 0.01...86400, got \(blendRefitS)")
        }
        if let viewCheckpointEvents, !(1...10_000_000).contains(viewCheckpointEvents) {
            throw ValidationError("--view-checkpoint-events must be in 1...10000000, got \(viewCheckpointEvents)")
        }
        for (name, value, zeroAllowed) in [
            ("--idle-timeout", idleTimeout, false), ("--body-timeout", bodyTimeout, false), ("--shutdown-delay", shutdownDelay, true),
            ("--drain-timeout", drainTimeout, false)
        ] {
            if let value, !(value.isFinite && value >= (zeroAllowed ? 0 : 0.001) && value <= 86_400) {
                throw ValidationError("\(name) must be a number of seconds in \(zeroAllowed ? "0" : "0.001")...86400, got \(value)")
            }
        }
    }

    func run() async throws {
        let env = ProcessInfo.processInfo.environment
        // Options, then the environment, then the configuration file's `server` section, then defaults.
        let fileConfig = try store.configuration()
        let file = fileConfig.server
        var config = ServerConfiguration()
        config.host = host ?? env["SOUNDTRACK_HOST"] ?? file.host ?? "127.0.0.1"
        let p = port ?? env["SOUNDTRACK_PORT"].map { Int($0) ?? -1 } ?? file.port ?? 8080
        guard (0...65535).contains(p) else {
            throw ValidationError("SOUNDTRACK_PORT must be a port number")
        }
        config.port = p
        let r = rate ?? env["SOUNDTRACK_RATE"].flatMap(Double.init) ?? file.rate ?? 50
        let b = burst ?? env["SOUNDTRACK_BURST"].flatMap(Double.init) ?? file.burst ?? 2 * r
        config.userRate = RateLimit(perSecond: r, burst: b)
        config.maxBodyBytes = maxBodyBytes ?? file.maxBodyBytes ?? (1 << 20)
        if let n = file.maxBatchEvents { config.maxBatchEvents = n }
        if let pickCommitMs { config.pickCommitDelay = .milliseconds(pickCommitMs) }
        if let pickCommitChunk { config.pickCommitChunk = pickCommitChunk }
        if let writeCacheMib { config.writeCacheKiB = writeCacheMib * 1024 }
        if let backgroundNice { config.backgroundNice = backgroundNice }
        if let viewCheckpointMs { config.viewCheckpointInterval = .milliseconds(viewCheckpointMs) }
        if let viewCheckpointEvents { config.viewCheckpointEvents = viewCheckpointEvents }
        if noFit { config.blendRefit = nil }
        if let blendRefitS { config.blendRefitInterval = .milliseconds(Int64((blendRefitS * 1000).rounded())) }
        func seconds(_ s: Double?, _ fallback: Duration) -> Duration { s.map { .milliseconds(Int64(($0 * 1000).rounded())) } ?? fallback }
        config.idleTimeout = seconds(idleTimeout ?? file.idleTimeout, config.idleTimeout)
        config.bodyTimeout = seconds(bodyTimeout ?? file.bodyTimeout, config.bodyTimeout)
        config.shutdownDelay = seconds(shutdownDelay ?? file.shutdownDelay, config.shutdownDelay)
        config.drainTimeout = seconds(drainTimeout ?? file.drainTimeout, config.drainTimeout)
        // One service, replay or learning batch at a time on a database (the service writes its
        // users' states at its checkpoints); then the states a killed service left behind their
        // feedback are brought up to date before anything is served.
        let lock = try WriterLock(databasePath: try store.path(), holder: "serve")
        defer { lock.release() }
        let service = try store.open(engine: engine.values, durable: !noSync, community: true, writesCommunity: true)
        try service.catchUp()
        let providers = ProviderSet(configuration: fileConfig, logger: Logger(label: "soundtrack.providers"))
        if enrich {
            config.enricher = ProviderImports.enricher(providers, store: service.store, lookaheadHours: fileConfig.calendar.lookaheadHours)
        }
        // Onboarding searches Spotify for a song outside the catalog when Spotify is configured.
        config.spotify = providers.spotify
        var serveLogger = Logger(label: "soundtrack.serve")
        serveLogger.logLevel = min(store.logLevel, .notice)
        let logger = serveLogger
        let api = try SoundtrackAPI(service: service, configuration: config, logger: logger)
        let path = try store.path()
        let host = config.host
        let app = api.buildApplication { port in
            logger.notice("soundtrack serve: listening on http://\(host):\(port), database \(path)")
        }
        // The shutdown in three phases: /readyz says 503 for the shutdown delay; then the group's
        // graceful shutdown closes the listener and lets requests finish; past the drain timeout
        // they are cancelled (the committer still commits what is queued before it stops).
        var group = ServiceGroupConfiguration(services: [app], logger: logger)
        group.maximumGracefulShutdownDuration = config.drainTimeout
        let services = ServiceGroup(configuration: group)
        let delay = config.shutdownDelay
        // The signals are trapped before the listener opens: a SIGTERM that came before the watcher
        // task first ran would otherwise take its default action and end the process undrained.
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        let watcher = Task {
            for await signal in signals {
                logger.notice("soundtrack serve: \(signal) received, draining: /readyz answers 503")
                api.beginDraining()
                try? await Task.sleep(for: delay)
                await services.triggerGracefulShutdown()
                return
            }
        }
        // Until the group ends (after a shutdown, or on an error); then stop waiting for signals.
        defer { watcher.cancel() }
        try await services.run()
        // Everything acknowledged is committed: the community model the events were counted in is
        // written, so that the next process reads it instead of counting them again.
        if try !service.checkpointCommunity() {
            logger.notice(
                "community model not written: feedback came from another process too, or someone was forgotten since start-up; the next process counts it again")
        }
    }
}
