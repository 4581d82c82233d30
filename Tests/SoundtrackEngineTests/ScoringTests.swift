import Foundation
import SoundtrackCatalog
import SoundtrackContext
import Testing

@testable import SoundtrackEngine

@Suite("Weighted distance scoring")
struct ScoringTests {
    func bin(_ n: Int, _ c: [Float], observed: [Float]? = nil, spread: Float = 0.2) -> Bin {
        Bin(
            number: n, label: "", centroid: c, spread: [Float](repeating: spread, count: c.count),
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

    @Test("A pick's why is the rows that agree, best share × agreement first, ties by slot: the prefix of the whole sorted list")
    func whyIsTheBestRowsTiesBySlot() {
        let d = FeatureLayout.dimension
        let config = EngineConfig()
        let vocabulary = FeatureVocabulary()
        /// The definition: every row built, those that agree sorted, the first `count` named.
        func reference(_ m: ScoringMatrix, row: Int, centroid: [Float], x: FeatureVector, weights: [Float], count: Int) -> [Explanation] {
            var v = [Float](repeating: 0, count: d)
            var s0: Float = 0
            for i in 0..<d {
                v[i] = weights[i] * m.separation[i] * m.m[(m.binCount + row) * d + i] * x.mask[i]
                s0 += v[i]
            }
            guard s0 > 1e-6 else { return [] }
            var rows: [(share: Float, agreement: Float, slot: Int)] = []
            var rowOfKey = [Int](repeating: -1, count: d)
            for i in 0..<d where v[i] > 0 {
                if ExplanationSlots.categorical[i], x.values[i] < 0.5 { continue }
                let agreement = 1 - min(1, abs(x.values[i] - centroid[i]))
                let key = ExplanationSlots.mergeKey[i]
                if rowOfKey[key] >= 0 {
                    let k = rowOfKey[key]
                    let total = rows[k].share + v[i] / s0
                    rows[k].agreement = (rows[k].agreement * rows[k].share + agreement * v[i] / s0) / total
                    rows[k].share = total
                    continue
                }
                rowOfKey[key] = rows.count
                rows.append((v[i] / s0, agreement, i))
            }
            return rows.filter { $0.agreement >= 0.5 }
                .sorted { ($0.share * $0.agreement, $1.slot) > ($1.share * $1.agreement, $0.slot) }
                .prefix(count)
                .map {
                    Explanation(
                        feature: vocabulary.displayName(slot: $0.slot, value: x.values[$0.slot]), weight: $0.share,
                        similarity: $0.agreement, contribution: $0.share * $0.agreement)
                }
        }
        var rng = SeededGenerator(seed: 21)
        // Values and weights on a coarse grid, so that many rows tie exactly.
        func grid(_ steps: Int) -> Float { Float(Int(rng.next() % UInt64(steps + 1))) / Float(steps) }
        var ties = 0
        for _ in 0..<200 {
            var bins = randomBins(6, rng: &rng)
            for b in bins.indices {
                bins[b].centroid = (0..<d).map { _ in grid(4) }
                bins[b].observed = (0..<d).map { _ in rng.unit() < 0.8 ? 1 : 0 }
            }
            let m = matrix(bins, config: config)
            var x = FeatureVector()
            for i in 0..<d where rng.unit() < 0.7 { x.set(i, grid(4)) }
            let weights = (0..<d).map { _ in 1 + grid(1) }
            let row = Int(rng.next() % UInt64(bins.count))
            let all = reference(m, row: row, centroid: bins[row].centroid, x: x, weights: weights, count: d)
            ties += zip(all, all.dropFirst()).filter { $0.contribution == $1.contribution }.count
            for count in [0, 1, 3, 5, 8, d] {
                let got = m.topContributions(row: row, centroid: bins[row].centroid, x: x, weights: weights, vocabulary: vocabulary, count: count)
                #expect(got == reference(m, row: row, centroid: bins[row].centroid, x: x, weights: weights, count: count), "count \(count)")
            }
        }
        #expect(ties > 100, "the grid makes rows tie (\(ties) adjacent ties)")
    }

    @Test("A pick's track_why is the largest positive contributions, ties by name")
    func topSignalsAreTheLargestTiesByName() {
        let names = RankerModel.signals
        var rng = SeededGenerator(seed: 13)
        for _ in 0..<300 {
            // Contributions on a coarse grid (many ties), some zero or negative.
            let features = (0..<names.count).map { _ in Float(Int(rng.next() % 5)) - 1 }
            let weights = (0..<names.count).map { _ in Float(Int(rng.next() % 3)) * 0.5 }
            let slice = ([9] + features)[1...]  // a slice that does not start at 0, as the ranker's are
            for count in 0...5 {
                let expected = zip(names, zip(weights, features).map(*))
                    .filter { $0.1 > 0 }
                    .sorted { ($0.1, $1.0) > ($1.1, $0.0) }
                    .prefix(count)
                    .map { Pick.Signal(name: $0.0, contribution: $0.1) }
                #expect(Recommender.topSignals(slice, weights: weights, names: names, count: count) == expected)
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
