import ArgumentParser
import Foundation
import SoundtrackApp

struct BenchStartup: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "startup",
        abstract: "Benchmark start-up on databases that have grown: a one-shot `pick` (read-only and learning) and `serve` until /readyz answers.",
        discussion: """
            For each size, a database is made as a user's grows: `simulate` (28 days, about 390 events \
            a person) and `replay --create-users` of its log (0 events: a database with one user and \
            no feedback). Each run is a new process. Databases are kept in --dir and used again when \
            they exist there. Build with -c release for meaningful figures.
            """)

    @Option(help: "Feedback events of each database, comma-separated.") var events: String = "0,100000,1000000"
    @Option(help: "Timed runs of each measurement.") var runs: Int = 5
    @Option(help: "The seed of the simulated people.") var seed: UInt64 = 5
    @Option(help: "Where the databases are made and kept (default: a temporary directory, removed).") var dir: String?

    /// Events a simulated person makes in 28 days (389,514 for 1,000 people, seed 5).
    static let eventsPerPerson = 389.5

    func validate() throws {
        guard runs >= 1, !sizes.isEmpty, sizes.allSatisfy({ $0 >= 0 }) else {
            throw ValidationError("--events: sizes ≥ 0, comma-separated; --runs ≥ 1")
        }
    }

    var sizes: [Int] { events.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) } }

    func run() throws {
        let exe = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        let base = URL(fileURLWithPath: dir ?? FileManager.default.temporaryDirectory.appendingPathComponent("soundtrack-startup-\(getpid())").path)
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        defer { if dir == nil { try? FileManager.default.removeItem(at: base) } }
        let snapshot = base.appendingPathComponent("snapshot.json")
        try Data(
            #"{"user":"sim-0001","at":"2026-04-02T08:30:00+02:00","location":{"lat":52.52,"lon":13.40,"speed_mps":0,"place":"home"},"weather":{"temp_c":9.5,"condition":"clear"}}"#
                .utf8
        ).write(to: snapshot)

        var rows: [(events: Int, stored: Int, readOnly: [Double], learning: [Double], serve: [Double])] = []
        for size in sizes {
            let db = try database(events: size, in: base, executable: exe)
            let stored = try storedEvents(db, executable: exe)
            let readOnly = try ProcessBenchmark.wallTimes(executable: exe, arguments: ["pick", "--read-only", "--db", db, snapshot.path], runs: runs)
            let learning = try ProcessBenchmark.wallTimes(executable: exe, arguments: ["pick", "--db", db, snapshot.path], runs: runs)
            let serve = try (0..<runs).map { _ in try StartupBenchmark.serveReady(executable: exe, database: db) }
            rows.append((size, stored, readOnly, learning, serve))
        }
        print("start-up, \(runs) runs each, milliseconds (min / median / max)")
        print("  events      stored   pick --read-only          pick (learning)           serve to /readyz")
        for r in rows {
            print(String(format: "  %-10d %8d   %-24@  %-24@  %@", r.events, r.stored, Self.spread(r.readOnly), Self.spread(r.learning), Self.spread(r.serve)))
        }
    }

    static func spread(_ ms: [Double]) -> String {
        let s = ms.sorted()
        return String(format: "%.0f / %.0f / %.0f", s.first ?? 0, s[s.count / 2], s.last ?? 0)
    }

    /// The database of `events` feedback events in `base`, made unless it is there.
    func database(events: Int, in base: URL, executable: URL) throws -> String {
        let db = base.appendingPathComponent("startup-\(events)-seed\(seed).sqlite").path
        if FileManager.default.fileExists(atPath: db) { return db }
        let staging = db + ".making"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: staging + suffix) }
        if events == 0 {
            _ = try ProcessBenchmark.wallTimes(executable: executable, arguments: ["users", "add", "sim-0001", "--db", staging], runs: 1)
        } else {
            let people = max(2, Int((Double(events) / Self.eventsPerPerson).rounded()))
            let sim = base.appendingPathComponent("sim-\(people)-seed\(seed)")
            if !FileManager.default.fileExists(atPath: sim.appendingPathComponent("events.jsonl").path) {
                _ = try ProcessBenchmark.wallTimes(
                    executable: executable, arguments: ["simulate", "--users", "\(people)", "--days", "28", "--seed", "\(seed)", "--out", sim.path], runs: 1)
            }
            _ = try ProcessBenchmark.wallTimes(
                executable: executable,
                arguments: ["replay", "--create-users", "--quiet", "--db", staging, sim.appendingPathComponent("events.jsonl").path], runs: 1)
        }
        // One file (the log checkpointed into it by the last connection's close), then in place.
        try FileManager.default.moveItem(atPath: staging, toPath: db)
        try? FileManager.default.removeItem(atPath: staging + "-writer.lock")
        return db
    }

    /// The feedback rows the database holds (`soundtrack users list` sums them).
    func storedEvents(_ db: String, executable: URL) throws -> Int {
        let p = try BenchChild(executable: executable, arguments: ["users", "list", "--db", db, "--json"], reading: .standardOutput)
        let data = p.output.readDataToEndOfFile()
        p.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        return text.components(separatedBy: "\"feedback\":").dropFirst().reduce(0) { $0 + (Int($1.prefix { $0.isNumber }) ?? 0) }
    }
}
