import Foundation
import SoundtrackContext
import Testing
@testable import SoundtrackEngine

@Suite("Weighted correlation scoring")
struct ScoringTests {
    func bin(_ n: Int, _ c: [Float], observed: [Float]? = nil, spread: Float = 0.2) -> Bin {
        Bin(number: n, label: "", centroid: c, spread: [Float](repeating: spread, count: c.count),
            observed: observed ?? [Float](repeating: 1, count: c.count), observations: 1, songs: [], prior: nil,
            createdAt: Date(), updatedAt: Date())
    }

    /// The reference: weighted Pearson correlation computed directly, slot by slot.
    func reference(_ x: FeatureVector, _ b: Bin, weights: [Float], config: EngineConfig) -> Double {
        var v: [Double] = []
        for i in 0..<FeatureLayout.dimension {
            let s = Double(b.spread[i]), k = Double(config.spreadScale)
            v.append(Double(weights[i] * b.observed[i] * x.mask[i]) / (1 + s * s / (k * k)))
        }
        let s0 = v.reduce(0, +)
        let mx = zip(v, x.values).map { $0 * Double($1) }.reduce(0, +) / s0
        let mc = zip(v, b.centroid).map { $0 * Double($1) }.reduce(0, +) / s0
        var cov = 0.0, vx = 0.0, vc = 0.0
        for i in 0..<v.count {
            let dx = Double(x.values[i]) - mx, dc = Double(b.centroid[i]) - mc
            cov += v[i] * dx * dc; vx += v[i] * dx * dx; vc += v[i] * dc * dc
        }
        return cov / (vx * vc).squareRoot()
    }

    @Test("The one-call CBLAS scores equal the slot-by-slot weighted correlation")
    func matchesReference() {
        var rng = SeededGenerator(seed: 3)
        let d = FeatureLayout.dimension
        let config = EngineConfig()
        var weights = [Float](repeating: 1, count: d)
        for i in 0..<d { weights[i] = Float(0.2 + rng.unit() * 2) }
        var bins: [Bin] = []
        for n in 0..<64 {
            let c = (0..<d).map { _ in Float(rng.unit()) }
            let o = (0..<d).map { _ in Float(rng.unit() < 0.8 ? 1 : rng.unit()) }
            var b = bin(n + 1, c, observed: o)
            b.spread = (0..<d).map { _ in Float(0.05 + rng.unit() * 0.4) }
            bins.append(b)
        }
        var x = FeatureVector()
        for i in 0..<d where rng.unit() < 0.7 { x.set(i, Float(rng.unit())) }
        let m = ScoringMatrix(bins: bins, weights: weights, config: config)
        let scores = m.scores(x)
        for (b, s) in zip(bins, scores) {
            #expect(abs(Double(s) - reference(x, b, weights: weights, config: config)) < 1e-4)
        }
    }

    @Test("Slots missing from the snapshot do not change the score")
    func maskedSlotsIgnored() {
        let d = FeatureLayout.dimension
        var rng = SeededGenerator(seed: 5)
        let c = (0..<d).map { _ in Float(rng.unit()) }
        let m = ScoringMatrix(bins: [bin(1, c)], weights: [Float](repeating: 1, count: d), config: EngineConfig())
        var x = FeatureVector()
        for i in 0..<40 { x.set(i, Float(rng.unit())) }
        var y = x
        for i in 40..<d { y.values[i] = 0.9 }  // values under a zero mask
        #expect(m.scores(x) == m.scores(y))
    }

    @Test("A snapshot equal to a centroid scores 1; its mirror image scores −1")
    func extremes() {
        let d = FeatureLayout.dimension
        var rng = SeededGenerator(seed: 9)
        let c = (0..<d).map { _ in Float(rng.unit()) }
        let m = ScoringMatrix(bins: [bin(1, c)], weights: [Float](repeating: 1, count: d), config: EngineConfig())
        let same = FeatureVector(values: c, mask: [Float](repeating: 1, count: d))
        let mirror = FeatureVector(values: c.map { 1 - $0 }, mask: [Float](repeating: 1, count: d))
        #expect(abs(m.scores(same)[0] - 1) < 1e-4)
        #expect(abs(m.scores(mirror)[0] + 1) < 1e-4)
    }
}
