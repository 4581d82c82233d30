import ArgumentParser
import Foundation
import SoundtrackApp
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackEvaluation

extension SplitProtocol: ExpressibleByArgument {}
extension RatingsEvaluator.LogOrder: ExpressibleByArgument {}

/// Options of the commands that run the engine in memory over a catalog file (no database).
struct EngineOptions: ParsableArguments {
    @Option(help: "The catalog (CSV or JSON Lines; default: the bundled datasets/musicoset/catalog.csv).")
    var catalog: String?

    @Option(help: "A directory with thresholds.v2.json, weights.v2.json, priors.v1.json and ranker.v1.json (default: the models built in, identical to Models/).")
    var models: String?

    /// Reads the catalog into a similarity index.
    func loadCatalog() throws -> (CatalogIndex, String) {
        let source: BundledCatalog
        if let catalog {
            guard FileManager.default.isReadableFile(atPath: catalog) else {
                throw InputError(path: "--catalog", expected: "a readable catalog file", got: "'\(catalog)'")
            }
            source = .file(URL(fileURLWithPath: catalog))
        } else {
            let candidates = bundledCatalogCandidates()
            guard let bundled = Bootstrap.bundledCatalog(candidates: candidates) else {
                throw AppError.noCatalog(searched: candidates.map(\.path))
            }
            source = bundled
        }
        let (tracks, report) = try source.read()
        if report.rejectedCount > 0 { stderr("catalog \(source.name): \(report.rejectedCount) rows rejected") }
        return (CatalogIndex(tracks: tracks), source.name)
    }

    /// The engine over a catalog, with the model files and a seed.
    func engine(_ index: CatalogIndex, seed: UInt64) throws -> Recommender {
        let m = try models.map { try Models.load(directory: URL(fileURLWithPath: $0)) } ?? Models.bundled()
        return Recommender(config: m.config, catalog: IndexCatalog(index), priors: m.priors, seed: seed, ranker: m.ranker)
    }
}

struct EvalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract:
            "Measure the engine: on a labelled feedback log or online (the default), bins against reported contexts (bins), track ranking on contextual ratings (ratings), group picks (groups).",
        subcommands: [EvalLogCommand.self, EvalBinsCommand.self, EvalRatingsCommand.self, EvalGroupsCommand.self],
        defaultSubcommand: EvalLogCommand.self)
}

struct EvalLogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Evaluate the engine against baselines on a labelled feedback log, or online against simulated users.",
        discussion: """
            Offline: the log (JSON Lines of feedback events with embedded snapshots, in time order per user) is split \
            by --protocol; the training part is replayed into fresh in-memory states and, for every test event, the \
            engine ranks --k tracks for its snapshot without learning from it. Online (--online): a simulated \
            population (the same people as `simulate --seed`) answers the engine's picks day by day. Metrics and \
            baselines are defined in docs/evaluation.md.
            """)

    @Argument(help: "The labelled log (.jsonl), or - for standard input. Not used with --online.") var log: String?
    @Option(help: "How to split the log: random (k-fold), chronological (the last 1/folds of each user's events), leave-last-out (each user's last liked event).")
    var `protocol`: SplitProtocol = .chronological
    @Option(help: "Folds (random) or inverse test share (chronological); 2...100.") var folds: Int = 4
    @Option(help: "Seed of the split, the engine and the random baseline (online: also of the population).") var seed: UInt64 = 42
    @Option(help: "Length of every ranking (1...100).") var k: Int = 10
    @Flag(help: "Print the report as JSON instead of a table.") var json = false
    @Flag(help: "Reject unknown fields in the log.") var strict = false
    @Flag(help: "Close the loop with a simulated population instead of reading a log.") var online = false
    @Option(help: "Simulated people (--online).") var users: Int = 200
    @Option(help: "Simulated days (--online).") var days: Int = 28
    @OptionGroup var engineOptions: EngineOptions

    func validate() throws {
        guard (1...100).contains(k) else { throw ValidationError("--k must be in 1...100, got \(k)") }
        guard (2...100).contains(folds) else { throw ValidationError("--folds must be in 2...100, got \(folds)") }
        if online {
            guard log == nil else { throw ValidationError("--online takes no log") }
            guard (1...100_000).contains(users), (1...366).contains(days) else {
                throw ValidationError("--users must be in 1...100000 and --days in 1...366")
            }
        } else if log == nil {
            throw ValidationError("missing the log to evaluate (or --online)")
        }
    }

    func run() throws {
        let start = DispatchTime.now().uptimeNanoseconds
        let (index, _) = try engineOptions.loadCatalog()
        let engine = try engineOptions.engine(index, seed: seed)
        let report: EvaluationReport
        if online {
            let population = Population(users: users, days: days, seed: seed, catalog: index)
            report = OnlineEvaluator(engine: engine, population: population).run(k: k)
        } else {
            let data = try readInput(log!)
            let parsed = try LabelledLog.parse(data, catalog: index, strict: strict)
            guard !parsed.entries.isEmpty else {
                throw InputError(path: "", expected: "a log with at least one event", got: "no events")
            }
            report = OfflineEvaluator(engine: engine, k: k).evaluate(parsed, protocol: `protocol`, folds: folds, seed: seed)
        }
        if json {
            print(report.json().pretty())
        } else {
            for line in report.table() { print(line) }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        stderr(String(format: "eval: %d events in %.1f s", report.counts.events, seconds))
    }
}

