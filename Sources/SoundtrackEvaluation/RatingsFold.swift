import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

/// One fold of `eval ratings` as a deployment meets it: a catalog, a log to learn and the
/// snapshots to pick for (``RatingsEvaluator``).
public struct RatingsFold: Sendable {
    /// The catalog: one track an item, its id the item's, its categories as genres.
    public var tracks: [Track]
    /// The training ratings as `rate` events with their contexts' snapshots, in file order: the log,
    /// whose line `i + 1` is event `i`.
    public var events: [FeedbackEvent]
    /// One snapshot a test pair, in pair order, timed after the user's training events.
    public var queries: [Snapshot]
    /// Every user of the data set (those without training events are new to the deployment).
    public var users: [String]

    /// Creates a fold.
    public init(tracks: [Track], events: [FeedbackEvent], queries: [Snapshot], users: [String]) {
        self.tracks = tracks
        self.events = events
        self.queries = queries
        self.users = users
    }
}

/// The engine's rankings of one fold's test pairs: track ids, best first, a list a query.
public struct RatingsRankings: Sendable {
    /// With the models' blend: what a fresh deployment ranks.
    public var shipped: [[String]]
    /// With the blend the deployment learned from the fold's log (``learned`` equals ``shipped``
    /// when it learned none that beat the models' blend).
    public var learned: [[String]]
    /// What learning the blend found (`nil`: too few queries for a refit to be due).
    public var decision: BlendLearner.Decision?

    /// Creates rankings.
    public init(shipped: [[String]], learned: [[String]], decision: BlendLearner.Decision?) {
        self.shipped = shipped
        self.learned = learned
        self.decision = decision
    }
}

/// How the engine learns a fold and ranks its queries: in memory (``InProcessRatingsRun``), or
/// through a database and the commands a user runs (`eval ratings --through-store`).
public protocol RatingsEngineRun {
    /// Learns the fold's log, learns the blend as `replay` does at its end, and ranks every query
    /// read-only, with the models' blend and with the learned one.
    func rank(_ fold: RatingsFold) throws -> RatingsRankings
}

/// ``RatingsEngineRun`` in memory: the same engine calls the rules make for each event
/// (``Recommender/feedback(_:pick:state:position:)``) and for each read-only pick, on states and a
/// community kept in memory, and the product's policy for learning the blend (``BlendLearner``).
public struct InProcessRatingsRun: RatingsEngineRun {
    /// The engine, with the models (its catalog is replaced by the fold's).
    public let engine: Recommender
    /// Tracks a pick ranks.
    public let top: Int

    /// A run over an engine; `top` tracks a pick (100: the most `batch --top` gives).
    public init(engine: Recommender, top: Int = 100) {
        self.engine = engine
        self.top = top
    }

    public func rank(_ fold: RatingsFold) throws -> RatingsRankings {
        let engine = self.engine.with(catalog: IndexCatalog(CatalogIndex(tracks: fold.tracks))).with(community: SharedCommunity())
        var states: [String: UserState] = [:]
        var examples: [BlendExample] = []
        for (i, event) in fold.events.enumerated() {
            var state = states.removeValue(forKey: event.user) ?? engine.newUser(event.user)
            let (_, example) = engine.feedback(event, pick: nil, state: &state, position: Int64(i + 1))
            if let example { examples.append(example) }
            state.changes = UserState.Changes()
            states[event.user] = state
        }
        let shipped = rankAll(fold.queries, engine: engine, states: states)
        let learned = ReplayEndBlend.learn(engine, examples: examples)
        guard learned.decision?.promoted == true else { return RatingsRankings(shipped: shipped, learned: shipped, decision: learned.decision) }
        return RatingsRankings(shipped: shipped, learned: rankAll(fold.queries, engine: learned.engine, states: states), decision: learned.decision)
    }

    /// One read-only pick a query, on a copy of its user's state.
    func rankAll(_ queries: [Snapshot], engine: Recommender, states: [String: UserState]) -> [[String]] {
        queries.map { q in
            var state = states[q.user] ?? engine.newUser(q.user)
            let r = engine.pick(q, state: &state, top: top).pick.ranked.map(\.id)
            return r
        }
    }
}
