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

    func matrix(_ bins: [Bin], config: EngineConfig = EngineConfig()) -> ScoringMatrix {
        var m = ScoringMatrix()
        m.sync(bins: bins, config: config)
        return m
    }

    func randomBins(_ count: Int, rng: inout SeededGenerator) -> [Bin] {
        let d = FeatureLayout.dimension
        return (0..<count).map { n in
            let c = (0..<d).map { _ in Float(rng.unit()) }
            let o = (0..<d).map { _ in Float(rng.unit() < 0.8 ? 1 : rng.unit()) }
            var b = bin(n + 1, c, observed: o)
            b.spread = (0..<d).map { _ in Float(0.05 + rng.unit() * 0.4) }
            return b
        }
    }

    @Test("The CBLAS scores equal the slot-by-slot weighted correlation")
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
        let m = matrix(bins, config: config)
        let scores = m.scores(x, weights: weights)
        for (b, s) in zip(bins, scores) {
            #expect(abs(Double(s) - reference(x, b, weights: weights, config: config)) < 1e-4)
        }
    }

    @Test("Updated in place (changed, added and removed bins, new weights), the matrix scores as one built afresh")
    func incrementalUpdates() {
        var rng = SeededGenerator(seed: 11)
        let d = FeatureLayout.dimension
        let config = EngineConfig()
        var bins = randomBins(20, rng: &rng)
        var m = matrix(bins, config: config)
        var x = FeatureVector()
        for i in 0..<d where rng.unit() < 0.7 { x.set(i, Float(rng.unit())) }
        for step in 0..<40 {
            switch step % 4 {
            case 0:  // one bin's vectors change (as a liked context pulls it)
                let r = Int(rng.next() % UInt64(bins.count))
                bins[r].centroid[Int(rng.next() % UInt64(d))] = Float(rng.unit())
                bins[r].spread[Int(rng.next() % UInt64(d))] = Float(0.05 + rng.unit() * 0.4)
            case 1:  // a new bin
                bins += randomBins(1, rng: &rng)
            case 2:  // a bin replaced by another value
                bins[Int(rng.next() % UInt64(bins.count))] = randomBins(1, rng: &rng)[0]
            default:  // a bin removed
                if bins.count > 2 { bins.remove(at: Int(rng.next() % UInt64(bins.count))) }
            }
            let weights = (0..<d).map { _ in Float(0.2 + rng.unit() * 2) }
            m.sync(bins: bins, config: config)
            #expect(m.binCount == bins.count)
            #expect(m.scores(x, weights: weights) == matrix(bins, config: config).scores(x, weights: weights))
            for (b, s) in zip(bins, m.scores(x, weights: weights)) {
                #expect(abs(Double(s) - reference(x, b, weights: weights, config: config)) < 1e-4)
            }
        }
    }

    @Test("Copies of a bin share its stamp; changing any vector gives a new one")
    func stamps() {
        var rng = SeededGenerator(seed: 12)
        var b = randomBins(1, rng: &rng)[0]
        let copy = b
        #expect(copy.stamp == b.stamp)
        b.label = "relabelled"
        #expect(copy.stamp == b.stamp)
        b.observed[0] = 0.5
        #expect(copy.stamp != b.stamp)
        let before = b.stamp
        b.setVectors(centroid: b.centroid, spread: b.spread, observed: b.observed)
        #expect(b.stamp != before)
        #expect(b == b && copy != b)
    }

    @Test("Slots missing from the snapshot do not change the score")
    func maskedSlotsIgnored() {
        let d = FeatureLayout.dimension
        var rng = SeededGenerator(seed: 5)
        let c = (0..<d).map { _ in Float(rng.unit()) }
        let m = matrix([bin(1, c)])
        let w = [Float](repeating: 1, count: d)
        var x = FeatureVector()
        for i in 0..<40 { x.set(i, Float(rng.unit())) }
        var y = x
        for i in 40..<d { y.values[i] = 0.9 }  // values under a zero mask
        #expect(m.scores(x, weights: w) == m.scores(y, weights: w))
    }

    @Test("A snapshot equal to a centroid scores 1; its mirror image scores −1")
    func extremes() {
        let d = FeatureLayout.dimension
        var rng = SeededGenerator(seed: 9)
        let c = (0..<d).map { _ in Float(rng.unit()) }
        let m = matrix([bin(1, c)])
        let w = [Float](repeating: 1, count: d)
        let same = FeatureVector(values: c, mask: [Float](repeating: 1, count: d))
        let mirror = FeatureVector(values: c.map { 1 - $0 }, mask: [Float](repeating: 1, count: d))
        #expect(abs(m.scores(same, weights: w)[0] - 1) < 1e-4)
        #expect(abs(m.scores(mirror, weights: w)[0] + 1) < 1e-4)
    }
}

@Suite("Thompson sampling draws")
struct ThompsonSamplingTests {
    @Test("Beta by counts has the mean and variance of Beta(a, b), for small and large shapes")
    func betaByCountsMoments() {
        var rng = SeededGenerator(seed: 21)
        for (a, b) in [(1, 1), (1, 3), (4, 1), (2, 7), (8, 8), (9, 2), (30, 12)] {
            let n = 60_000
            var sum = 0.0, sum2 = 0.0
            for _ in 0..<n {
                let x = rng.beta(counts: a, b)
                #expect(x > 0 && x < 1)
                sum += x
                sum2 += x * x
            }
            let mean = sum / Double(n), variance = sum2 / Double(n) - mean * mean
            let (fa, fb) = (Double(a), Double(b))
            let m = fa / (fa + fb), v = fa * fb / ((fa + fb) * (fa + fb) * (fa + fb + 1))
            #expect(abs(mean - m) < 4 * (v / Double(n)).squareRoot() + 1e-3, "Beta(\(a), \(b)) mean \(mean), expected \(m)")
            #expect(abs(variance - v) < 0.1 * v, "Beta(\(a), \(b)) variance \(variance), expected \(v)")
        }
    }

    @Test("The same seed draws the same samples")
    func deterministic() {
        var r1 = SeededGenerator(seed: 5), r2 = SeededGenerator(seed: 5)
        for k in 1...20 { #expect(r1.beta(counts: k, 21 - k) == r2.beta(counts: k, 21 - k)) }
    }
}

@Suite("Bounded best-k selection")
struct TopKTests {
    @Test("Keeps the k best in order, earlier items first on ties, as a stable sort's prefix")
    func matchesStableSortPrefix() {
        var rng = SeededGenerator(seed: 8)
        for k in 0...6 {
            for n in 0...20 {
                let items = (0..<n).map { (score: Int(rng.next() % 5), index: $0) }
                let expected = Array(items.sorted { $0.score != $1.score ? $0.score > $1.score : $0.index < $1.index }.prefix(k))
                let kept: [(score: Int, index: Int)] = withUnsafeTemporaryAllocation(of: (score: Int, index: Int).self, capacity: k) { buffer in
                    var top = TopK(buffer: buffer)
                    for item in items { top.offer(item) { $0.score > $1.score } }
                    return (0..<top.count).map { top[$0] }
                }
                #expect(kept.map(\.index) == expected.map(\.index), "k \(k), n \(n)")
            }
        }
    }
}
