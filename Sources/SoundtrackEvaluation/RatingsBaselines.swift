import Foundation
import SoundtrackEngine

/// The training part of a fold of a contextual-ratings data set, coded for the baselines: users,
/// items (in order of first appearance in the file) and context tuples as integers.
struct RatingsTraining {
    var users: Int
    var items: Int
    /// (user, item, rating, context) of each training row, in file order.
    var rows: [(user: Int, item: Int, rating: Double, context: Int)]

    /// Like counts per item (ratings ≥ 4) and rating counts.
    func popularity() -> (liked: [Double], total: [Double]) {
        var liked = [Double](repeating: 0, count: items), total = [Double](repeating: 0, count: items)
        for r in rows {
            total[r.item] += 1
            if r.rating >= 4 { liked[r.item] += 1 }
        }
        return (liked, total)
    }
}

/// A baseline of `eval ratings`: a score for every item for a (user, context) query, higher first.
protocol RatingsBaseline {
    func scores(user: Int, context: Int) -> [Double]
}

/// The most liked items in training (ratings ≥ 4), ties by the number of ratings.
struct PopularityBaseline: RatingsBaseline {
    let s: [Double]
    init(_ t: RatingsTraining) {
        let (liked, total) = t.popularity()
        s = zip(liked, total).map { $0 + 1e-6 * $1 }
    }
    func scores(user: Int, context: Int) -> [Double] { s }
}

/// The user's own items: rated above 2 on average (over all contexts) first, by mean rating; then
/// items the user did not rate, by popularity; items rated 2 or less last. Ties by popularity.
struct OwnMostLikedBaseline: RatingsBaseline {
    var mean: [Int: [Int: (sum: Double, n: Double)]] = [:]
    let pop: [Double]
    init(_ t: RatingsTraining) {
        for r in t.rows {
            mean[r.user, default: [:]][r.item, default: (0, 0)].sum += r.rating
            mean[r.user, default: [:]][r.item, default: (0, 0)].n += 1
        }
        let (liked, total) = t.popularity()
        let p = zip(liked, total).map { $0 + 1e-6 * $1 }
        let top = (p.max() ?? 0) + 1
        pop = p.map { $0 / top }
    }
    func scores(user: Int, context: Int) -> [Double] {
        var s = pop.map { 10 + $0 }
        for (item, e) in mean[user] ?? [:] {
            let m = e.sum / e.n
            s[item] = m > 2 ? 20 + m + pop[item] : pop[item]
        }
        return s
    }
}

/// Popularity among the training ratings given in exactly the query's context (likes), then global
/// popularity (likes, then ratings) as the tie-breaker and back-off.
struct ContextPopularityBaseline: RatingsBaseline {
    var byContext: [Int: [Int: Double]] = [:]
    let global: [Double]
    init(_ t: RatingsTraining) {
        for r in t.rows where r.rating >= 4 { byContext[r.context, default: [:]][r.item, default: 0] += 1 }
        let (liked, total) = t.popularity()
        let p = zip(liked, total).map { $0 + 1e-6 * $1 }
        let top = (p.max() ?? 0) + 1
        global = p.map { $0 / top }
    }
    func scores(user: Int, context: Int) -> [Double] {
        var s = global
        for (item, n) in byContext[context] ?? [:] { s[item] += n }
        return s
    }
}

/// Item-kNN: `sim(i, j) = co(i, j) / (n_i^α n_j^(1−α))` over the binary user × item matrix of likes
/// (`liked`) or of any rating; a user's score for `j` is the sum of similarities to the items of the
/// user's profile (the same matrix's row), `selfWeight` for the item itself; popularity breaks ties.
struct ItemKNNBaseline: RatingsBaseline {
    struct Settings: Sendable, Equatable {
        var liked: Bool
        var alpha: Double
        var selfWeight: Double
    }
    static let grid: [Settings] = [true, false].flatMap { liked in
        [0.5, 0.8].flatMap { alpha in [0.0, 1.0].map { Settings(liked: liked, alpha: alpha, selfWeight: $0) } }
    }

    var sim: [[Double]]
    var profile: [Int: [Int]] = [:]
    let tie: [Double]

