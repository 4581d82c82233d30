import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

/// `soundtrack fit`: fits the blend of the track ranker that ships (`Models/ranker.v1.json`) on
/// one or more logs, the way a deployment learns it from its own (docs/evaluation.md, "Fitting the
/// blend"): the engine learns each log in order into fresh states and a fresh community, every
/// liked event first teaching the query it makes (``Recommender/feedback(_:pick:state:position:)``,
/// ``BlendExample``), and ``BlendFit/fitRobust(sources:k:rounds:rate:)`` fits one blend on the
/// queries of all the logs, the logs' shares moved towards those it serves worst, with the user's
/// own and their neighbours' evidence kept non-negative.
///
/// ```swift
/// let fitter = RankerFitter(engine: engine)
/// let result = try fitter.fit([.init(name: "sim", catalog: index, events: events)], source: "…")
/// ```
public struct RankerFitter: Sendable {
    /// The engine whose signals are blended (its catalog is replaced by each log's).
    public let engine: Recommender
    /// The cut-off of the NDCG that chooses the L2 strength.
    public let k: Int

    /// Creates a fitter.
    public init(engine: Recommender, k: Int = 10) {
        self.engine = engine
        self.k = k
    }

    /// One log to learn: its events in the order a replay applies them, over its catalog.
    public struct Source: Sendable {
        /// How the result names it.
        public var name: String
        /// The catalog the events' tracks are in.
        public var catalog: CatalogIndex
        /// The events, in log order.
        public var events: [FeedbackEvent]

        /// Creates a source.
        public init(name: String, catalog: CatalogIndex, events: [FeedbackEvent]) {
            self.name = name
            self.catalog = catalog
            self.events = events
        }
    }

    /// What a fit found.
    public struct Result: Sendable {
        /// The fitted model.
        public var model: RankerModel
        /// The L2 strength chosen.
        public var lambda: Double
        /// The signals whose weights came from the fill log.
        public var filled: [String]
        /// Per source: its name, its queries, the in-sample NDCG@k of the fitted weights, of the
        /// starting model's and of a blend fitted on it alone, and its share in the last fit.
        public var sources: [(name: String, queries: Int, fitted: Double, start: Double, alone: Double, share: Double)]
    }

    /// The queries a log teaches, in log order. Its events must be valid for its catalog (a
    /// parsed log's, or a ratings file's: the engine does not judge them again).
    public func examples(_ source: Source) -> [BlendExample] {
        let engine = self.engine.with(catalog: IndexCatalog(source.catalog)).with(community: SharedCommunity())
        var states: [String: UserState] = [:]
        var out: [BlendExample] = []
        for (i, event) in source.events.enumerated() {
            var state = states.removeValue(forKey: event.user) ?? engine.newUser(event.user)
            if let example = engine.feedback(event, pick: nil, state: &state, position: Int64(i + 1)).example { out.append(example) }
            state.changes = UserState.Changes()
            states[event.user] = state
        }
        return out
    }

    /// Fits one blend on the queries of every source.
    /// - Throws: ``FitError`` when no source taught a query.
    /// - Parameter fill: a log whose queries give only the weights of the signals that `sources`
    ///   do not inform (``BlendFit/uninformed(_:)``; ``BlendFit/fill(_:signals:from:lambda:)``).
    public func fit(_ sources: [Source], fill: Source? = nil, source: String) throws -> Result {
        let examples = sources.map { self.examples($0) }
        guard let robust = BlendFit.fitRobust(sources: examples, k: k) else { throw FitError.noQueries }
        var weights = robust.result.weights
        var filled: [Int] = []
        if let fill {
            filled = BlendFit.uninformed(examples)
            weights = BlendFit.fill(weights, signals: filled, from: self.examples(fill), lambda: robust.result.lambda)
        }
        let start = engine.ranker.weights
        return Result(
            model: RankerModel(weights: weights, source: source), lambda: robust.result.lambda, filled: filled.map { RankerModel.signals[$0] },
            sources: sources.indices.map { i in
                (sources[i].name, examples[i].count, robust.ndcg[i], BlendFit.ndcg(examples[i], start, k: k), robust.alone[i], robust.shares[i])
            })
    }
}

/// Why `soundtrack fit` could not fit a blend.
public enum FitError: Error, CustomStringConvertible, Sendable {
    /// No liked event taught a query (no like, or nothing to rank it against).
    case noQueries

    public var description: String {
        switch self {
        case .noQueries: "no liked event taught a query: the logs need likes (or ratings of 4 and 5) with other tracks to rank them against"
        }
    }
}
