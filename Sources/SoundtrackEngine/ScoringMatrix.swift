import CBLAS
import Foundation
import SoundtrackContext

/// The per-user matrix that measures a feature vector's distance to every bin with three CBLAS calls.
///
/// For bin `b` and slot `i` the effective weight is `V[b,i] = w[i] · u[b,i]` with the bin's part
/// `u[b,i] = 1` when the bin has seen the slot in at least ``EngineConfig/presenceThreshold`` of its
/// snapshots, else 0. One 3B × D matrix (row-major) stacks three blocks of one row per bin: `u∘C²`,
/// then `u`, then `u∘C`. The user's weights go to the snapshot's side, the vectors `w∘m`, `w∘m∘x`
/// and `w∘m∘x²`, and three matrix–vector products (`cblas_sgemv`) yield the four sums per bin that
/// the weighted mean squared distance over the slots present on both sides needs (see
/// docs/scoring.md): `w∘m` over the first two blocks (`u∘C²` and `u`, one product of 2B rows),
/// `w∘m∘x²` over `u` and `w∘m∘x` over `u∘C` (B rows each): 4B dot products, none computed for nothing.
///
/// Because the weights are not in the matrix, learning them changes nothing here, and a bin's
/// rows depend on that bin alone: ``sync(bins:config:)`` recomputes only the rows of bins whose
/// vectors changed since (their ``Bin/stamp``), so a served snapshot costs one bin's rows, not a
/// rebuild of the user's matrix.
struct ScoringMatrix: Sendable {
    /// 3B × D, row-major: rows `0..<B` hold `u∘C²`, rows `B..<2B` `u`, rows `2B..<3B` `u∘C`.
    private(set) var m: [Float] = []
    /// The ``Bin/stamp`` each bin's rows were computed from.
    private(set) var stamps: [UInt64] = []
    /// The presence threshold the rows were computed with.
    private var threshold: Float = .nan
    /// Per-slot factors on the user's weights from how well each slot separates the bins
    /// (all 1 when ``EngineConfig/separationExponent`` is 0); see ``separationFactors(bins:exponent:)``.
    private(set) var separation: [Float] = []

    /// The number of bins scored.
    var binCount: Int { stamps.count }

    /// Brings the rows up to date with `bins`: recomputes the rows of changed or new bins only.
    mutating func sync(bins: [Bin], config: EngineConfig) {
        let d = FeatureLayout.dimension
        if threshold != config.presenceThreshold {
            threshold = config.presenceThreshold
            stamps.removeAll(keepingCapacity: true)
            m.removeAll(keepingCapacity: true)
        }
        var changed = false
        let old = stamps.count, new = bins.count
        if old != new {
            // Re-lay the three blocks for the new bin count, keeping the rows of kept bins.
            let kept = min(old, new)
            let copy = m
            m = [Float](repeating: 0, count: 3 * new * d)
            copy.withUnsafeBufferPointer { src in
                m.withUnsafeMutableBufferPointer { dst in
                    for block in 0..<3 where kept > 0 {
                        (dst.baseAddress! + block * new * d).update(from: src.baseAddress! + block * old * d, count: kept * d)
                    }
                }
            }
            if new < old { stamps.removeLast(old - new) } else { stamps.append(contentsOf: repeatElement(0, count: new - old)) }
        }
        // Through a pointer: `bins[r].stamp` on the array copied the whole bin (retaining its
        // arrays and strings) on every pick just to read its stamp.
        bins.withUnsafeBufferPointer { bp in
            for r in 0..<bp.count where stamps[r] != bp[r].stamp || stamps[r] == 0 {
                fill(row: r, centroid: bp[r].centroid, observed: bp[r].observed, stamp: bp[r].stamp)
                changed = true
            }
        }
        if changed || old != new || separation.count != d {
            // Without the factor (exponent 0, or fewer than 3 bins) they are all 1: kept when they
            // already are, not computed and allocated again for every served snapshot.
            let ones = !(config.separationExponent > 0) || bins.count < 3
            if !(ones && separation.count == d && separation.allSatisfy { $0 == 1 }) {
                separation = Self.separationFactors(bins: bins, exponent: config.separationExponent)
            }
        }
    }