    init(_ t: RatingsTraining, _ settings: Settings) {
        var sets: [Int: Set<Int>] = [:]
        for r in t.rows where !settings.liked || r.rating >= 4 { sets[r.user, default: []].insert(r.item) }
        var count = [Double](repeating: 0, count: t.items)
        var co = [[Double]](repeating: [Double](repeating: 0, count: t.items), count: t.items)
        for (_, items) in sets {
            let list = items.sorted()
            for a in list {
                count[a] += 1
                for b in list where b != a { co[a][b] += 1 }
            }
        }
        sim = co
        for i in 0..<t.items {
            for j in 0..<t.items {
                let den = pow(count[i] + 1e-9, settings.alpha) * pow(count[j] + 1e-9, 1 - settings.alpha)
                sim[i][j] = i == j ? settings.selfWeight : (den > 0 ? co[i][j] / den : 0)
            }
        }
        for (u, items) in sets { profile[u] = items.sorted() }
        let (liked, total) = t.popularity()
        let p = zip(liked, total).map { $0 + 1e-6 * $1 }
        let top = (p.max() ?? 0) + 1
        tie = p.map { 1e-6 * $0 / top }
    }

    func scores(user: Int, context: Int) -> [Double] {
        var s = tie
        for l in profile[user] ?? [] {
            for j in s.indices { s[j] += sim[l][j] }
        }
        return s
    }
}

/// Implicit ALS (Hu, Koren and Volinsky 2008) on the user × item like counts (confidence
/// `1 + α · count`), factors of `rank` dimensions, exact alternating solves, seeded start.
struct ALSBaseline: RatingsBaseline {
    struct Settings: Sendable, Equatable {
        var rank: Int
        var lambda: Double
        var alpha: Double
    }
    static let grid: [Settings] = [8, 32].flatMap { f in [0.1, 10, 100].flatMap { l in [1.0, 20].map { Settings(rank: f, lambda: l, alpha: $0) } } }

    var p: [[Double]]
    var q: [[Double]]
    let tie: [Double]

    init(_ t: RatingsTraining, _ s: Settings, seed: UInt64, iterations: Int = 15) {
        let f = s.rank
        var counts = [Int: [Int: Double]]()
        var byItem = [Int: [Int: Double]]()
        for r in t.rows where r.rating >= 4 {
            counts[r.user, default: [:]][r.item, default: 0] += 1
            byItem[r.item, default: [:]][r.user, default: 0] += 1
        }
        var rng = SeededGenerator(seed: seed, user: "als", counter: 0)
        func normal() -> Double { (rng.unit() + rng.unit() + rng.unit() - 1.5) * 0.02 }
        p = (0..<t.users).map { _ in (0..<f).map { _ in normal() } }
        q = (0..<t.items).map { _ in (0..<f).map { _ in normal() } }
        func update(_ x: inout [[Double]], _ y: [[Double]], _ obs: [Int: [Int: Double]]) {
            // YᵀY once, then per row: (YᵀY + Yᵀ(C−I)Y + λI) x = Yᵀ C p.
            var yty = [Double](repeating: 0, count: f * f)
            for v in y { for i in 0..<f { for j in 0..<f { yty[i * f + j] += v[i] * v[j] } } }
            for row in x.indices {
                var a = yty
                for i in 0..<f { a[i * f + i] += s.lambda }
                var b = [Double](repeating: 0, count: f)
                for (col, c) in obs[row] ?? [:] {
                    let conf = s.alpha * c
                    let v = y[col]
                    for i in 0..<f {
                        b[i] += (1 + conf) * v[i]
                        for j in 0..<f { a[i * f + j] += conf * v[i] * v[j] }
                    }
                }
                x[row] = Cholesky.solve(a, b, f) ?? x[row]
            }
        }
        for _ in 0..<iterations {
            update(&p, q, counts)
            update(&q, p, byItem)
        }
        let (liked, total) = t.popularity()
        let pp = zip(liked, total).map { $0 + 1e-6 * $1 }
        let top = (pp.max() ?? 0) + 1
        tie = pp.map { 1e-9 * $0 / top }
    }

    func scores(user: Int, context: Int) -> [Double] {
        q.indices.map { j in zip(p[user], q[j]).reduce(tie[j]) { $0 + $1.0 * $1.1 } }
    }
}
