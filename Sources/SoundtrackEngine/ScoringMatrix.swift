import CBLAS
import SoundtrackContext

/// The per-user matrix that scores a feature vector against every bin with three CBLAS calls.
///
/// For bin `b` and slot `i` the effective weight is `V[b,i] = w[i] · u[b,i]` with the bin's part
/// `u = observed · q` and the precision factor `q = 1 / (1 + (spread/scale)²)`. One 3B × D
/// matrix (row-major) stacks three blocks of one row per bin: `u`, then `u∘C`, then `u∘C²`. The
/// user's weights go to the snapshot's side, the vectors `w∘m`, `w∘m∘x` and `w∘m∘x²`, and three
/// matrix–vector products (`cblas_sgemv`) over the first 3B, 2B and B rows yield the six weighted
/// sums per bin that the weighted Pearson correlation needs (see docs/scoring.md). A single
/// 3B × D by D × 3 `cblas_sgemm` would compute nine sums per bin and pack the matrix on every
/// call; this costs less for the matrix sizes of one user.
///
/// Because the weights are not in the matrix, learning them changes nothing here, and a bin's
/// rows depend on that bin alone: ``sync(bins:config:)`` recomputes only the rows of bins whose
/// vectors changed since (their ``Bin/stamp``), so a feedback event costs one bin's rows, not a
/// rebuild of the user's matrix.
struct ScoringMatrix: Sendable {
    /// 3B × D, row-major: rows `0..<B` hold `u`, rows `B..<2B` `u∘C`, rows `2B..<3B` `u∘C²`.
    private(set) var m: [Float] = []
    /// The ``Bin/stamp`` each bin's rows were computed from.
    private(set) var stamps: [UInt64] = []
    /// The spread scale the rows were computed with.
    private var scale: Float = .nan

    /// The number of bins scored.
    var binCount: Int { stamps.count }

    /// Brings the rows up to date with `bins`: recomputes the rows of changed or new bins only.
    mutating func sync(bins: [Bin], config: EngineConfig) {
        let d = FeatureLayout.dimension
        if scale != config.spreadScale {
            scale = config.spreadScale
            stamps.removeAll(keepingCapacity: true)
            m.removeAll(keepingCapacity: true)
        }
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
                fill(row: r, bin: bp[r])
            }
        }
    }

    private mutating func fill(row r: Int, bin: Bin) {
        let d = FeatureLayout.dimension
        let b = stamps.count
        let scale2 = scale * scale
        bin.centroid.withUnsafeBufferPointer { c in
            bin.spread.withUnsafeBufferPointer { sp in
                bin.observed.withUnsafeBufferPointer { ob in
                    m.withUnsafeMutableBufferPointer { mp in
                        let u = mp.baseAddress! + r * d, uc = u + b * d, ucc = uc + b * d
                        for i in 0..<d {
                            let s = sp[i]
                            let w = ob[i] / (1 + s * s / scale2)
                            let ci = c[i]
                            u[i] = w
                            uc[i] = w * ci
                            ucc[i] = w * ci * ci
                        }
                    }
                }
            }
        }
        stamps[r] = bin.stamp
    }

    /// The weighted correlation of `x` with every bin, in bin order, under the user's `weights`.
    func scores(_ x: FeatureVector, weights: [Float]) -> [Float] {
        let b = binCount
        let d = FeatureLayout.dimension
        guard b > 0 else { return [] }
        return withUnsafeTemporaryAllocation(of: Float.self, capacity: 3 * d + 6 * b) { scratch in
            let y0 = scratch.baseAddress!, y1 = y0 + d, y2 = y1 + d
            // Outputs in the order of the matrix's blocks: y0 over all three, y1 over two, y2 over one.
            let r0 = y2 + d, r1 = r0 + 3 * b, r2 = r1 + 2 * b
            x.values.withUnsafeBufferPointer { xv in
                x.mask.withUnsafeBufferPointer { xm in
                    weights.withUnsafeBufferPointer { w in
                        for i in 0..<d {
                            let wm = w[i] * xm[i]
                            let v = xv[i]
                            y0[i] = wm
                            y1[i] = wm * v
                            y2[i] = wm * v * v
                        }
                    }
                }
            }
            m.withUnsafeBufferPointer { mp in
                let a = mp.baseAddress
                cblas_sgemv(CblasRowMajor, CblasNoTrans, Int32(3 * b), Int32(d), 1, a, Int32(d), y0, 1, 0, r0, 1)
                cblas_sgemv(CblasRowMajor, CblasNoTrans, Int32(2 * b), Int32(d), 1, a, Int32(d), y1, 1, 0, r1, 1)
                cblas_sgemv(CblasRowMajor, CblasNoTrans, Int32(b), Int32(d), 1, a, Int32(d), y2, 1, 0, r2, 1)
            }
            return [Float](unsafeUninitializedCapacity: b) { out, n in
                for r in 0..<b {
                    out[r] = Self.correlation(
                        s0: Double(r0[r]), sx: Double(r1[r]), sxx: Double(r2[r]),
                        sc: Double(r0[b + r]), sxc: Double(r1[b + r]), scc: Double(r0[2 * b + r]))
                }
                n = b
            }
        }
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
    func topContributions(row: Int, centroid: [Float], x: FeatureVector, weights: [Float], count: Int) -> [Explanation] {
        let d = FeatureLayout.dimension
        guard count > 0 else { return [] }
        return withUnsafeTemporaryAllocation(of: Float.self, capacity: d) { v in
            var s0 = 0.0, sx = 0.0, sc = 0.0
            m.withUnsafeBufferPointer { up in
                for i in 0..<d {
                    v[i] = weights[i] * up[row * d + i]
                    let w = Double(v[i] * x.mask[i])
                    s0 += w
                    sx += w * Double(x.values[i])
                    sc += w * Double(centroid[i])
                }
            }
            guard s0 > 1e-9 else { return [] }
            let mx = sx / s0
            let mc = sc / s0
            // Partial selection of the largest terms (ties by slot name); slots are few, the kept list is short.
            return withUnsafeTemporaryAllocation(of: (term: Double, slot: Int).self, capacity: count) { buffer in
                var top = TopK(buffer: buffer)
                @inline(__always) func before(_ a: (term: Double, slot: Int), _ b: (term: Double, slot: Int)) -> Bool {
                    a.term != b.term ? a.term > b.term : FeatureLayout.slots[a.slot].name < FeatureLayout.slots[b.slot].name
                }
                for i in 0..<d where x.mask[i] > 0 && v[i] > 0 {
                    let term = Double(v[i]) / s0 * (Double(x.values[i]) - mx) * (Double(centroid[i]) - mc)
                    guard term > 0 else { continue }
                    top.offer((term: term, slot: i), before: before)
                }
                return (0..<top.count).map { k in
                    let i = top[k].slot
                    let sim = 1 - min(1, abs(Double(x.values[i]) - Double(centroid[i])))
                    return Explanation(
                        feature: FeatureLayout.slots[i].name, weight: Float(Double(v[i]) / s0),
                        similarity: Float(sim), contribution: Float(top[k].term))
                }
            }
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
