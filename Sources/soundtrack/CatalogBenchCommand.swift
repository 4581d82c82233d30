import ArgumentParser
import Foundation
import SoundtrackApp
import SoundtrackCatalog
import SoundtrackStore

/// `soundtrack catalog synth`: writes a deterministic synthetic catalog (CSV of docs/formats.md).
struct CatalogSynthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "synth",
        abstract: "Write a deterministic synthetic catalog (CSV) for import benchmarks.",
        discussion: "Genres are drawn from the bundled catalog's vocabulary; one row in ten has no audio features.")

    @Option(help: "Data rows to write.") var rows: Int = 1_000_000
    @Option(help: "The seed (the same seed and row count give the same file).") var seed: UInt64 = 1
    @Option(help: "Output file, or - for standard output.") var out: String = "-"

    func validate() throws {
        guard rows >= 0 else { throw ValidationError("--rows must be ≥ 0, got \(rows)") }
    }

    func run() throws {
        let gen = SyntheticCatalog(seed: seed, genres: bundledGenres())
        if out == "-" {
            try gen.write(rows: rows) { try FileHandle.standardOutput.write(contentsOf: $0) }
        } else {
            try gen.write(rows: rows, to: URL(fileURLWithPath: out))
        }
    }
}

/// `soundtrack catalog bench`: catalog import rate through SQLite and similar-track query latency.
struct CatalogBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmark catalog import (a synthetic catalog into a new SQLite file) and similar-track queries.",
        discussion: "Build with -c release for meaningful figures. Works in a temporary directory.")

    @Option(help: "Rows of the synthetic catalog.") var rows: Int = 1_000_000
    @Option(help: "Runs of each benchmark.") var runs: Int = 3
    @Option(help: "Similar-track queries per run over the bundled catalog.") var queries: Int = 2000

    func validate() throws {
        guard rows >= 1, runs >= 1, queries >= 1 else { throw ValidationError("--rows, --runs and --queries must be ≥ 1") }
    }

    func run() throws {
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("soundtrack-catalog-bench-\(getpid())")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: tmp) }

        if let bundled = bundledCatalogURL() {
            var runsOut: [CatalogBenchmark.ImportRun] = []
            for _ in 0..<runs {
                runsOut.append(try CatalogBenchmark.timeImport(bundled, databasePath: tmp.appendingPathComponent("bundled.sqlite").path))
            }
            for l in CatalogBenchmark.importTable(title: "import of the bundled catalog (\(bundled.lastPathComponent)) into a new SQLite file", runsOut) { print(l) }
            print("")
            let index = CatalogIndex(tracks: try Store(path: tmp.appendingPathComponent("bundled.sqlite").path).indexTracks())
            let stats = (0..<runs).map { _ in LatencyStats(CatalogBenchmark.similarLatencies(index, queries: queries)) }
            for l in PickBenchmark.table(title: "similar-track query, k = 10, over \(index.count) tracks", unit: "µs", stats) { print(l) }
            print("")
        }

        let file = tmp.appendingPathComponent("synthetic.csv")
        let t0 = DispatchTime.now().uptimeNanoseconds
        try SyntheticCatalog(seed: 1, genres: bundledGenres()).write(rows: rows, to: file)
        let size = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
        print(
            String(
                format: "synthetic catalog: %d rows, %.0f MB, written in %.1f s", rows, Double(size) / 1e6,
                Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9))
        var synthRuns: [CatalogBenchmark.ImportRun] = []
        for _ in 0..<runs {
            synthRuns.append(try CatalogBenchmark.timeImport(file, databasePath: tmp.appendingPathComponent("synthetic.sqlite").path))
        }
        for l in CatalogBenchmark.importTable(title: "import of \(rows) synthetic rows into a new SQLite file", synthRuns) { print(l) }
    }
}

/// The genre vocabulary of the bundled catalog (empty when it is not found).
func bundledGenres() -> [String] {
    guard let (tracks, _) = Bootstrap.bundledCatalog(candidates: bundledCatalogCandidates()).flatMap({ try? $0.read() }) else { return [] }
    return Array(Set(tracks.flatMap(\.genres))).sorted()
}

/// The bundled catalog file, where the executable or the working directory can see it.
func bundledCatalogURL() -> URL? {
    bundledCatalogCandidates().first { FileManager.default.fileExists(atPath: $0.path) }
}

/// Where a bundled catalog file is looked for (``Bootstrap/catalogCandidates(executable:workingDirectory:)``
/// for this process); the executable holds one besides (``Bootstrap/bundledCatalog(candidates:)``).
func bundledCatalogCandidates() -> [URL] {
    let exe = URL(fileURLWithPath: CommandLine.arguments[0])
    return Bootstrap.catalogCandidates(
        executable: exe.path.contains("/") ? exe : Bundle.main.executableURL,
        workingDirectory: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
}
