import Foundation
import SoundtrackCatalog
import SoundtrackEngine
import SoundtrackStore

/// When a database learns its blend again from its own feedback, and how (docs/scoring.md,
/// "Learning the blend"): the newest ``keep`` queries the feedback taught
/// (``BlendExampleSampling``) are read, ``BlendLearner`` fits a blend on the older ones and judges
/// it against the blend in use on the newest, and the attempt is recorded (`ranker_blends`); a
/// blend that wins becomes the one in use. `serve` runs it in the background, `replay` and `batch`
/// at their end, `soundtrack models fit` on demand.
///
/// ```swift
/// let refit = BlendRefit()
/// if try refit.isDue(store) {
///     let outcome = try refit.run(store, current: engine.ranker, at: Date())
///     if outcome.decision.promoted { engine = engine.with(ranker: outcome.inUse) }
/// }
/// ```
public struct BlendRefit: Sendable {
    /// The newest queries a fit reads; older ones are deleted after it.
    public var keep: Int
    /// New queries since the last attempt that make the next one due.
    public var every: Int
    /// Fits and judges.
    public var learner: BlendLearner

    /// The product's policy: fits on the newest 2,000 queries (``BlendLearner/keep``), one due every 500 new ones.
    public init(keep: Int = BlendLearner.keep, every: Int = BlendLearner.every, learner: BlendLearner = BlendLearner()) {
        self.keep = keep
        self.every = every
        self.learner = learner
    }

    /// What an attempt did.
    public struct Outcome: Sendable, Equatable {
        /// The learner's decision.
        public var decision: BlendLearner.Decision
        /// The fitted blend as stored (its version), `nil` when there were too few queries.
        public var stored: StoredBlend?
        /// The blend in use after the attempt: the new one when it was promoted, else `current`.
        public var inUse: RankerModel

        /// One line for people: the version, the figures, and whether it is in use.
        public var summary: String {
            guard let stored else { return "blend: \(decision.reason)" }
            return "blend \(stored.model.version): \(decision.reason) (version \(stored.comparedWith))"
        }
    }

    /// Queries taught since the last attempt.
    public func newQueries(_ store: Store) throws -> Int64 {
        try store.newestBlendExample() - store.lastBlendAttempt()
    }

    /// Whether ``every`` queries or more came since the last attempt.
    public func isDue(_ store: Store) throws -> Bool {
        try newQueries(store) >= Int64(every)
    }

    /// Fits a blend on the store's newest queries and records the attempt.
    /// - Parameters:
    ///   - current: the blend in use (the engine's).
    ///   - at: when (the attempt's time).
    public func run(_ store: Store, current: RankerModel, at: Date) throws -> Outcome {
        let seen = try store.newestBlendExample()
        let examples = try store.blendExamples(newest: keep)
        let events = try store.feedbackLogSize()
        let source = "learned from this database's feedback: the newest \(examples.count) queries of \(events) events"
        let decision = learner.learn(examples, current: current, source: source)
        let stored = try store.recordBlendAttempt(decision, seen: seen, current: current.version, events: events, at: at)
        try store.pruneBlendExamples(keep: keep)
        let inUse = decision.promoted ? stored?.model ?? current : current
        return Outcome(decision: decision, stored: stored, inUse: inUse)
    }

    /// ``run(_:current:at:)`` when it is due (``isDue(_:)``), else `nil`.
    public func runIfDue(_ store: Store, current: RankerModel, at: Date) throws -> Outcome? {
        try isDue(store) ? run(store, current: current, at: at) : nil
    }
}
