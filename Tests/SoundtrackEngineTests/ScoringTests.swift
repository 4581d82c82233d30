import Foundation
import SoundtrackContext
import Testing
@testable import SoundtrackEngine

@Suite("Weighted distance scoring")
struct ScoringTests {
    func bin(_ n: Int, _ c: [Float], observed: [Float]? = nil, spread: Float = 0.2) -> Bin {
        Bin(number: n, label: "", centroid: c, spread: [Float](repeating: spread, count: c.count),
            observed: observed ?? [Float](repeating: 1, count: c.count), observations: 1, songs: [], prior: nil,
            createdAt: Date(), updatedAt: Date())
    }

    /// The reference: the weighted mean squared distance over the slots present on both sides,
    /// computed directly, slot by slot.
    func reference(_ x: FeatureVector, _ b: Bin, weights: [Float], config: EngineConfig) -> Double {
        var sw = 0.0, sd = 0.0
        for i in 0..<FeatureLayout.dimension where x.mask[i] > 0 && b.observed[i] >= config.presenceThreshold {
            let d = Double(x.values[i] - b.centroid[i])
            sw += Double(weights[i])
            sd += Double(weights[i]) * d * d
        }
        return sw > 0 ? sd / sw : .infinity
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

    @Test("The CBLAS distances equal the slot-by-slot weighted distance over shared slots")
    func matchesReference() {
        var rng = SeededGenerator(seed: 3)
        let d = FeatureLayout.dimension
        let config = EngineConfig()
        var weights = [Float](repeating: 1, count: d)
        for i in 0..<d { weights[i] = Float(0.2 + rng.unit() * 2) }
        let bins = randomBins(64, rng: &rng)
        var x = FeatureVector()
        for i in 0..<d where rng.unit() < 0.7 { x.set(i, Float(rng.unit())) }
        let m = matrix(bins, config: config)
        let distances = m.distances(x, weights: weights)
        for (b, s) in zip(bins, distances) {
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
            case 0:  // one bin's vectors change (as a served snapshot moves it)
                let r = Int(rng.next() % UInt64(bins.count))
                bins[r].centroid[Int(rng.next() % UInt64(d))] = Float(rng.unit())
                bins[r].observed[Int(rng.next() % UInt64(d))] = Float(rng.unit())
            case 1:  // a new bin
                bins += randomBins(1, rng: &rng)
            case 2:  // a bin replaced by another value
                bins[Int(rng.next() % UInt64(bins.count))] = randomBins(1, rng: &rng)[0]
            default:  // a bin removed (merged away) from the middle
                if bins.count > 2 { bins.remove(at: Int(rng.next() % UInt64(bins.count))) }
            }
            let weights = (0..<d).map { _ in Float(0.2 + rng.unit() * 2) }
            m.sync(bins: bins, config: config)
            #expect(m.binCount == bins.count)
            let fresh = matrix(bins, config: config).distances(x, weights: weights)
            #expect(m.distances(x, weights: weights) == fresh)
            for (b, s) in zip(bins, fresh) {
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

    @Test("Missing is not evidence: slots missing from the snapshot, or unseen by the bin, change nothing")
    func missingSlotsIgnored() {
        let d = FeatureLayout.dimension
        var rng = SeededGenerator(seed: 5)
        let c = (0..<d).map { _ in Float(rng.unit()) }
        var observed = [Float](repeating: 1, count: d)
        for i in 60..<d { observed[i] = 0 }  // the bin never saw these slots
        let m = matrix([bin(1, c, observed: observed)])
        let w = [Float](repeating: 1, count: d)
        var x = FeatureVector()
        for i in 0..<40 { x.set(i, Float(rng.unit())) }
        var y = x
        for i in 40..<d { y.values[i] = 0.9 }  // values under a zero mask
        #expect(m.distances(x, weights: w) == m.distances(y, weights: w))
        var z = x
        for i in 60..<d { z.set(i, 0.1) }  // present in the snapshot, never seen by the bin
        #expect(m.distances(x, weights: w) == m.distances(z, weights: w))
        // Nothing shared at all: no evidence either way, an infinite distance (similarity 0).
        var far = FeatureVector()
        for i in 60..<d { far.set(i, 0.5) }
        #expect(m.distances(far, weights: w)[0] == .infinity)
    }

    @Test("A snapshot equal to a centroid is at distance 0 (similarity 1); farther is less similar")
    func extremes() {
        let d = FeatureLayout.dimension
        var rng = SeededGenerator(seed: 9)
        let c = (0..<d).map { _ in Float(rng.unit()) }
        let m = matrix([bin(1, c)])
        let w = [Float](repeating: 1, count: d)
        let same = FeatureVector(values: c, mask: [Float](repeating: 1, count: d))
        let near = FeatureVector(values: c.map { $0 + 0.1 }, mask: [Float](repeating: 1, count: d))
        let mirror = FeatureVector(values: c.map { 1 - $0 }, mask: [Float](repeating: 1, count: d))
        let ds = [same, near, mirror].map { m.distances($0, weights: w)[0] }
        #expect(abs(ds[0]) < 1e-4)
        #expect(abs(ds[1] - 0.01) < 1e-4)
        #expect(ds[2] > ds[1])
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
