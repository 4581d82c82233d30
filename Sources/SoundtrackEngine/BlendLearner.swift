import Foundation
import SoundtrackCatalog
import SoundtrackContext

/// How a deployment learns its blend from its own feedback (docs/scoring.md, "Learning the blend"):
/// the newest ``validationShare`` of the queries (``BlendExample``, oldest first) is held out; a
/// blend is fitted on the rest (``BlendFit``, its penalty pulling towards zero: on the simulated
/// population a pull towards the blend in use kept the learned blend near the shipped one, 0.039
/// instead of 0.099 NDCG@10, and on DePaulMovie it cost 0.02); it is promoted only when its
/// NDCG@``k`` on the held-out queries beats the blend in use there.
///
/// ```swift
/// let decision = BlendLearner().learn(examples, current: engine.ranker)
/// if decision.promoted, let model = decision.candidate { … }
/// ```
public struct BlendLearner: Sendable {
    /// The newest queries a deployment keeps and fits on (``BlendRefit`` in the rules).
    public static let keep = 2_000
    /// New queries since the last attempt that make the next one due.
    public static let every = 500

    /// The share of the newest queries held out to judge the new blend against the one in use.
    public var validationShare: Double
    /// The fewest queries a fit needs (below it the blend in use stays).
    public var minimumExamples: Int
    /// The cut-off of the NDCG that judges.
    public var k: Int

    /// A learner; the defaults are the product's.
    public init(validationShare: Double = 0.2, minimumExamples: Int = 100, k: Int = 10) {
        self.validationShare = validationShare
        self.minimumExamples = minimumExamples
        self.k = k
    }

    /// What one attempt found.
    public struct Decision: Sendable, Equatable {
        /// The fitted blend (`nil` when there were too few queries to fit one).
        public var candidate: RankerModel?
        /// Whether it beat the blend in use on the held-out queries.
        public var promoted: Bool
        /// Why it was or was not promoted, for people and the log.
        public var reason: String
        /// Queries fitted on, and held out.
        public var training: Int
        public var validation: Int
        /// NDCG@k on the held-out queries of the new blend and of the one in use.
        public var ndcg: Double
        public var currentNDCG: Double
        /// The L2 strength of the fit.
        public var lambda: Double
    }

    /// Fits a blend on the older queries and judges it against `current` on the newest.
    /// - Parameters:
    ///   - examples: the queries, oldest first.
    ///   - current: the blend in use.
    ///   - source: what the new blend's ``RankerModel/source`` says it was fitted on.
    public func learn(_ examples: [BlendExample], current: RankerModel, source: String = "") -> Decision {
        let usable = examples.filter { $0.candidates > 1 }
        let held = Int((Double(usable.count) * validationShare).rounded(.up))
        guard usable.count >= minimumExamples, held > 0, held < usable.count else {
            return Decision(
                candidate: nil, promoted: false,
                reason: "\(usable.count) queries, fewer than the \(minimumExamples) a fit needs: the blend in use stays",
                training: 0, validation: 0, ndcg: 0, currentNDCG: 0, lambda: 0)
        }
        let training = Array(usable.dropLast(held)), validation = Array(usable.suffix(held))
        guard let fit = BlendFit.fit(sources: [training], k: k, prior: nil) else {
            return Decision(
                candidate: nil, promoted: false, reason: "no query to fit on: the blend in use stays", training: training.count,
                validation: held, ndcg: 0, currentNDCG: 0, lambda: 0)
        }
        let candidate = RankerModel(weights: fit.weights, source: source)
        let new = BlendFit.ndcg(validation, fit.weights, k: k), old = BlendFit.ndcg(validation, current.weights, k: k)
        let promoted = new > old
        let figures = String(format: "NDCG@%d on the newest %d queries %.4f against %.4f of the blend in use", k, held, new, old)
        return Decision(
            candidate: candidate, promoted: promoted,
            reason: promoted ? "promoted: \(figures)" : "not promoted: \(figures)",
            training: training.count, validation: held, ndcg: new, currentNDCG: old, lambda: fit.lambda)
    }
}
