import ArgumentParser
import Foundation
import SoundtrackApp
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackRules
import SoundtrackStore

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmarks: picks (the default), batch, replay and start-up. Build with -c release for meaningful figures.",
        subcommands: [BenchPick.self, BenchBatch.self, BenchReplay.self, BenchStartup.self],
        defaultSubcommand: BenchPick.self)
}

struct BenchPick: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pick",
        abstract: "Benchmark picks: in-process (state in memory), through SQLite, and one-shot `soundtrack pick` processes.",
        discussion: "Build with -c release for meaningful figures. Uses a temporary database; --db only names the catalog source.")

    @OptionGroup var store: StoreOptions
    @OptionGroup var engine: RankingOptions
    @Option(help: "Bins of the synthetic user.") var bins: Int = 64
    @Option(help: "Timed picks per run.") var iterations: Int = 20000
    @Option(help: "Runs of each benchmark.") var runs: Int = 5
    @Option(help: "One-shot `soundtrack pick` processes to time (0 to skip).") var processes: Int = 30
    @Flag(help: "Only the in-process benchmark (for profiling the engine).") var inProcessOnly = false

    func validate() throws {
        guard bins >= 1, iterations >= 100, runs >= 1, processes >= 0 else {
            throw ValidationError("--bins ≥ 1, --iterations ≥ 100, --runs ≥ 1, --processes ≥ 0")
        }
    }

    func run() throws {
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("soundtrack-bench-\(getpid())")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: tmp) }
        let dbPath = tmp.appendingPathComponent("bench.sqlite").path
        var opts = store
        opts.db = dbPath
        let service = try opts.open(community: true)
        let t0 = DispatchTime.now().uptimeNanoseconds
        let tracks = try service.store.indexTracks()
        let t1 = DispatchTime.now().uptimeNanoseconds
        let index = CatalogIndex(tracks: tracks)
        let t2 = DispatchTime.now().uptimeNanoseconds
        let engine = service.engine.with(catalog: IndexCatalog(index))
        print(String(format: "catalog index: %.1f ms to read %d tracks (index columns) from SQLite, %.1f ms to build", Double(t1 - t0) / 1e6, tracks.count, Double(t2 - t1) / 1e6))
        let (state, queries) = PickBenchmark.syntheticUser(engine: engine, bins: bins, queries: 1000, seed: engine.seed)
        let songs = state.bins.reduce(0) { $0 + $1.songs.count }
        print("catalog: \(tracks.count) tracks; user: \(state.bins.count) bins, \(songs) bin songs; \(queries.count) distinct snapshots")
        print("")

        let inProcess = PickBenchmark.run(engine: engine, state: state, queries: queries, iterations: iterations, runs: runs)
        for l in PickBenchmark.table(title: "in-process pick (engine, state in memory)", inProcess) { print(l) }
        print("")
        if inProcessOnly { return }

        try service.store.saveWholeState(state, at: Date())
        var dbRuns: [LatencyStats] = []
        let dbIterations = max(100, iterations / 20)
        for _ in 0..<runs {
            var samples: [Double] = []
            for k in 0..<dbIterations {
                let t0 = DispatchTime.now().uptimeNanoseconds
                _ = try service.pick(queries[k % queries.count], learn: true)
                samples.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1000)
            }
            dbRuns.append(LatencyStats(samples))
        }
        for l in PickBenchmark.table(title: "pick through SQLite (load state, pick, durable commit)", unit: "µs", dbRuns) { print(l) }

        if processes > 0 {
            print("")
            let snapFile = tmp.appendingPathComponent("snapshot.json")
            try Data(queries[0].json().serialized().utf8).write(to: snapFile)
            let exe = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
            var procRuns: [LatencyStats] = []
            for _ in 0..<runs {
                let ms = try ProcessBenchmark.wallTimes(
                    executable: exe, arguments: ["pick", "--db", dbPath, "--seed", "\(engine.seed)", snapFile.path], runs: processes)
                procRuns.append(LatencyStats(ms))
            }
            for l in PickBenchmark.table(title: "one-shot `soundtrack pick` process (wall time)", unit: "ms", procRuns) { print(l) }
        }
    }
}
