import ArgumentParser
import Foundation
import SoundtrackApp
import SoundtrackCatalog
import SoundtrackEngine
import SoundtrackRules
import SoundtrackStore

/// A temporary benchmark population: a database of many users with many bins, built once.
struct BenchSetup {
    let dir: URL
    let base: String
    let service: SoundtrackService
    let engine: Recommender

    init(store: StoreOptions, users: Int, bins: Int, name: String) throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("soundtrack-\(name)-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        base = dir.appendingPathComponent("base.sqlite").path
        var opts = store
        opts.db = base
        service = try opts.open(durable: false)
        engine = service.engine.with(catalog: IndexCatalog(CatalogIndex(tracks: try service.store.allTracks())))
        let t0 = DispatchTime.now().uptimeNanoseconds
        let held = try BenchPopulation.build(store: service.store, engine: engine, users: users, bins: bins, seed: engine.seed, at: Date())
        try service.store.checkpoint()
        let t = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
        let size = (try? FileManager.default.attributesOfItem(atPath: base)[.size] as? Int) ?? 0
        print(
            String(
                format: "population: %d users × %d contexts (%.1f bins each after the engine's cap) built in %.1f s (database %.0f MB)", users, bins, held, t, Double(size) / 1e6))
    }

    /// A fresh copy of the population's database, flushed to the disk before it is returned: the
    /// timed command's own `fsync`s should not also write back the copy's 100s of MB of dirty pages
    /// (a checkpoint at the end of a batch run otherwise spent 1 to 1.5 s doing that).
    func copy(_ name: String) throws -> String {
        let path = dir.appendingPathComponent(name).path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try FileManager.default.copyItem(atPath: base, toPath: path)
        try Self.flush(path)
        return path
    }

    /// Writes a benchmark's input file and flushes it to the disk (see ``copy(_:)``).
    static func writeInput(_ bytes: [UInt8], to url: URL) throws {
        try Data(bytes).write(to: url)
        try flush(url.path)
    }

    /// `fsync` of one file.
    static func flush(_ path: String) throws {
        guard let handle = FileHandle(forUpdatingAtPath: path) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        defer { try? handle.close() }
        try handle.synchronize()
    }

    func remove(keep: Bool = false) {
        if keep { print("kept \(dir.path)") } else { try? FileManager.default.removeItem(at: dir) }
    }

    static var executable: URL { Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0]) }

    /// Wall seconds of one run of the executable.
    static func time(_ args: [String]) throws -> Double {
        try ProcessBenchmark.wallTimes(executable: executable, arguments: args, runs: 1)[0] / 1000
    }
}

struct BenchBatch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Benchmark `soundtrack batch` end to end (file in, file out) over a synthetic population.",
        discussion:
            "Builds USERS users × BINS bins in a temporary database, writes SNAPSHOTS snapshots, then times the `batch` process, learning (on a fresh copy of the database each run) and --read-only."
    )

    @OptionGroup var store: StoreOptions
    @OptionGroup var engine: RankingOptions
    @Option(help: "Users of the population.") var users: Int = 10_000
    @Option(help: "Bins per user.") var bins: Int = 32
    @Option(help: "Snapshots in the input file.") var snapshots: Int = 1_000_000
    @Option(help: "Timed runs.") var runs: Int = 3
    @Option(help: "Worker threads of the timed command (default: the number of cores).") var workers: Int = ProcessInfo.processInfo.activeProcessorCount
    @Flag(help: .hidden) var keep = false

    func validate() throws {
        guard users >= 1, bins >= 1, snapshots >= 1, runs >= 1, workers >= 1 else {
            throw ValidationError("--users, --bins, --snapshots, --runs and --workers must be ≥ 1")
        }
    }

    func run() throws {
        let setup = try BenchSetup(store: store, users: users, bins: bins, name: "bench-batch")
        defer { setup.remove(keep: keep) }
        let input = setup.dir.appendingPathComponent("snapshots.jsonl")
        let bytes = BenchPopulation.snapshots(count: snapshots, users: users, bins: bins, seed: engine.seed)
        try BenchSetup.writeInput(bytes, to: input)
        print(String(format: "input: %d snapshots, %.0f MB; %d workers", snapshots, Double(bytes.count) / 1e6, workers))
        let out = setup.dir.appendingPathComponent("picks.jsonl").path
        print("")
        print("soundtrack batch, end to end (process start to exit; file in, file out)")
        print("  run    learn s  snapshots/s   read-only s  snapshots/s")
        for r in 1...runs {
            let db = try setup.copy("run.sqlite")
            let common = ["--db", db, "--seed", "\(engine.seed)", "--workers", "\(workers)", "--quiet", input.path, "-o", out]
            // Each run writes a new file: truncating the last run's 1.6 GB, still being written
            // back, would time the kernel's writeback instead of the batch.
            try? FileManager.default.removeItem(atPath: out)
            let learn = try BenchSetup.time(["batch"] + common)
            try? FileManager.default.removeItem(atPath: out)
            let readOnly = try BenchSetup.time(["batch", "--read-only"] + common)
            print(String(format: "  %-4d %9.2f %12.0f %13.2f %12.0f", r, learn, Double(snapshots) / learn, readOnly, Double(snapshots) / readOnly))
        }
    }
}

struct BenchReplay: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Benchmark `soundtrack replay` end to end into a file database with durable commits.",
        discussion:
            "Builds USERS users × BINS bins in a temporary database, writes EVENTS feedback events with embedded snapshots, then times the `replay` process on a fresh copy of the database each run."
    )

    @OptionGroup var store: StoreOptions
    @OptionGroup var engine: RankingOptions
    @Option(help: "Users of the population.") var users: Int = 10_000
    @Option(help: "Bins per user.") var bins: Int = 32
    @Option(help: "Events in the log.") var events: Int = 200_000
    @Option(help: "Timed runs.") var runs: Int = 3
    @Option(help: "Worker threads of the timed command (default: the number of cores).") var workers: Int = ProcessInfo.processInfo.activeProcessorCount
    @Flag(help: .hidden) var keep = false

    func validate() throws {
        guard users >= 1, bins >= 1, events >= 1, runs >= 1, workers >= 1 else {
            throw ValidationError("--users, --bins, --events, --runs and --workers must be ≥ 1")
        }
    }

    func run() throws {
        let setup = try BenchSetup(store: store, users: users, bins: bins, name: "bench-replay")
        defer { setup.remove(keep: keep) }
        let tracks = Array(try setup.service.store.allTracks().prefix(2000).map(\.id))
        let input = setup.dir.appendingPathComponent("events.jsonl")
        let bytes = BenchPopulation.events(count: events, users: users, bins: bins, tracks: tracks, seed: engine.seed)
        try BenchSetup.writeInput(bytes, to: input)
        print(String(format: "input: %d events, %.0f MB; %d workers", events, Double(bytes.count) / 1e6, workers))
        print("")
        print("soundtrack replay, end to end (process start to exit; synchronous=FULL commits)")
        print("  run     wall s     events/s   again (all duplicates) s")
        for r in 1...runs {
            let db = try setup.copy("run.sqlite")
            let args = ["replay", "--db", db, "--seed", "\(engine.seed)", "--workers", "\(workers)", "--quiet", input.path]
            let first = try BenchSetup.time(args)
            let again = try BenchSetup.time(args)
            print(String(format: "  %-4d %9.2f %12.0f %14.2f", r, first, Double(events) / first, again))
        }
    }
}