struct EvalGroupsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "groups",
        abstract: "Evaluate group picks on groups drawn from a simulated population, against the most popular tracks and one member's own pick.",
        discussion: """
            The population's log (the people of `simulate --seed`) teaches the engine; seeded groups meet in the \
            contexts all members have; every rule of aggregation and both baselines rank for the shared snapshot, and \
            each member judges by their hidden taste: NDCG@k and the like rate of the first track, mean and worst \
            member. docs/evaluation.md, "Groups".
            """)

    @Option(help: "Simulated people (2...100000).") var users: Int = 200
    @Option(help: "Simulated days (1...366).") var days: Int = 28
    @Option(help: "Seed of the population and the engine.") var seed: UInt64 = 42
    @Option(help: "Groups drawn (1...100000).") var groups: Int = 200
    @Option(help: "People in a group (2...20).") var size: Int = 3
    @Option(help: "Length of every ranking (1...100).") var k: Int = 10
    @Flag(help: "Print the report as JSON instead of a table.") var json = false
    @OptionGroup var engineOptions: EngineOptions

    func validate() throws {
        guard (1...100).contains(k) else { throw ValidationError("--k must be in 1...100, got \(k)") }
        guard (2...20).contains(size) else { throw ValidationError("--size must be in 2...20, got \(size)") }
        guard (1...100_000).contains(groups) else { throw ValidationError("--groups must be in 1...100000, got \(groups)") }
        guard (2...100_000).contains(users), users >= size else {
            throw ValidationError("--users must be in 2...100000 and at least --size, got \(users)")
        }
        guard (1...366).contains(days) else { throw ValidationError("--days must be in 1...366, got \(days)") }
    }

    func run() throws {
        let start = DispatchTime.now().uptimeNanoseconds
        let (index, _) = try engineOptions.loadCatalog()
        let engine = try engineOptions.engine(index, seed: seed)
        let population = Population(users: users, days: days, seed: seed, catalog: index)
        let report = GroupEvaluator(engine: engine, population: population, groups: groups, size: size, seed: seed).run(k: k)
        if json {
            print(report.json().pretty())
        } else {
            for line in report.table() { print(line) }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        stderr(String(format: "eval groups: %d meetings in %.1f s", report.meetings, seconds))
    }
}

struct EvalBinsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bins",
        abstract: "How well each person's bins separate the contexts they reported, beside clustering baselines.",
        discussion: """
            One learning pass over the snapshots (as `soundtrack batch` makes it, in memory: no database), then, per \
            person and weighted by snapshots: purity, NMI and AMI of the bins against the reported contexts, and the \
            same for one bin per person and for k-means (seeded, k = the engine's bins for that person) on the \
            engine's feature vectors and on the time of week alone; and the share of each context that lands in a \
            bin it dominates. The truth is CSV with the columns user, context and timestamp (Unix seconds) or at \
            (RFC 3339). See docs/evaluation.md.
            """)

    @Argument(help: "The snapshots (JSON Lines, each person's in time order), or - for standard input.") var snapshots: String
    @Option(help: "The reported contexts: CSV with user, context and timestamp or at.") var truth: String
    @Option(help: "Seed of the engine and of the k-means baselines.") var seed: UInt64 = 1
    @Flag(help: "Print the report as JSON instead of a table.") var json = false
    @Flag(help: "Reject unknown fields in the snapshots.") var strict = false
    @OptionGroup var engineOptions: EngineOptions

    func run() throws {
        let start = DispatchTime.now().uptimeNanoseconds
        let (index, _) = try engineOptions.loadCatalog()
        let engine = try engineOptions.engine(index, seed: seed)
        let snapshots = try BinEvaluator.readSnapshots(try readInput(self.snapshots), strict: strict)
        guard !snapshots.isEmpty else { throw InputError(path: "", expected: "at least one snapshot", got: "none") }
        guard let text = FileManager.default.contents(atPath: truth).flatMap({ String(data: $0, encoding: .utf8) }) else {
            throw InputError(path: "--truth", expected: "a readable UTF-8 file", got: "'\(truth)'")
        }
        let evaluator = BinEvaluator(engine: engine, seed: seed)
        let rows = try evaluator.learningPass(snapshots, truth: try ContextTruth.parse(text))
        let report = evaluator.evaluate(rows)
        if json {
            print(report.json().pretty())
        } else {
            for line in report.table() { print(line) }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        stderr(String(format: "eval bins: %d snapshots of %d people in %.1f s", snapshots.count, rows.count, seconds))
    }
}