    /// Per-slot factors `clamp(F_i / mean F, 1/4, 4)^γ` with `F_i = between_i / (within_i + 0.01)`:
    /// the spread of the bins' centroids around their mean against the spread within bins, both
    /// weighted by the bins' snapshot counts, over the slots the bins have seen. All 1 when `γ`
    /// is 0 or there are fewer than 3 bins.
    static func separationFactors(bins: [Bin], exponent: Float) -> [Float] {
        let d = FeatureLayout.dimension
        var out = [Float](repeating: 1, count: d)
        guard exponent > 0, bins.count >= 3 else { return out }
        var fisher = [Float](repeating: 0, count: d)
        var seen = 0
        for i in 0..<d {
            var n: Float = 0, mean: Float = 0
            for b in bins where b.observed[i] > 0 {
                let w = Float(b.observations) * b.observed[i]
                n += w
                mean += w * b.centroid[i]
            }
            guard n > 0 else { continue }
            mean /= n
            var between: Float = 0, within: Float = 0
            for b in bins where b.observed[i] > 0 {
                let w = Float(b.observations) * b.observed[i]
                let dc = b.centroid[i] - mean
                between += w * dc * dc
                within += w * b.spread[i] * b.spread[i]
            }
            fisher[i] = (between / n) / (within / n + 0.01)
            seen += 1
        }
        guard seen > 0 else { return out }
        let mean = fisher.reduce(0, +) / Float(seen)
        guard mean > 0 else { return out }
        for i in 0..<d where fisher[i] > 0 {
            out[i] = powf(min(4, max(0.25, fisher[i] / mean)), exponent)
        }
        return out
    }

    private mutating func fill(row r: Int, centroid: [Float], observed: [Float], stamp: UInt64) {
        let d = FeatureLayout.dimension
        let b = stamps.count
        let threshold = self.threshold
        centroid.withUnsafeBufferPointer { c in
            observed.withUnsafeBufferPointer { ob in
                m.withUnsafeMutableBufferPointer { mp in
                    let ucc = mp.baseAddress! + r * d, u = ucc + b * d, uc = u + b * d
                    for i in 0..<d {
                        let w: Float = ob[i] >= threshold ? 1 : 0
                        let ci = c[i]
                        u[i] = w
                        uc[i] = w * ci
                        ucc[i] = w * ci * ci
                    }
                }
            }
        }
        stamps[r] = stamp
    }

    /// The weighted mean squared distance of `x` to every bin, in bin order, over the slots
    /// present in `x` and seen by the bin, under the user's `weights` (times ``separation``):
    ///
    ///     d_b = Σ v_i (x_i − c_i)² / Σ v_i,   v_i = w_i · sep_i · m_i · u_b,i
    ///
    /// `+∞` for a bin that shares no slot with `x` (no evidence either way).
    func distances(_ x: FeatureVector, weights: [Float]) -> [Float] {
        let b = binCount
        let d = FeatureLayout.dimension
        guard b > 0 else { return [] }
        return withUnsafeTemporaryAllocation(of: Float.self, capacity: 3 * d + 4 * b) { scratch in
            let y0 = scratch.baseAddress!, y1 = y0 + d, y2 = y1 + d
            // y0 over the blocks u∘C² and u (r0: Scc, then S0), y2 over u (Sxx), y1 over u∘C (Sxc).
            let r0 = y2 + d, r2 = r0 + 2 * b, r1 = r2 + b
            x.values.withUnsafeBufferPointer { xv in
                x.mask.withUnsafeBufferPointer { xm in
                    weights.withUnsafeBufferPointer { w in
                        separation.withUnsafeBufferPointer { sep in
                            for i in 0..<d {
                                let wm = w[i] * sep[i] * xm[i]
                                let v = xv[i]
                                y0[i] = wm
                                y1[i] = wm * v
                                y2[i] = wm * v * v
                            }
                        }
                    }
                }
            }
            m.withUnsafeBufferPointer { mp in
                let a = mp.baseAddress
                cblas_sgemv(CblasRowMajor, CblasNoTrans, Int32(2 * b), Int32(d), 1, a, Int32(d), y0, 1, 0, r0, 1)
                cblas_sgemv(CblasRowMajor, CblasNoTrans, Int32(b), Int32(d), 1, a.map { $0 + b * d }, Int32(d), y2, 1, 0, r2, 1)
                cblas_sgemv(CblasRowMajor, CblasNoTrans, Int32(b), Int32(d), 1, a.map { $0 + 2 * b * d }, Int32(d), y1, 1, 0, r1, 1)
            }
            return [Float](unsafeUninitializedCapacity: b) { out, n in
                for r in 0..<b {
                    out[r] = Self.distance(s0: r0[b + r], sxx: r2[r], sxc: r1[r], scc: r0[r])
                }
                n = b
            }
        }
    }

