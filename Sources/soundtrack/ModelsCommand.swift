import ArgumentParser
import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackRules
import SoundtrackStore

/// `soundtrack models`: the blend of the track ranker a database learned from its own feedback.
struct ModelsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "models",
        abstract: "The blend of the track ranker that the database learned from its own feedback: show, fit, use, history.",
        discussion: """
            Every liked feedback event teaches the blend a query (a sample of them once the log is long). `serve` \
            learns the blend again in the background, `replay` and `batch` at their end, once 500 new queries came; a \
            new blend is used only when it beats the one in use on the newest fifth of the queries. Version 0 is the \
            models' own blend (Models/ranker.v1.json, or --models). See docs/scoring.md, "Learning the blend".
            """,
        subcommands: [ModelsShowCommand.self, ModelsFitCommand.self, ModelsUseCommand.self, ModelsHistoryCommand.self],
        defaultSubcommand: ModelsShowCommand.self)
}

/// The blend in use, the models' own, and how many queries wait.
struct ModelsShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "The blend in use, its weights and figures, and whether a refit is due.")

    @OptionGroup var store: StoreOptions
    @OptionGroup var engine: RankingOptions
    @Flag(help: "Print JSON instead of text.") var json = false

    func run() throws {
        let service = try store.open(engine: engine.values, loadBundledCatalog: false, existing: true)
        let db = service.store
        let inUse = try db.blendInUse()
        let own = try store.loadModels(engine.models).ranker
        let refit = BlendRefit()
        let newQueries = try refit.newQueries(db)
        let kept = try db.blendExamples(newest: refit.keep).count
        if json {
            var pairs: [(String, JSONValue)] = [("in_use", .number(Double(inUse?.model.version ?? 0)))]
            pairs.append(("weights", BlendText.weights(inUse?.model ?? own)))
            if let inUse { pairs.append(("blend", BlendText.json(inUse))) }
            pairs.append(("models_weights", BlendText.weights(own)))
            pairs.append(("queries_kept", .number(Double(kept))))
            pairs.append(("new_queries", .number(Double(newQueries))))
            pairs.append(("refit_due", .bool(newQueries >= Int64(refit.every))))
            print(JSONValue.object(pairs).pretty())
            return
        }
        if let inUse {
            print(
                "blend in use: version \(inUse.model.version), learned \(BlendText.date(inUse.createdAt)) from \(inUse.training + inUse.validation) queries of \(inUse.events) events"
            )
            print(String(format: "  NDCG@10 on its newest %d queries %.4f, against %.4f of version %d", inUse.validation, inUse.ndcg, inUse.comparedNDCG, inUse.comparedWith))
        } else {
            print("blend in use: version 0, the models' own (\(own.source.isEmpty ? "no source given" : own.source))")
        }
        for line in BlendText.table(inUse?.model ?? own, beside: inUse == nil ? nil : own) { print("  " + line) }
        print("queries kept: \(kept); new since the last attempt: \(newQueries) (a refit is due at \(refit.every))")
    }
}

/// Fits a blend now, whether or not one is due.
struct ModelsFitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fit", abstract: "Learn the blend again now from the database's queries; it is used only if it beats the blend in use.")

    @OptionGroup var store: StoreOptions
    @OptionGroup var engine: RankingOptions

    func run() throws {
        let service = try store.open(engine: engine.values, loadBundledCatalog: false, existing: true)
        let outcome = try BlendRefit().run(service.store, current: service.engine.ranker, at: Date())
        print(outcome.summary)
        if let stored = outcome.stored {
            for line in BlendText.table(stored.model, beside: service.engine.ranker) { print("  " + line) }
        }
    }
}

/// Makes a version the blend in use.
struct ModelsUseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "use", abstract: "Use blend VERSION from now on (0: the models' own), promoted or not: a rollback, or a choice.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The version (soundtrack models history lists them); 0 for the models' own.") var version: Int

    func validate() throws {
        guard version >= 0 else { throw ValidationError("VERSION must be 0 or more, got \(version)") }
    }

    func run() throws {
        let service = try store.open(loadBundledCatalog: false, existing: true)
        do {
            try service.store.useBlend(version: version)
        } catch let e as StoreError {
            throw InputError(path: "VERSION", expected: "a version of soundtrack models history, or 0", got: "\(e)")
        }
        print(version == 0 ? "blend in use: version 0, the models' own" : "blend in use: version \(version)")
    }
}

/// Every blend the database fitted.
struct ModelsHistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "history", abstract: "Every blend the database fitted, promoted or not, and why.")

    @OptionGroup var store: StoreOptions
    @Flag(help: "Print JSON Lines instead of a table.") var json = false

    func run() throws {
        let service = try store.open(loadBundledCatalog: false, existing: true)
        let (blends, inUse) = try service.store.blendHistory()
        if json {
            for b in blends { print(BlendText.json(b, inUse: inUse).serialized()) }
            return
        }
        guard !blends.isEmpty else {
            print("no blend fitted yet: version 0, the models' own, is in use")
            return
        }
        print("version  fitted                events  queries  NDCG@10  vs    NDCG@10  promoted  in use")
        for b in blends {
            print(
                String(
                    format: "%7d  %@  %7lld  %7d  %7.4f  v%-3d %7.4f  %-8@  %@", b.model.version, BlendText.date(b.createdAt), b.events,
                    b.training + b.validation, b.ndcg, b.comparedWith, b.comparedNDCG, b.promoted ? "yes" : "no",
                    b.model.version == inUse ? "yes" : ""))
        }
        if inUse == 0 { print("in use: version 0, the models' own") }
    }
}

/// How the models commands print blends.
enum BlendText {
    static func date(_ d: Date) -> String {
        Timestamp(date: d, offsetSeconds: 0).rfc3339
    }

    /// The weights as a JSON object by signal name.
    static func weights(_ m: RankerModel) -> JSONValue {
        .object(zip(RankerModel.signals, m.weights).map { ($0, .number((Double($1) * 10_000).rounded() / 10_000)) })
    }

    static func json(_ b: StoredBlend, inUse: Int? = nil) -> JSONValue {
        var pairs: [(String, JSONValue)] = [
            ("version", .number(Double(b.model.version))), ("fitted_at", .string(date(b.createdAt))), ("events", .number(Double(b.events))),
            ("training_queries", .number(Double(b.training))), ("validation_queries", .number(Double(b.validation))),
            ("ndcg_at_10", .number(b.ndcg)), ("compared_with", .number(Double(b.comparedWith))), ("compared_ndcg_at_10", .number(b.comparedNDCG)),
            ("promoted", .bool(b.promoted)), ("reason", .string(b.reason)), ("weights", weights(b.model))
        ]
        if let inUse { pairs.append(("in_use", .bool(b.model.version == inUse))) }
        return .object(pairs)
    }

    /// One line a signal: its weight (and the other blend's beside it).
    static func table(_ m: RankerModel, beside other: RankerModel?) -> [String] {
        var out = [other == nil ? "signal     weight" : "signal     weight  models' own"]
        for (i, name) in RankerModel.signals.enumerated() {
            var line = name.padding(toLength: 9, withPad: " ", startingAt: 0) + String(format: "  %+6.3f", m.weights[i])
            if let other { line += String(format: "  %+6.3f", other.weights[i]) }
            out.append(line)
        }
        return out
    }
}
