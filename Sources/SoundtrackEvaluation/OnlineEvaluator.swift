import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

/// `soundtrack eval --online`: the simulated population answers the engine's picks.
///
/// Every listening slot of every person, in time order, gets one pick from the engine
/// (``Recommender/pick(_:state:top:)``, learning as in production) and one from each baseline; the
/// person's hidden taste answers each (``Population/answer(slot:track:eventId:pickId:)``, the same
/// noise for every recommender), and each recommender learns from its own answers. The engine
/// learns through ``Recommender/feedback(_:pick:state:position:)`` with the pick's record, and its
/// blend as `serve` learns it (every 500 new queries, promoted when it wins); the baselines
/// count likes (the most-popular list is recomputed at the start of each day), explore like the
/// engine (``exploration``) and, like the engine, never repeat one of the user's last
/// `repeatWindow` tracks.
public struct OnlineEvaluator: Sendable {
    /// The engine under test.
    public let engine: Recommender
    /// The simulated people.
    public let population: Population

    /// The share of picks where the most-popular and user's-most-liked baselines explore: they play
    /// the random baseline's track instead (the engine's own exploration draw has the same rate).
    /// Without it they would cycle through the `repeatWindow + 1` most popular tracks forever.
    public static let exploration = 0.15

    /// Creates an evaluator.
    public init(engine: Recommender, population: Population) {
        self.engine = engine
        self.population = population
    }

    /// Runs the closed loop.
    /// - Parameter k: recorded in the report (picks are single tracks).
    public func run(k: Int) -> EvaluationReport {
        var report = EvaluationReport(split: "online", folds: 1, seed: population.seed, k: k)
        let slots = timeline()
        report.counts.users = population.users.count
        report.counts.events = slots.count
        report.counts.testEvents = slots.count
        var loop = ClosedLoop(engine: engine.with(community: SharedCommunity()), population: population, k: k)
        for slot in slots { loop.play(slot) }
        loop.fill(&report)
        return report
    }

    /// Every person's listening slots, in time order (ties by person and slot).
    func timeline() -> [ListeningSlot] {
        var slots: [ListeningSlot] = []
        for u in population.users.indices { slots += population.slots(user: u) }
        slots.sort { ($0.snapshot.at.date, $0.user, $0.number) < ($1.snapshot.at.date, $1.user, $1.number) }
        return slots
    }
}
