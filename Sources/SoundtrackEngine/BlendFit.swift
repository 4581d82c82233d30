import CBLAS
import Foundation
import SoundtrackCatalog
import SoundtrackContext

/// Fits the blend of the track ranker on ``BlendExample`` queries: a linear scorer `w · f` trained
/// so that the liked track of each query scores above the query's other tracks (pairwise logistic
/// regression, "RankNet" with a linear model), with an L2 penalty chosen by cross-validation.
///
/// For every (liked `p`, other `q`) pair the loss is `log(1 + exp(−w · (f_p − f_q)))`, weighted so
/// that every user's pairs weigh 1 in total within a source (users count alike, as in the metrics)
/// and every source weighs alike; `λ/2 |w|²` is added and the sum minimised by Newton's method.
/// Weights listed in ``RankerModel/nonNegativeSignals`` are kept at 0 or above (an active set: a
/// weight that comes out negative is fixed at 0 and the rest fitted again), so that neither the
/// user's own evidence nor their neighbours' is ever read backwards. `λ` is the value of
/// ``lambdas`` of best NDCG@k over ``groups`` folds of the users; the weights are then fitted on
/// every query. Deterministic: no randomness.
///
/// ```swift
/// let fit = BlendFit.fit(sources: [examples])
/// let model = RankerModel(weights: fit.weights, source: "fitted")
/// ```
public enum BlendFit {
    /// The L2 strengths tried.
    public static let lambdas: [Double] = [1e-3, 1e-2, 1e-1, 1]
    /// The folds of users that choose `λ`.
    public static let groups = 3

    /// What a fit found.
    public struct Result: Sendable, Equatable {
        /// One weight per signal (``RankerModel/signals``).
        public var weights: [Float]
        /// The L2 strength chosen.
        public var lambda: Double
    }

    /// Fits weights on queries from one or more sources (data sets, populations), each weighing alike.
    /// - Returns: `nil` when no query has a track to rank the liked one against.
    /// - Parameter prior: the weights the penalty pulls towards (`λ/2 |w − prior|²`; zeros by
    ///   default): with few queries the fit stays near the prior, with many it follows the data.
    public static func fit(sources: [[BlendExample]], k: Int = 10, prior: [Float]? = nil) -> Result? {
        let prior = prior.map { $0.map(Double.init) }
        let sources = sources.map { $0.filter { $0.candidates > 1 } }.filter { !$0.isEmpty }
        guard !sources.isEmpty else { return nil }
        var best: (score: Double, lambda: Double)?
        let folds = sources.map(foldsByUser)
        let users = Set(sources.joined().map(\.user))
        if users.count >= groups {
            // Each fold's pairs are built once; its fits run from the strongest penalty down, each
            // starting from the one before.
            var totals = [Double](repeating: 0, count: lambdas.count)
            for held in 0..<groups {
                let train = zip(sources, folds).map { examples, fold in examples.indices.filter { fold[$0] != held }.map { examples[$0] } }
                let test = zip(sources, folds).map { examples, fold in examples.indices.filter { fold[$0] == held }.map { examples[$0] } }
                let pairs = Pairs(train, dimension: RankerModel.signals.count)
                var start: [Double]?
                for (l, lambda) in lambdas.enumerated().reversed() {
                    let w = solve(pairs, lambda: lambda, prior: prior, start: start)
                    start = w.map(Double.init)
                    for part in test where !part.isEmpty { totals[l] += ndcg(part, w, k: k) }
                }
            }
            for (l, lambda) in lambdas.enumerated() where best == nil || totals[l] > best!.score + 1e-9 { best = (totals[l], lambda) }
        }
        let lambda = best?.lambda ?? 1e-3
        return Result(weights: solve(Pairs(sources, dimension: RankerModel.signals.count), lambda: lambda, prior: prior), lambda: lambda)
    }

