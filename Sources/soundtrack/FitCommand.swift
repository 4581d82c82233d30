import ArgumentParser
import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackEvaluation

struct FitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fit",
        abstract: "Fit the blend of the track ranker on a labelled feedback log and write the model file.",
        discussion: """
            The log is split as `soundtrack eval` splits it; the engine learns each training part, and every liked \
            test event becomes a query whose relevant tracks are those the user liked in its session. The weights \
            of the signals (docs/scoring.md, "Ranking tracks") are fitted by pairwise logistic regression, the L2 \
            strength chosen by cross-validation over the splits. Deterministic for a seed. See docs/evaluation.md, \
            "Fitting the blend".
            """)

    @Argument(help: "The labelled log (.jsonl: feedback events with embedded snapshots), or - for standard input.") var log: String
    @Option(name: .shortAndLong, help: "Where the model goes (JSON); - for standard output.") var output: String = "-"
    @Option(help: "How to split the log: random, chronological, leave-last-out.") var `protocol`: SplitProtocol = .chronological
    @Option(help: "Folds (random) or inverse test share (chronological); 2...100.") var folds: Int = 4
    @Option(help: "Seed of the split and the engine.") var seed: UInt64 = 1
    @Option(help: "Queries used per split at most.") var maxQueries: Int = 3000
    @OptionGroup var engineOptions: EngineOptions

    func validate() throws {
        guard (2...100).contains(folds) else { throw ValidationError("--folds must be in 2...100, got \(folds)") }
        guard maxQueries >= 1 else { throw ValidationError("--max-queries must be at least 1") }
    }

    func run() throws {
        let start = DispatchTime.now().uptimeNanoseconds
        let (index, _) = try engineOptions.loadCatalog()
        let engine = try engineOptions.engine(index, seed: seed)
        let parsed = try LabelledLog.parse(try readInput(log), catalog: index)
        guard !parsed.entries.isEmpty else { throw InputError(path: "", expected: "a log with at least one event", got: "no events") }
        let name = log == "-" ? "standard input" : URL(fileURLWithPath: log).lastPathComponent
        let source = "soundtrack fit \(name) --protocol \(`protocol`.rawValue) --folds \(folds) --seed \(seed)"
        let result = try RankerFitter(engine: engine, maxQueries: maxQueries).fit(
            parsed, protocol: `protocol`, folds: folds, seed: seed, source: source)
        let text = result.model.json().pretty() + "\n"
        if output == "-" {
            print(text, terminator: "")
        } else {
            try Data(text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        stderr(
            String(
                format: "fit: %d queries, lambda %g, in-sample NDCG@10 %.4f (starting model %.4f), %.1f s",
                result.queries, result.lambda, result.ndcg.fitted, result.ndcg.start, seconds))
    }
}
