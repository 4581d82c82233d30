import Foundation
import SoundtrackCatalog
import SoundtrackContext

/// One query the ranker's blend learns from, made from a liked feedback event before the engine
/// learns the event (test, then train): the signals of the liked track and of other tracks a pick
/// for the event's context would have ranked, computed from the user's state as it was then
/// (``Recommender/feedback(_:pick:state:position:)``).
/// The blend that would have put the liked track first is the better one; ``BlendLearner`` fits
/// and compares blends on these queries (docs/scoring.md, "Learning the blend").
///
/// The signals do not depend on the blend, so a query made once judges every blend.
///
/// ```swift
/// let (outcome, example) = try engine.feedback(event, pick: record, state: &state, position: 1)
/// example?.candidates   // the liked track and up to 63 others
/// ```
public struct BlendExample: Sendable, Equatable {
    /// How many tracks besides the liked one a query keeps at most (a seeded sample of the
    /// candidates when the pick has more).
    public static let maxOthers = 63

    /// The user of the event (users weigh alike when blends are fitted and compared).
    public var user: String
    /// ``RankerModel/signals`` values of each candidate, one after the other: the liked track's
    /// first, then the others'.
    public var signals: [Float]

    /// A query from its user and signals (`RankerModel.signals.count` values a candidate, the liked
    /// track's first).
    public init(user: String, signals: [Float]) {
        precondition(signals.count % RankerModel.signals.count == 0, "whole signal vectors")
        self.user = user
        self.signals = signals
    }

    /// The candidates: the liked track and the others.
    public var candidates: Int { signals.count / RankerModel.signals.count }

    /// The signal vector of candidate `k` (0 is the liked track).
    public func signals(of k: Int) -> ArraySlice<Float> {
        let n = RankerModel.signals.count
        return signals[(k * n)..<(k * n + n)]
    }

    /// The liked track's rank under `weights` (0 is first): the number of other candidates that
    /// score above it, or as high (a tie counts against the liked track).
    public func rank(under weights: [Float]) -> Int {
        let n = RankerModel.signals.count
        func score(_ k: Int) -> Float {
            var s: Float = 0
            for i in 0..<n { s += weights[i] * signals[k * n + i] }
            return s
        }
        let liked = score(0)
        var above = 0
        for k in 1..<max(1, candidates) where score(k) >= liked { above += 1 }
        return above
    }
}
