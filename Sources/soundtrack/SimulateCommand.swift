import ArgumentParser
import Foundation
import SoundtrackContext
import SoundtrackEvaluation

struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Simulate a population: snapshots, the feedback their hidden tastes give, and the ground truth.",
        discussion: """
            Writes DIR/events.jsonl (feedback events with embedded snapshots, in time order), DIR/truth.jsonl (the \
            ground-truth context of each event's snapshot), DIR/users.jsonl (each person's map, routine, devices and \
            hidden taste) and DIR/population.json (the parameters). Deterministic for a seed and catalog. The model of \
            the people is described in docs/evaluation.md.
            """)

    @Option(help: "How many people (1...100000).") var users: Int = 200
    @Option(help: "How many days (1...366), from Monday 2 March 2026.") var days: Int = 28
    @Option(help: "The seed: the same seed gives the same people, snapshots and answers.") var seed: UInt64 = 42
    @Option(help: "The output directory (created).") var out: String
    @OptionGroup var engineOptions: EngineOptions

    func validate() throws {
        guard (1...100_000).contains(users) else { throw ValidationError("--users must be in 1...100000, got \(users)") }
        guard (1...366).contains(days) else { throw ValidationError("--days must be in 1...366, got \(days)") }
    }

    func run() throws {
        let (index, catalogPath) = try engineOptions.loadCatalog()
        let population = Population(users: users, days: days, seed: seed, catalog: index)
        let (events, truth) = population.feedbackLog()
        let dir = URL(fileURLWithPath: out)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        func write(_ name: String, _ lines: [JSONValue]) throws {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(lines.count * 1024)
            for l in lines {
                l.write(into: &bytes)
                bytes.append(0x0A)
            }
            try Data(bytes).write(to: dir.appendingPathComponent(name))
        }
        try write("events.jsonl", events.map { $0.json() })
        try write("truth.jsonl", truth.map { $0.json() })
        try write("users.jsonl", population.users.map { $0.json(catalog: index) })
        let liked = events.filter(\.isLike).count
        let meta: JSONValue = .object([
            ("format", .string("soundtrack-simulation/1")), ("users", .number(Double(users))), ("days", .number(Double(days))),
            ("seed", .number(Double(seed))), ("first_day", .string("2026-03-02")), ("catalog", .string(catalogPath)),
            ("catalog_tracks", .number(Double(index.count))), ("events", .number(Double(events.count))),
            ("liked", .number(Double(liked))),
            (
                "files",
                .object([
                    ("events", .string("events.jsonl")), ("truth", .string("truth.jsonl")), ("users", .string("users.jsonl"))
                ])
            )
        ])
        try Data((meta.pretty() + "\n").utf8).write(to: dir.appendingPathComponent("population.json"))
        print("simulated \(users) users × \(days) days: \(events.count) events (\(events.isEmpty ? 0 : liked * 100 / events.count)% liked) → \(out)")
    }
}