    /// A blend for sources of different domains that must all be served well (the cold-start blend
    /// that ships): the sources' shares are moved towards the worst served, as in group-robust
    /// optimisation. Each source is first fitted alone (its NDCG then is what it could have); then,
    /// `rounds` times, one blend is fitted on all with the current shares and each source's share
    /// is multiplied by `exp(rate · (1 − NDCG / NDCG alone))`, so that a source the joint blend
    /// serves far below what it could have weighs more in the next fit. `λ` is chosen once, by
    /// ``fit(sources:k:)`` with equal shares.
    /// - Returns: the blend of the last round, its shares, and each source's NDCG under it and alone.
    public static func fitRobust(
        sources: [[BlendExample]], k: Int = 10, rounds: Int = 8, rate: Double = 4
    ) -> (
        result: Result, shares: [Double], ndcg: [Double], alone: [Double]
    )? {
        guard let start = fit(sources: sources, k: k) else { return nil }
        let d = RankerModel.signals.count
        let alone = sources.map { source -> Double in
            guard let own = fit(sources: [source], k: k) else { return 0 }
            return ndcg(source, own.weights, k: k)
        }
        var shares = [Double](repeating: 1 / Double(sources.count), count: sources.count)
        var weights = start.weights
        for _ in 0..<rounds {
            weights = solve(Pairs(sources, dimension: d, shares: shares), lambda: start.lambda, start: weights.map(Double.init))
            for (s, source) in sources.enumerated() where alone[s] > 0 {
                shares[s] *= exp(rate * (1 - ndcg(source, weights, k: k) / alone[s]))
            }
            let total = shares.reduce(0, +)
            shares = shares.map { $0 / total }
        }
        return (Result(weights: weights, lambda: start.lambda), shares, sources.map { ndcg($0, weights, k: k) }, alone)
    }

    /// The signals that take one value in every query of `sources` (0 in data without audio
    /// features, say): the data say nothing of their weights.
    public static func uninformed(_ sources: [[BlendExample]]) -> [Int] {
        (0..<RankerModel.signals.count).filter { i in
            var first: Float?
            for e in sources.joined() {
                for k in 0..<e.candidates {
                    let v = e.signals[k * RankerModel.signals.count + i]
                    if first == nil { first = v } else if v != first { return false }
                }
            }
            return true
        }
    }

    /// `weights` with the signals `signals` fitted on `fill`, every other weight held: how the blend
    /// that ships gets the weights of signals its data sets do not inform (the sound of tracks,
    /// in ratings without audio features) from a simulation that does. The penalty is `λ`.
    public static func fill(_ weights: [Float], signals: [Int], from fill: [BlendExample], lambda: Double) -> [Float] {
        let d = RankerModel.signals.count
        guard !signals.isEmpty, !fill.isEmpty else { return weights }
        var fixed = [Bool](repeating: true, count: d)
        for i in signals { fixed[i] = false }
        var w = weights.map(Double.init)
        let pairs = Pairs([fill], dimension: d)
        for _ in 0...d {
            w = newton(pairs, dimension: d, lambda: lambda, fixed: fixed, start: w, holdFixed: true)
            let negative = RankerModel.nonNegativeSignals.filter { !fixed[$0] && w[$0] < 0 }
            if negative.isEmpty { break }
            for i in negative {
                fixed[i] = true
                w[i] = 0
            }
        }
        return w.map { Float($0) }
    }

    /// Mean over users of the mean NDCG@k of their queries under `weights`: a query scores
    /// `1 / log2(rank + 2)` when its liked track ranks within the first `k` (ties counted against
    /// it, ``BlendExample/rank(under:)``), else 0.
    public static func ndcg(_ examples: [BlendExample], _ weights: [Float], k: Int = 10) -> Double {
        var perUser: [String: (sum: Double, n: Int)] = [:]
        for e in examples {
            let rank = e.rank(under: weights)
            perUser[e.user, default: (0, 0)].sum += rank < k ? 1 / log2(Double(rank + 2)) : 0
            perUser[e.user, default: (0, 0)].n += 1
        }
        guard !perUser.isEmpty else { return 0 }
        return perUser.values.reduce(0.0) { $0 + $1.sum / Double($1.n) } / Double(perUser.count)
    }

    /// Each query's fold: its user's, by a hash of the user's id (stable across runs and processes).
    static func foldsByUser(_ examples: [BlendExample]) -> [Int] {
        examples.map { Int(StableHash.fnv1a($0.user) % UInt64(groups)) }
    }

    /// Newton's method for the weighted pairwise logistic loss with an L2 penalty, with the
    /// non-negative weights held at 0 or above (active set).
    static func solve(_ pairs: Pairs, lambda: Double, prior: [Double]? = nil, start: [Double]? = nil) -> [Float] {
        let d = RankerModel.signals.count
        var fixed = [Bool](repeating: false, count: d)
        var w = start ?? [Double](repeating: 0, count: d)
        for _ in 0...d {
            w = newton(pairs, dimension: d, lambda: lambda, prior: prior, fixed: fixed, start: w)

            let negative = RankerModel.nonNegativeSignals.filter { !fixed[$0] && w[$0] < 0 }
            if negative.isEmpty { break }
            for i in negative { fixed[i] = true }
        }
        return w.map { Float($0) }
    }

