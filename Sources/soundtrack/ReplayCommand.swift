import ArgumentParser
import Foundation
import SoundtrackApp
import SoundtrackContext

struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Apply a feedback log (JSON Lines of events, in time order per user) in batched durable transactions.",
        discussion: """
            Idempotent by event id and resumable: stopped at any moment (even kill -9) and run again, it \
            reaches the state of one clean run. Rejected events (unknown user or track, an event out of time \
            order for its user, a bad field) are reported with their line and field (--errors FILE for a JSON \
            Lines report) and the exit status is 2; the others are applied. At the end, when the log taught             500 or more new queries since the last attempt, the blend of the track ranker is learned again from             the database's feedback and used from then on if it beats the blend in use on the newest queries             (--no-fit: not; see soundtrack models).
            """)

    @OptionGroup var store: StoreOptions
    @OptionGroup var engine: RankingOptions
    @Argument(help: "The feedback log (JSON Lines), or - for standard input.") var input: String = "-"
    @Option(name: .long, help: "Write the error report (JSON Lines: line, field, message) to this file.") var errors: String?
    @Flag(name: .long, help: "Create users the database does not know (on their first event) instead of rejecting their events.") var createUsers = false
    @Flag(name: .long, help: "Reject unknown fields.") var strict = false
    @Option(name: .long, help: "Worker threads (default: the number of cores).") var workers: Int = ProcessInfo.processInfo.activeProcessorCount
    @Flag(name: .long, help: "Print no summary.") var quiet = false
    @Flag(name: .customLong("no-fit"), help: "Do not learn the blend again at the end, even when the log taught enough new queries (see soundtrack models).")
    var noFit = false
    @Option(name: .long, help: .hidden) var blockBytes: Int?

    func validate() throws {
        guard (1...256).contains(workers) else { throw ValidationError("--workers must be in 1...256, got \(workers)") }
    }

    func run() throws {
        keepFreedMemory()
        let reader = try ChunkReader(input)
        let service = try store.open(engine: engine.values, community: true, writesCommunity: true)
        var options = ReplayOptions()
        options.workers = workers
        if let blockBytes { options.blockBytes = max(256, blockBytes) }
        options.createUsers = createUsers
        options.strict = strict
        options.now = Date()
        if noFit { options.refit = nil }
        let runner = try ReplayRunner(service: service, options: options)
        let sink = try ErrorSink(path: errors)
        let bar = Progress(total: reader.size, unit: "events")
        let summary = try runner.run(
            read: { try reader.read(into: $0) }, reject: { try sink.report($0) },
            progress: { bar.update(records: $0.records, done: $0.done) })
        bar.finish()
        let t = bar.elapsed
        if !quiet {
            var s = "replay: \(summary.description)"
            if summary.tally.rejected > 0 {
                s +=
                    " (line\(summary.tally.rejected > 1 ? "s" : "") \(sink.lines.map(String.init).joined(separator: ", "))\(summary.tally.rejected > sink.lines.count ? ", …" : ""))"
            }
            s += String(format: "; %.2f s, %.0f events/s", t, t > 0 ? Double(summary.records) / t : 0)
            stderr(s)
            if let blend = summary.blend { stderr(blend.summary) }
            if summary.unknownUsers > 0 { stderr("(\(summary.unknownUsers) events of unknown users: add the users, or replay with --create-users)") }
            if let hint = sink.hint { stderr(hint) }
        }
        if summary.tally.rejected > 0 { throw BadInputExit() }
    }
}