    /// The distance of one bin (row `r`) to `x`: ``distances(_:weights:)`` for that bin alone
    /// (a pick needs the chosen bin's again after it learned from `x`, and only that one).
    func distance(row r: Int, _ x: FeatureVector, weights: [Float]) -> Float {
        let b = binCount
        let d = FeatureLayout.dimension
        precondition(r < b, "no such row")
        var s0: Float = 0, sxc: Float = 0, sxx: Float = 0, scc: Float = 0
        m.withUnsafeBufferPointer { mp in
            for i in 0..<d {
                let wm = weights[i] * separation[i] * x.mask[i]
                guard wm != 0 else { continue }
                let v = x.values[i]
                let u = mp[(b + r) * d + i], uc = mp[(2 * b + r) * d + i], ucc = mp[r * d + i]
                s0 += wm * u
                sxx += wm * v * v * u
                sxc += wm * v * uc
                scc += wm * ucc
            }
        }
        return Self.distance(s0: s0, sxx: sxx, sxc: sxc, scc: scc)
    }

    /// The weighted mean squared distance from its sums: `(Sxx − 2 Sxc + Scc) / S0` (never below 0);
    /// `+∞` without shared weight.
    static func distance(s0: Float, sxx: Float, sxc: Float, scc: Float) -> Float {
        guard s0 > 1e-6 else { return .infinity }
        return max(0, (sxx - 2 * sxc + scc) / s0)
    }

    /// The slots that made bin `row` close to `x`, for a pick's `why`: the slots present on both
    /// sides, each with its share `v_i / Σ v` of the weight and its agreement `1 − |x_i − c_i|`,
    /// ranked by share × agreement (ties by slot), keeping only slots that agree (agreement ≥ ½)
    /// and, of the one-hot and multi-hot groups (place, weather condition, calendar category,
    /// Bluetooth, activity, audio route, tags), only the values the snapshot has. The two slots of
    /// the time of day (and of the day of the week) count as one feature.
    func topContributions(
        row: Int, centroid: [Float], x: FeatureVector, weights: [Float], vocabulary: FeatureVocabulary, count: Int
    ) -> [Explanation] {
        let d = FeatureLayout.dimension
        guard count > 0, row < binCount else { return [] }
        // Every table of the pick's `why` lives in stack buffers: the weights, the rows (at most
        // one a slot), each merge key's row and the best `count` rows; only the answer is an array.
        // (Swift puts a temporary buffer on the stack for sure only up to 1 KiB, larger ones only
        // when the runtime finds room on the thread's stack: hence 12-byte rows with an `Int32`
        // slot, 996 bytes for the 83 slots.)
        typealias Row = (share: Float, agreement: Float, slot: Int32)
        return withUnsafeTemporaryAllocation(of: Float.self, capacity: d) { v in
            var s0: Float = 0
            // Through buffers, the tables read once: in the loops, each `static let` read and each
            // array access checked cost more than the arithmetic.
            let u = (binCount + row) * d
            m.withUnsafeBufferPointer { up in
                weights.withUnsafeBufferPointer { w in
                    separation.withUnsafeBufferPointer { sep in
                        x.mask.withUnsafeBufferPointer { xm in
                            for i in 0..<d {
                                v[i] = w[i] * sep[i] * up[u + i] * xm[i]
                                s0 += v[i]
                            }
                        }
                    }
                }
            }
            guard s0 > 1e-6 else { return [] }
            return withUnsafeTemporaryAllocation(of: Row.self, capacity: d) { rows in
                var n = 0
                withUnsafeTemporaryAllocation(of: Int32.self, capacity: d) { rowOfKey in
                    rowOfKey.initialize(repeating: -1)
                    let categorical = ExplanationSlots.categorical, mergeKey = ExplanationSlots.mergeKey
                    x.values.withUnsafeBufferPointer { xv in
                        centroid.withUnsafeBufferPointer { c in
                            for i in 0..<d where v[i] > 0 {
                                if categorical[i], xv[i] < 0.5 { continue }
                                let agreement = 1 - min(1, abs(xv[i] - c[i]))
                                let key = mergeKey[i]
                                if rowOfKey[key] >= 0 {
                                    // The second slot of a pair (time of day, day of the week): one row, weights added.
                                    let k = Int(rowOfKey[key])
                                    let total = rows[k].share + v[i] / s0
                                    rows[k].agreement = (rows[k].agreement * rows[k].share + agreement * v[i] / s0) / total
                                    rows[k].share = total
                                    continue
                                }
                                rowOfKey[key] = Int32(n)
                                rows[n] = (v[i] / s0, agreement, Int32(i))
                                n += 1
                            }
                        }
                    }
                }
                // The rows that agree, best share × agreement first (ties: the lower slot); names
                // only for the rows shown.
                return TopK<Row>.best(
                    capacity: min(count, max(n, 1)),
                    { top in
                        for k in 0..<n where rows[k].agreement >= 0.5 {
                            top.offer(rows[k]) { a, b in
                                let ka = a.share * a.agreement, kb = b.share * b.agreement
                                return ka != kb ? ka > kb : a.slot < b.slot
                            }
                        }
                    }
                ) { r in
                    Explanation(
                        feature: vocabulary.displayName(slot: Int(r.slot), value: x.values[Int(r.slot)]),
                        weight: r.share, similarity: r.agreement, contribution: r.share * r.agreement)
                }
            }
        }
    }
}

