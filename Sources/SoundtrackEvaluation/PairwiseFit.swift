import Foundation

/// Fits the blend of the track ranker: a linear scorer `w · f` trained so that, within each query,
/// relevant tracks score above the others (pairwise logistic regression, "RankNet" with a linear
/// model), with an L2 penalty chosen by cross-validation over the query groups.
///
/// For every query and every (relevant `p`, other `q`) pair of its candidates the loss is
/// `log(1 + exp(−w · (f_p − f_q)))`, weighted so that every user's pairs weigh 1 in total (users
/// count alike, as in the metrics); `λ/2 |w|²` is added and the sum minimised by Newton's method.
/// `λ` is the value of ``lambdas`` whose leave-one-group-out NDCG@10 is best; the weights are
/// then fitted on all groups. Deterministic: no randomness.
public enum PairwiseFit {
    /// One query: its user, its candidates' signal vectors and which candidates are relevant.
    public struct Query: Sendable {
        /// Users weigh alike: a user's queries share one unit of weight.
        public var user: String
        /// One signal vector per candidate.
        public var features: [[Float]]
        /// Whether each candidate is relevant.
        public var relevant: [Bool]

        /// Creates a query.
        public init(user: String, features: [[Float]], relevant: [Bool]) {
            self.user = user
            self.features = features
            self.relevant = relevant
        }
    }

    /// The L2 strengths tried.
    public static let lambdas: [Double] = [1e-4, 1e-3, 1e-2, 1e-1]

    /// Fits weights on query groups (for example the inner folds of a training set).
    /// - Returns: the weights and the chosen `λ`.
    public static func fit(groups: [[Query]], k: Int = 10) -> (weights: [Float], lambda: Double) {
        let useful = groups.map { $0.filter { q in q.relevant.contains(true) && q.relevant.contains(false) } }
        let dimension = useful.lazy.flatMap { $0 }.first?.features.first?.count ?? 0
        guard dimension > 0 else { return ([], lambdas[0]) }
        var best: (score: Double, lambda: Double)?
        if useful.count > 1 {
            for lambda in lambdas {
                var total = 0.0
                for held in useful.indices {
                    let train = useful.indices.filter { $0 != held }.flatMap { useful[$0] }
                    let w = solve(train, dimension: dimension, lambda: lambda)
                    total += ndcg(useful[held], w, k: k)
                }
                let score = total / Double(useful.count)
                if best == nil || score > best!.score + 1e-9 { best = (score, lambda) }
            }
        }
        let lambda = best?.lambda ?? 1e-3
        let w = solve(useful.flatMap { $0 }, dimension: dimension, lambda: lambda)
        return (w.map { Float($0) }, lambda)
    }

    /// Newton's method for the weighted pairwise logistic loss with an L2 penalty.
    static func solve(_ queries: [Query], dimension d: Int, lambda: Double, iterations: Int = 50) -> [Double] {
        // Difference vectors and weights of all (relevant, other) pairs.
        var perUser: [String: Int] = [:]
        for q in queries { perUser[q.user, default: 0] += 1 }
        var diffs: [Double] = []
        var weights: [Double] = []
        for q in queries {
            let pos = q.relevant.indices.filter { q.relevant[$0] }, neg = q.relevant.indices.filter { !q.relevant[$0] }
            let each = 1 / (Double(pos.count * neg.count) * Double(perUser[q.user]!))
            for p in pos {
                for n in neg {
                    for i in 0..<d { diffs.append(Double(q.features[p][i] - q.features[n][i])) }
                    weights.append(each)
                }
            }
        }
        let total = weights.reduce(0, +)
        guard total > 0 else { return [Double](repeating: 0, count: d) }
        for i in weights.indices { weights[i] /= total }
        let m = weights.count
        var w = [Double](repeating: 0, count: d)
        for _ in 0..<iterations {
            var g = w.map { lambda * $0 }
            var h = [Double](repeating: 0, count: d * d)
            for i in 0..<d { h[i * d + i] = lambda }
            for p in 0..<m {
                let base = p * d
                var z = 0.0
                for i in 0..<d { z += w[i] * diffs[base + i] }
                let s = 1 / (1 + exp(min(30, max(-30, z))))  // σ(−z)
                let a = weights[p] * s, b = weights[p] * s * (1 - s)
                for i in 0..<d {
                    let di = diffs[base + i]
                    g[i] -= a * di
                    guard b > 0 else { continue }
                    for j in i..<d { h[i * d + j] += b * di * diffs[base + j] }
                }
            }
            for i in 0..<d { for j in 0..<i { h[i * d + j] = h[j * d + i] } }
            guard let step = choleskySolve(h, g, d) else { break }
            var largest = 0.0
            for i in 0..<d {
                w[i] -= step[i]
                largest = max(largest, abs(step[i]))
            }
            if largest < 1e-8 { break }
        }
        return w
    }

    /// Mean over users of the mean NDCG@k of their queries under weights `w` (relevant candidates
    /// only; ties by candidate order).
    static func ndcg(_ queries: [Query], _ w: [Double], k: Int) -> Double {
        var perUser: [String: (sum: Double, n: Int)] = [:]
        for q in queries {
            let scores = q.features.map { f in zip(f, w).reduce(0.0) { $0 + Double($1.0) * $1.1 } }
            let order = scores.indices.sorted { (scores[$0], $1) > (scores[$1], $0) }
            var dcg = 0.0
            for (rank, c) in order.prefix(k).enumerated() where q.relevant[c] { dcg += 1 / log2(Double(rank + 2)) }
            let r = q.relevant.filter { $0 }.count
            var idcg = 0.0
            for rank in 0..<min(k, r) { idcg += 1 / log2(Double(rank + 2)) }
            perUser[q.user, default: (0, 0)].sum += idcg > 0 ? dcg / idcg : 0
            perUser[q.user, default: (0, 0)].n += 1
        }
        guard !perUser.isEmpty else { return 0 }
        return perUser.values.reduce(0.0) { $0 + $1.sum / Double($1.n) } / Double(perUser.count)
    }

    /// Solves `A x = b` for a symmetric positive definite `A` (row-major, n × n); `nil` if it is not.
    static func choleskySolve(_ a: [Double], _ b: [Double], _ n: Int) -> [Double]? {
        var l = [Double](repeating: 0, count: n * n)
        for i in 0..<n {
            for j in 0...i {
                var s = a[i * n + j]
                for k in 0..<j { s -= l[i * n + k] * l[j * n + k] }
                if i == j {
                    guard s > 1e-15 else { return nil }
                    l[i * n + i] = s.squareRoot()
                } else {
                    l[i * n + j] = s / l[j * n + j]
                }
            }
        }
        var y = [Double](repeating: 0, count: n)
        for i in 0..<n {
            var s = b[i]
            for k in 0..<i { s -= l[i * n + k] * y[k] }
            y[i] = s / l[i * n + i]
        }
        var x = [Double](repeating: 0, count: n)
        for i in stride(from: n - 1, through: 0, by: -1) {
            var s = y[i]
            for k in (i + 1)..<n { s -= l[k * n + i] * x[k] }
            x[i] = s / l[i * n + i]
        }
        return x
    }
}