struct EvalRatingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ratings",
        abstract: "The engine's track ranking on a data set of contextual ratings, beside baselines, by cross-validation.",
        discussion: """
            FILE is CSV in the compact layout of context-aware toolkits: userid,itemid,rating,<context columns>, NA \
            where a context was not given. The rows are dealt into --folds folds by a shuffle seeded with --seed. In each \
            fold the engine meets the data as a deployment would: the items are its catalog, the training ratings a log \
            of rate events (the context columns as snapshot tags, a user's events a week apart), and each test \
            (user, context) pair one read-only pick of 100 tracks. Two engine rows: with the models' blend \
            (engine_shipped), and with the blend the deployment learns from the log as replay does at its end \
            (engine_learned). Nothing is fitted on the test part. Baselines on the same folds: popularity, the user's \
            own most liked, popularity in the same context, item-kNN and implicit ALS (tuned on an inner split of the \
            training part). --through-store runs the engine through a database file a fold: catalog import, replay, \
            batch --read-only --top 100, the code the commands run. --log-order time interleaves the users' rows by \
            their events' times instead of the file's order. See docs/evaluation.md.
            """)

    @Argument(help: "The ratings (CSV: userid,itemid,rating,<context columns>).") var file: String
    @Option(help: "Each item's categories (CSV: itemid,categories), used as genres.") var items: String?
    @Option(help: "Folds of the cross-validation (2...20).") var folds: Int = 5
    @Option(help: "Seed of the folds, the engine and the seeded baselines.") var seed: UInt64 = 1
    @Option(help: "Length of the scored lists (1...100).") var k: Int = 10
    @Flag(help: "Run the engine through a database a fold (catalog import, replay, batch) instead of in memory.") var throughStore = false
    @Option(
        help:
            "The order of a fold's training log: file (each user's rows together, as the data sets list them) or time (the users' rows interleaved by their events' times, as a deployment's log)."
    )
    var logOrder: RatingsEvaluator.LogOrder = .file
    @Flag(help: "Print the report as JSON instead of a table.") var json = false
    @Option(help: "A directory with the model files (default: the models built in, identical to Models/).") var models: String?

    func validate() throws {
        guard (2...20).contains(folds) else { throw ValidationError("--folds must be in 2...20, got \(folds)") }
        guard (1...100).contains(k) else { throw ValidationError("--k must be in 1...100, got \(k)") }
    }

    func run() throws {
        let start = DispatchTime.now().uptimeNanoseconds
        guard let text = FileManager.default.contents(atPath: file).flatMap({ String(data: $0, encoding: .utf8) }) else {
            throw InputError(path: "", expected: "a readable UTF-8 ratings file", got: "'\(file)'")
        }
        let data = try ContextualRatings.parse(text)
        var categories: [String: [String]] = [:]
        if let items {
            guard let t = FileManager.default.contents(atPath: items).flatMap({ String(data: $0, encoding: .utf8) }) else {
                throw InputError(path: "--items", expected: "a readable UTF-8 file", got: "'\(items)'")
            }
            categories = try ContextualRatings.parseItems(t)
        }
        let m = try models.map { try Models.load(directory: URL(fileURLWithPath: $0)) } ?? Models.bundled()
        var config = m.config
        config.exploration = 0
        let engine = Recommender(
            config: config, catalog: IndexCatalog(CatalogIndex(tracks: [])), priors: m.priors, seed: seed, ranker: m.ranker)
        let run: any RatingsEngineRun = throughStore ? RatingsThroughStore(models: m, seed: seed) : InProcessRatingsRun(engine: engine)
        var report = try RatingsEvaluator(folds: folds, seed: seed, k: k, logOrder: logOrder).evaluate(data, itemCategories: categories, run: run)
        report.path = throughStore ? "through a database (catalog import, replay, batch)" : "in memory"
        if json {
            print(report.json().pretty())
        } else {
            for line in report.table() { print(line) }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        stderr(String(format: "eval ratings: %d ratings in %.1f s", data.rows.count, seconds))
    }
}