/// The slots that are one value of several (one-hot or multi-hot: place kinds and places, weather
/// conditions, calendar categories, Bluetooth kinds, activities, audio routes, tags): an
/// explanation names only the values a snapshot has.
enum ExplanationSlots {
    /// For each slot, the first slot with the same display name (itself for most: the two slots of
    /// the time of day, and of the day of the week, share one row of an explanation). Per-user slots
    /// (tags, learned places) are each their own.
    static let mergeKey: [Int] = {
        let plain = FeatureVocabulary()
        var first: [String: Int] = [:]
        return FeatureLayout.slots.indices.map { i in
            switch FeatureLayout.slots[i].group {
            case .tags, .learnedPlace: return i
            default:
                let name = plain.displayName(slot: i)
                if let f = first[name] { return f }
                first[name] = i
                return i
            }
        }
    }()

    static let categorical: [Bool] = FeatureLayout.slots.map { slot in
        switch slot.group {
        case .place, .learnedPlace, .bluetooth, .tags: return true
        case .weather: return slot.name.hasPrefix("weather.cond_")
        case .calendar: return FeatureLayout.calendarCategories.contains { slot.name == "calendar.\($0)" }
        case .motion: return FeatureLayout.activities.contains { slot.name == "motion.\($0)" }
        case .audio: return FeatureLayout.audioRoutes.contains { slot.name == "audio.\($0)" }
        default: return false
        }
    }
}

/// One feature's part in the choice of a bin, as listed in a pick's `why`.
public struct Explanation: Sendable, Equatable, Codable {
    /// The feature as a person would name it (`tag wifi = none`, `place: home`, `time of day`).
    public var feature: String
    /// The slot's share of the total effective weight in this comparison.
    public var weight: Float
    /// 1 − |snapshot value − bin centroid| on this slot, clamped to [0, 1].
    public var similarity: Float
    /// Share × similarity: what the explanations are ranked by.
    public var contribution: Float

    /// Creates an explanation row.
    public init(feature: String, weight: Float, similarity: Float, contribution: Float) {
        self.feature = feature
        self.weight = weight
        self.similarity = similarity
        self.contribution = contribution
    }
}
