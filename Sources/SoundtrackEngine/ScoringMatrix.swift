import CBLAS
import SoundtrackContext

/// The per-user matrix that scores a feature vector against every bin with one CBLAS call.
///
/// For bin `b` and slot `i` the effective weight is `V[b,i] = w[i] · observed[b,i] · q[b,i]`
/// with the precision factor `q = 1 / (1 + (spread/scale)²)`. The matrix stacks
/// `V`, `V∘C` and `V∘C²` (3B × D, row-major); multiplied by the D × 3 matrix
/// `[m, m∘x, m∘x²]` of the snapshot it yields every weighted sum that the weighted
/// Pearson correlation of each bin needs (see docs/scoring.md).
struct ScoringMatrix: Sendable {
    let binCount: Int
    let dimension: Int
    /// 3B × D, row-major.
    let a: [Float]
    /// B × D: the effective weights V, kept for `why`.
    let v: [Float]

    init(bins: [Bin], weights: [Float], config: EngineConfig) {
        let d = FeatureLayout.dimension
        let b = bins.count
        binCount = b
        dimension = d
        var a = [Float](repeating: 0, count: 3 * b * d)
        var v = [Float](repeating: 0, count: b * d)
        let scale2 = config.spreadScale * config.spreadScale
        for (r, bin) in bins.enumerated() {
            for i in 0..<d {
                let s = bin.spread[i]
                let q = 1 / (1 + s * s / scale2)
                let vi = weights[i] * bin.observed[i] * q
                let c = bin.centroid[i]
                v[r * d + i] = vi
                a[r * d + i] = vi
                a[(b + r) * d + i] = vi * c
                a[(2 * b + r) * d + i] = vi * c * c
            }
        }
        self.a = a
        self.v = v
    }

    /// The weighted correlation of `x` with every bin, in bin order.
    func scores(_ x: FeatureVector) -> [Float] {
        let b = binCount
        let d = dimension
        guard b > 0 else { return [] }
        var y = [Float](repeating: 0, count: d * 3)
        for i in 0..<d {
            let m = x.mask[i]
            let xv = x.values[i] * m
            y[i * 3] = m
            y[i * 3 + 1] = xv
            y[i * 3 + 2] = xv * x.values[i]
        }
        var c = [Float](repeating: 0, count: 3 * b * 3)
        a.withUnsafeBufferPointer { ap in
            y.withUnsafeBufferPointer { yp in
                c.withUnsafeMutableBufferPointer { cp in
                    cblas_sgemm(
                        CblasRowMajor, CblasNoTrans, CblasNoTrans,
                        Int32(3 * b), 3, Int32(d),
                        1, ap.baseAddress, Int32(d),
                        yp.baseAddress, 3,
                        0, cp.baseAddress, 3)
                }
            }
        }
        var out = [Float](repeating: 0, count: b)
        for r in 0..<b {
            out[r] = Self.correlation(
                s0: Double(c[r * 3]), sx: Double(c[r * 3 + 1]), sxx: Double(c[r * 3 + 2]),
                sc: Double(c[(b + r) * 3]), sxc: Double(c[(b + r) * 3 + 1]), scc: Double(c[(2 * b + r) * 3]))
        }
        return out
    }

    /// Weighted Pearson correlation from its weighted sums; 0 when either side has no variance.
    static func correlation(s0: Double, sx: Double, sxx: Double, sc: Double, sxc: Double, scc: Double) -> Float {
        guard s0 > 1e-9 else { return 0 }
        let mx = sx / s0
        let mc = sc / s0
        let cov = sxc / s0 - mx * mc
        let vx = sxx / s0 - mx * mx
        let vc = scc / s0 - mc * mc
        guard vx > 1e-9, vc > 1e-9 else { return 0 }
        let r = cov / (vx * vc).squareRoot()
        return Float(min(1, max(-1, r)))
    }

    /// The `count` slots with the largest positive terms of bin `row`'s weighted covariance with
    /// `x` (ties by slot name): which features decided the score.
    func topContributions(row: Int, bin: Bin, x: FeatureVector, count: Int) -> [Explanation] {
        let d = dimension
        var s0 = 0.0, sx = 0.0, sc = 0.0
        for i in 0..<d {
            let w = Double(v[row * d + i] * x.mask[i])
            s0 += w
            sx += w * Double(x.values[i])
            sc += w * Double(bin.centroid[i])
        }
        guard s0 > 1e-9 else { return [] }
        let mx = sx / s0
        let mc = sc / s0
        // Partial selection of the largest terms; slots are few, the kept list is short.
        var top: [(term: Double, slot: Int)] = []
        top.reserveCapacity(count + 1)
        for i in 0..<d where x.mask[i] > 0 && v[row * d + i] > 0 {
            let term = Double(v[row * d + i]) / s0 * (Double(x.values[i]) - mx) * (Double(bin.centroid[i]) - mc)
            guard term > 0 else { continue }
            func before(_ a: (term: Double, slot: Int), _ b: (term: Double, slot: Int)) -> Bool {
                a.term != b.term ? a.term > b.term : FeatureLayout.slots[a.slot].name < FeatureLayout.slots[b.slot].name
            }
            let item = (term: term, slot: i)
            guard top.count < count || before(item, top[top.count - 1]) else { continue }
            var at = top.count
            while at > 0 && before(item, top[at - 1]) { at -= 1 }
            top.insert(item, at: at)
            if top.count > count { top.removeLast() }
        }
        return top.map { t in
            let i = t.slot
            let sim = 1 - min(1, abs(Double(x.values[i]) - Double(bin.centroid[i])))
            return Explanation(
                feature: FeatureLayout.slots[i].name, weight: Float(Double(v[row * d + i]) / s0),
                similarity: Float(sim), contribution: Float(t.term))
        }
    }
}

/// One feature's part in the choice of a bin, as listed in a pick's `why`.
public struct Explanation: Sendable, Equatable, Codable {
    /// The feature slot's name (`calendar.study`).
    public var feature: String
    /// The slot's share of the total effective weight in this comparison.
    public var weight: Float
    /// 1 − |snapshot value − bin centroid| on this slot, clamped to [0, 1].
    public var similarity: Float
    /// The slot's term in the weighted covariance (positive: it agreed).
    public var contribution: Float

    /// Creates an explanation row.
    public init(feature: String, weight: Float, similarity: Float, contribution: Float) {
        self.feature = feature
        self.weight = weight
        self.similarity = similarity
        self.contribution = contribution
    }
}