    /// The difference vectors `f_p − f_q` of every (liked, other) pair and their weights.
    struct Pairs {
        var diffs: [Double] = []
        var weights: [Double] = []

        /// The pairs of `sources`, source `s` weighing `shares[s]` in all (by default each alike).
        init(_ sources: [[BlendExample]], dimension d: Int, shares: [Double]? = nil) {
            let live = sources.indices.filter { !sources[$0].isEmpty }
            let total = live.reduce(0.0) { $0 + (shares?[$1] ?? 1) }
            for s in live {
                let examples = sources[s]
                var perUser: [String: Int] = [:]
                for e in examples { perUser[e.user, default: 0] += 1 }
                let users = Double(perUser.count), share = (shares?[s] ?? 1) / total
                for e in examples {
                    let each = share / (Double(e.candidates - 1) * Double(perUser[e.user]!) * users)
                    let liked = e.signals(of: 0)
                    for q in 1..<e.candidates {
                        let other = e.signals(of: q)
                        for (a, b) in zip(liked, other) { diffs.append(Double(a - b)) }
                        weights.append(each)
                    }
                }
            }
        }
    }

    /// Newton's method over the free weights (`fixed` ones stay 0, or at their `start` values with
    /// `holdFixed`), from `start` (zeros by default). Each step is three BLAS calls over the pairs: the margins `z = D w`, the gradient
    /// `λ (w − prior) − Dᵀ a` and the Hessian `λ I + Dᵀ diag(b) D` (`a`, `b` the logistic weights of the
    /// pairs at `z`); it stops when no weight moves by 10⁻⁵ or more.
    static func newton(
        _ pairs: Pairs, dimension d: Int, lambda: Double, prior: [Double]? = nil, fixed: [Bool], start: [Double]? = nil,
        holdFixed: Bool = false, iterations: Int = 40
    ) -> [Double] {
        var w = start ?? [Double](repeating: 0, count: d)
        if !holdFixed { for i in 0..<d where fixed[i] { w[i] = 0 } }
        let free = (0..<d).filter { !fixed[$0] }
        let m = free.count, n = pairs.weights.count
        guard m > 0, n > 0 else { return w }
        var z = [Double](repeating: 0, count: n)
        var a = [Double](repeating: 0, count: n)
        var scaled = [Double](repeating: 0, count: n * d)
        var g = [Double](repeating: 0, count: d)
        var h = [Double](repeating: 0, count: d * d)
        for _ in 0..<iterations {
            pairs.diffs.withUnsafeBufferPointer { diffs in
                cblas_dgemv(CblasRowMajor, CblasNoTrans, Int32(n), Int32(d), 1, diffs.baseAddress, Int32(d), w, 1, 0, &z, 1)
                scaled.withUnsafeMutableBufferPointer { out in
                    for p in 0..<n {
                        let s = 1 / (1 + exp(min(30, max(-30, z[p]))))  // σ(−z)
                        a[p] = pairs.weights[p] * s
                        let root = (pairs.weights[p] * s * (1 - s)).squareRoot()
                        for i in 0..<d { out[p * d + i] = root * diffs[p * d + i] }
                    }
                }
                for i in 0..<d { g[i] = lambda * (w[i] - (prior?[i] ?? 0)) }
                cblas_dgemv(CblasRowMajor, CblasTrans, Int32(n), Int32(d), -1, diffs.baseAddress, Int32(d), a, 1, 1, &g, 1)
            }
            cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, Int32(d), Int32(n), 1, scaled, Int32(d), 0, &h, Int32(d))
            var hf = [Double](repeating: 0, count: m * m)
            for (i, fi) in free.enumerated() {
                for (j, fj) in free.enumerated() { hf[i * m + j] = h[min(fi, fj) * d + max(fi, fj)] }
                hf[i * m + i] += lambda
            }
            guard let step = Cholesky.solve(hf, free.map { g[$0] }, m) else { break }
            var largest = 0.0
            for (i, fi) in free.enumerated() {
                w[fi] -= step[i]
                largest = max(largest, abs(step[i]))
            }
            if largest < 1e-5 { break }
        }
        return w
    }
}
