import Foundation
import SoundtrackCatalog
import SoundtrackContext

extension Recommender {
    /// The playback volume a pick suggests, 0…1 (docs/scoring.md, "Volume"): while the session
    /// stays in the bin of its last pick (`continuing`), the volume the snapshot reports (the person
    /// has set it for this context); else, and when the snapshot reports none, what the bin has
    /// learned (``learnedVolume(binIndex:state:)``): a context change is where a suggestion helps.
    public func suggestedVolume(binIndex: Int, x: FeatureVector, continuing: Bool, state: UserState) -> Float {
        let slot = FeatureLayout.volumeSlot
        if continuing, x.mask[slot] > 0 { return min(1, max(0, x.values[slot])) }
        return learnedVolume(binIndex: binIndex, state: state)
    }

    /// The playback volume bin `binIndex` has learned, 0…1: the
    /// volume the bin's snapshots reported and its likes taught (the `audio.volume` of its centroid,
    /// which every served snapshot and every like moves), pulled toward the prior of the bin's
    /// context kind while the bin has heard few volumes:
    /// `(m · c + k · p) / (m + k)` with `m` the snapshots that reported a volume (the bin's
    /// observations times the slot's presence), `c` the centroid's value, `p` the prior's volume
    /// (its `volume` in `Models/priors.v1.json`, else `default`'s, else ½) and `k` =
    /// ``volumePriorWeight``.
    public func learnedVolume(binIndex: Int, state: UserState) -> Float {
        let bin = state.bins[binIndex]
        let slot = FeatureLayout.volumeSlot
        let prior = bin.prior.flatMap { priors.prior(named: $0)?.volume } ?? priors.fallback.volume ?? 0.5
        let heard = Float(bin.observations) * bin.observed[slot]
        let k = Self.volumePriorWeight
        let v = (heard * bin.centroid[slot] + k * prior) / (heard + k)
        return min(1, max(0, v))
    }

    /// How many reported volumes the prior weighs as (``learnedVolume(binIndex:state:)``).
    public static let volumePriorWeight: Float = 2
}
