import ArgumentParser
import Foundation
import SoundtrackApp
import SoundtrackContext

struct BatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Pick for every snapshot of a JSON Lines file: picks out as JSON Lines, in input order, on all cores.",
        discussion: """
            A bad line does not stop the run: it goes to the error report (--errors FILE, JSON Lines of \
            {"line","field","message"}; else the first 20 on standard error) and the exit status is 2. \
            The users' states are kept in memory and written at the end in large transactions \
            (never with --read-only). A progress bar shows on standard error when it is a terminal.
            """)

    @OptionGroup var store: StoreOptions
    @OptionGroup var engine: RankingOptions
    @Argument(help: "The snapshots (JSON Lines), or - for standard input.") var input: String = "-"
    @Option(name: [.short, .long], help: "Where the picks go (JSON Lines); - for standard output.") var output: String = "-"
    @Option(name: .long, help: "Write the error report (JSON Lines: line, field, message) to this file.") var errors: String?
    @Flag(name: .long, help: "Stop at the first bad line (the picks before it are kept).") var failFast = false
    @Flag(name: .long, help: "Pick without learning: nothing is written to the database.") var readOnly = false
    @Flag(name: .long, help: "Also store each pick (so feedback can name its pick_id); slower.") var recordPicks = false
    @Flag(name: .long, help: "Reject unknown fields.") var strict = false
    @Option(name: .long, help: "Return a ranked list of K tracks per pick.") var top: Int = 1
    @Option(name: .long, help: "Worker threads (default: the number of cores).") var workers: Int = ProcessInfo.processInfo.activeProcessorCount
    @Flag(name: .long, help: "Print no summary.") var quiet = false
    @Flag(name: .long, help: "Also print where the wall time went, by phase.") var timings = false
    @Flag(name: .customLong("no-fit"), help: "Do not learn the blend again at the end, even when the database's feedback taught enough new queries (see soundtrack models).")
    var noFit = false
    @Option(name: .long, help: .hidden) var blockBytes: Int?

    func validate() throws {
        guard (1...100).contains(top) else { throw ValidationError("--top must be in 1...100, got \(top)") }
        guard (1...256).contains(workers) else { throw ValidationError("--workers must be in 1...256, got \(workers)") }
    }

    func run() throws {
        keepFreedMemory()
        let reader = try ChunkReader(input)
        let service = try store.open(engine: engine.values, community: true, existing: true)
        var options = BatchOptions()
        options.workers = workers
        if let blockBytes { options.blockBytes = max(256, blockBytes) }
        options.learn = !readOnly
        options.failFast = failFast
        options.strict = strict
        options.recordPicks = recordPicks
        options.top = top
        options.now = Date()
        if noFit { options.refit = nil }
        let runner = try BatchRunner(service: service, options: options)
        keepUntilExit(runner)  // its users' states: the process exits without freeing them one by one
        let out = try OutputFile(output)
        let sink = try ErrorSink(path: errors)
        let bar = Progress(total: reader.size, unit: "snapshots")
        let summary = try runner.run(
            read: { try reader.read(into: $0) }, write: { try out.write($0) }, reject: { try sink.report($0) },
            progress: { bar.update(records: $0.records, done: $0.bytes) })
        bar.finish()
        let t = bar.elapsed
        if !quiet {
            var s = "batch: \(summary.records) records: \(summary.picks) picks, \(summary.rejected) rejected"
            if summary.rejected > 0 {
                s += " (line\(summary.rejected > 1 ? "s" : "") \(sink.lines.map(String.init).joined(separator: ", "))\(summary.rejected > sink.lines.count ? ", …" : ""))"
            }
            s += "; \(summary.users) users, \(summary.binsCreated) bins created"
            s += String(format: "; %.2f s, %.0f snapshots/s", t, t > 0 ? Double(summary.records) / t : 0)
            if readOnly { s += "; read-only: nothing written" }
            if let line = summary.stoppedAtLine { s += "; stopped at line \(line) (--fail-fast)" }
            stderr(s)
            if let blend = summary.blend { stderr(blend.summary) }
            if let hint = sink.hint { stderr(hint) }
        }
        if timings {
            stderr("batch timings (wall s): " + summary.timings.phases.map { String(format: "%@ %.2f", $0.0, $0.1) }.joined(separator: ", "))
        }
        if summary.rejected > 0 { throw BadInputExit() }
    }
}
