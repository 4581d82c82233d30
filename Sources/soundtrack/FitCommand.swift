import ArgumentParser
import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackEvaluation

struct FitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fit",
        abstract: "Fit the blend of the track ranker that ships on labelled logs and contextual ratings, and write the model file.",
        discussion: """
            Each source is learned as a deployment learns its log: in order, into fresh states, every liked event \
            (a like, a complete, a rating of 4 or 5) first teaching the query it makes: the liked track among the \
            candidates a pick for its context would rank, from the state before it. One blend is fitted on the \
            queries of all sources by pairwise logistic regression, the L2 strength chosen by cross-validation \
            over users, the sources' shares moved towards the source the blend serves worst against a blend of \
            its own (group-robust: a blend that ships must not fail a domain); the weights of the user's own evidence and of their \
            neighbours' (own_mean, own_rated, own_ctx, knn, knn_r) are kept at 0 or above. Deterministic for a \
            seed. Models/generate-bundled-models.sh makes the shipped blend this way; see docs/evaluation.md, \
            "Fitting the blend".
            """)

    @Option(name: .customLong("log"), help: "A labelled log (.jsonl: feedback events with embedded snapshots, in time order per user), over --catalog. Repeatable.")
    var logs: [String] = []
    @Option(
        name: .customLong("ratings"),
        help: "Contextual ratings (CSV: userid,itemid,rating,<context columns>), optionally with their items' categories after a comma: FILE[,ITEMS]. Repeatable.")
    var ratings: [String] = []
    @Option(
        help:
            "A labelled log (over --catalog) that gives only the weights of the signals the other sources do not inform (the sound of tracks, for ratings without audio features).")
    var fill: String?
    @Option(name: .shortAndLong, help: "Where the model goes (JSON); - for standard output.") var output: String = "-"
    @Option(help: "Seed of the engine.") var seed: UInt64 = 1
    @Option(help: "Text for the model's source field (default: the command line's sources).") var source: String?
    @OptionGroup var engineOptions: EngineOptions

    func validate() throws {
        guard !logs.isEmpty || !ratings.isEmpty else { throw ValidationError("give at least one --log or --ratings") }
    }

    func run() throws {
        let start = DispatchTime.now().uptimeNanoseconds
        var sources: [RankerFitter.Source] = []
        var engine: Recommender?
        var fillSource: RankerFitter.Source?
        if !logs.isEmpty || fill != nil {
            let (index, _) = try engineOptions.loadCatalog()
            engine = try engineOptions.engine(index, seed: seed)
            if let fill {
                let parsed = try LabelledLog.parse(try readInput(fill), catalog: index)
                fillSource = .init(name: URL(fileURLWithPath: fill).lastPathComponent, catalog: index, events: parsed.entries.map(\.event))
            }
            for log in logs {
                let parsed = try LabelledLog.parse(try readInput(log), catalog: index)
                guard !parsed.entries.isEmpty else { throw InputError(path: log, expected: "a log with at least one event", got: "no events") }
                sources.append(.init(name: URL(fileURLWithPath: log).lastPathComponent, catalog: index, events: parsed.entries.map(\.event)))
            }
        }
        for spec in ratings {
            let parts = spec.split(separator: ",", maxSplits: 1).map(String.init)
            let data = try ContextualRatings.parse(try text(parts[0], option: "--ratings"))
            let categories = parts.count > 1 ? try ContextualRatings.parseItems(try text(parts[1], option: "--ratings")) : [:]
            let log = RatingsEvaluator().log(data, itemCategories: categories)
            sources.append(.init(name: URL(fileURLWithPath: parts[0]).lastPathComponent, catalog: CatalogIndex(tracks: log.tracks), events: log.events))
        }
        let fitter = RankerFitter(engine: try engine ?? engineOptions.engine(CatalogIndex(tracks: []), seed: seed))
        let logArguments: [String] = logs.map { "--log " + URL(fileURLWithPath: $0).lastPathComponent }
        let ratingsArguments: [String] = ratings.map { spec in
            spec.split(separator: ",").map { URL(fileURLWithPath: String($0)).lastPathComponent }.joined(separator: ",")
        }.map { "--ratings " + $0 }
        let fillArgument = fill.map { ["--fill " + URL(fileURLWithPath: $0).lastPathComponent] } ?? []
        let named = source ?? "soundtrack fit " + (logArguments + ratingsArguments + fillArgument).joined(separator: " ") + " --seed \(seed)"
        let result = try fitter.fit(sources, fill: fillSource, source: named)
        let text = result.model.json().pretty() + "\n"
        if output == "-" {
            print(text, terminator: "")
        } else {
            try Data(text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        for s in result.sources {
            stderr(
                String(
                    format: "fit: %@: %d queries, in-sample NDCG@10 %.4f (starting model %.4f, a blend of its own %.4f), share %.3f", s.name, s.queries,
                    s.fitted, s.start, s.alone, s.share))
        }
        if !result.filled.isEmpty { stderr("fit: from --fill: " + result.filled.joined(separator: ", ")) }
        stderr(String(format: "fit: lambda %g, %.1f s", result.lambda, seconds))
    }

    func text(_ path: String, option: String) throws -> String {
        guard let t = FileManager.default.contents(atPath: path).flatMap({ String(data: $0, encoding: .utf8) }) else {
            throw InputError(path: option, expected: "a readable UTF-8 file", got: "'\(path)'")
        }
        return t
    }
}
