import Foundation
import SoundtrackEngine

/// Seeded k-means (Lloyd's iterations from k-means++ starts, the best of several restarts by
/// inertia), the clustering baseline of `soundtrack eval bins`.
///
/// ```swift
/// let labels = KMeans(k: 4, seed: 1).fit(points)   // one cluster index per point
/// ```
public struct KMeans: Sendable {
    /// The number of clusters (at most the number of distinct points is used).
    public var k: Int
    /// The seed of the starts.
    public var seed: UInt64
    /// Restarts; the one of least inertia is kept.
    public var restarts: Int = 10
    /// Iterations per restart at most.
    public var iterations: Int = 100

    /// Creates a clusterer.
    public init(k: Int, seed: UInt64, restarts: Int = 10, iterations: Int = 100) {
        self.k = k
        self.seed = seed
        self.restarts = restarts
        self.iterations = iterations
    }

    /// The cluster of each point (points of equal dimension), in `0..<k`.
    public func fit(_ points: [[Double]]) -> [Int] {
        let n = points.count
        guard n > 0 else { return [] }
        let k = max(1, min(self.k, n))
        var best: (labels: [Int], inertia: Double)?
        for r in 0..<max(1, restarts) {
            var rng = SeededGenerator(seed: seed, user: "kmeans", counter: Int64(r))
            var centres = start(points, k: k, rng: &rng)
            var labels = [Int](repeating: -1, count: n)
            var inertia = 0.0
            for _ in 0..<max(1, iterations) {
                var changed = false
                inertia = 0
                for p in 0..<n {
                    var bestC = 0
                    var bestD = Double.infinity
                    for c in 0..<k {
                        let d = Self.distance(points[p], centres[c])
                        if d < bestD {
                            bestD = d
                            bestC = c
                        }
                    }
                    inertia += bestD
                    if labels[p] != bestC {
                        labels[p] = bestC
                        changed = true
                    }
                }
                if !changed { break }
                let dim = points[0].count
                var sums = [[Double]](repeating: [Double](repeating: 0, count: dim), count: k)
                var counts = [Int](repeating: 0, count: k)
                for p in 0..<n {
                    counts[labels[p]] += 1
                    for i in 0..<dim { sums[labels[p]][i] += points[p][i] }
                }
                for c in 0..<k where counts[c] > 0 {
                    centres[c] = sums[c].map { $0 / Double(counts[c]) }
                }
            }
            if best == nil || inertia < best!.inertia { best = (labels, inertia) }
        }
        return best!.labels
    }

    /// k-means++ starts: the first centre uniformly, each next one with probability proportional
    /// to the squared distance to the nearest centre chosen so far.
    func start(_ points: [[Double]], k: Int, rng: inout SeededGenerator) -> [[Double]] {
        let n = points.count
        var centres = [points[Int(rng.next() % UInt64(n))]]
        var nearest = points.map { Self.distance($0, centres[0]) }
        while centres.count < k {
            let total = nearest.reduce(0, +)
            var pick = 0
            if total > 0 {
                var u = rng.unit() * total
                for p in 0..<n {
                    u -= nearest[p]
                    if u <= 0 {
                        pick = p
                        break
                    }
                    pick = p
                }
            } else {
                pick = Int(rng.next() % UInt64(n))
            }
            centres.append(points[pick])
            for p in 0..<n { nearest[p] = min(nearest[p], Self.distance(points[p], points[pick])) }
        }
        return centres
    }

    static func distance(_ a: [Double], _ b: [Double]) -> Double {
        var s = 0.0
        for i in a.indices {
            let d = a[i] - b[i]
            s += d * d
        }
        return s
    }
}
