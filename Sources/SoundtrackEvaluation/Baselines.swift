import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import Synchronization

/// The baselines every evaluation reports next to the engine, computed on the same split.
public enum BaselineKind: String, Sendable, CaseIterable {
    /// The tracks with the most likes in the training events of all users (ties: the catalog's
    /// `popularity`, then the track id). The same list for every user and context.
    case mostPopular = "most_popular"
    /// The user's own most liked tracks in training (most likes, then fewest dislikes), filled up
    /// with the most popular; context-free.
    case userMostLiked = "user_most_liked"
    /// Tracks drawn uniformly from the catalog with a seeded generator.
    case random
    /// Item-kNN: the tracks most similar to the user's liked tracks, similarity being the cosine of
    /// the tracks' vectors of likers (co-likes over √ of the likers of each), a liked track counting
    /// 1 for itself (people come back to their tracks); filled up with the most popular.
    case itemKNN = "item_knn"
    /// Implicit ALS (32 factors, confidence `1 + 10 · likes`, λ 1, 10 sweeps, seeded) on the
    /// training likes, refitted with the most-popular order; filled up with the most popular.
    case als
    /// Popularity pre-filtered by context: the tracks liked most in contexts sharing the query's
    /// attributes (part of the day, weekday or weekend, place, activity, devices, tags…); ties and
    /// back-off: the most popular.
    case contextPopular = "context_popular"
}

/// Like and dislike counts learned from training events, and the baselines' rankings and scores.
public struct BaselineModel: Sendable {
    let catalog: CatalogIndex
    let seed: UInt64
    var globalLikes: [String: Int] = [:]
    var userLikes: [String: [String: Int]] = [:]
    var userDislikes: [String: [String: Int]] = [:]
    /// Co-likes and context likes (the engine's ``Community`` over the training events).
    var community = Community()
    /// The ALS factors of the last ``refresh()``: users and tracks (by catalog row).
    var userFactors: [String: [Float]] = [:]
    var itemFactors: [Int: [Float]] = [:]
    /// Rankings computed since the model last learned, per user (and context): a test phase asks
    /// the same user many times.
    final class Memo: Sendable {
        let knn = Mutex<[String: [Int: Float]]>([:])
        let knnOrder = Mutex<[String: [Int]]>([:])
        let als = Mutex<[String: [Int]]>([:])
        let context = Mutex<[[UInt64]: [Int]]>([:])
    }
    var memo = Memo()
    /// The catalog by `popularity` (descending), then id: the order before any like.
    let catalogOrder: [String]
    /// The most-popular order as of the last ``refresh()``.
    private(set) var popularOrder: [String]
    private(set) var popularPosition: [String: Int]

    /// An empty model over a catalog.
    public init(catalog: CatalogIndex, seed: UInt64) {
        self.catalog = catalog
        self.seed = seed
        let order = catalog.tracks.sorted { ($0.popularity ?? 0, $1.id) > ($1.popularity ?? 0, $0.id) }.map(\.id)
        catalogOrder = order
        popularOrder = order
        var pos: [String: Int] = [:]
        for (i, id) in order.enumerated() { pos[id] = i }
        popularPosition = pos
    }

    /// Counts one training event.
    /// - Parameter context: the event's context attributes (``ContextAttributes``), for the
    ///   context-filtered popularity.
    public mutating func learn(user: String, track: String, positive: Bool, context: [UInt64] = []) {
        if positive {
            globalLikes[track, default: 0] += 1
            userLikes[user, default: [:]][track, default: 0] += 1
        } else {
            userDislikes[user, default: [:]][track, default: 0] += 1
        }
        if let row = catalog.row(of: track) {
            community.record(user: user, row: row, like: positive, dislike: !positive, attributes: context)
        }
        memo = Memo()
    }

    /// The context attributes of a snapshot as the baselines see them (a fresh vocabulary: tags
    /// and labelled places by name).
    public static func attributes(of snapshot: Snapshot) -> [UInt64] {
        ContextAttributes.of(
            FeatureExtractor().extract(snapshot),
            vocabulary: {
                var places = PlaceBook(), vocabulary = FeatureVocabulary()
                _ = FeatureExtractor().extract(snapshot, places: &places, vocabulary: &vocabulary)
                return vocabulary
            }())
    }

    /// Recomputes the most-popular order and refits the ALS factors from the likes counted so far.
    public mutating func refresh() {
        memo = Memo()
        fitALS()
        let base = catalogPosition
        let liked = globalLikes.keys.sorted { a, b in
            let la = globalLikes[a]!, lb = globalLikes[b]!
            return la != lb ? la > lb : (base[a] ?? .max, a) < (base[b] ?? .max, b)
        }
        popularOrder = liked + catalogOrder.filter { globalLikes[$0] == nil }
        var pos: [String: Int] = [:]
        for (i, id) in popularOrder.enumerated() { pos[id] = i }
        popularPosition = pos
    }

    private var catalogPosition: [String: Int] {
        var pos: [String: Int] = [:]
        for (i, id) in catalogOrder.enumerated() { pos[id] = i }
        return pos
    }

    /// The user's liked tracks in the order of ``BaselineKind/userMostLiked``.
    func userOrder(_ user: String) -> [String] {
        guard let likes = userLikes[user] else { return [] }
        let dislikes = userDislikes[user] ?? [:]
        return likes.keys.sorted { a, b in
            let ka = (likes[a]!, -(dislikes[a] ?? 0)), kb = (likes[b]!, -(dislikes[b] ?? 0))
            if ka != kb { return ka > kb }
            return (popularPosition[a] ?? .max, a) < (popularPosition[b] ?? .max, b)
        }
    }

    /// Implicit ALS on the users' like counts (see ``BaselineKind/als``).
    mutating func fitALS(rank f: Int = 32, lambda: Float = 1, alpha: Float = 10, sweeps: Int = 10) {
        var byUser: [String: [Int: Float]] = [:], byItem: [Int: [String: Float]] = [:]
        for (user, likes) in userLikes {
            for (track, n) in likes {
                guard let row = catalog.row(of: track) else { continue }
                byUser[user, default: [:]][row] = Float(n)
                byItem[row, default: [:]][user] = Float(n)
            }
        }
        guard !byUser.isEmpty else { return }
        var rng = SeededGenerator(seed: seed, user: "als", counter: 0)
        func start() -> [Float] { (0..<f).map { _ in Float(rng.unit() - 0.5) * 0.02 } }
        var users = Dictionary(uniqueKeysWithValues: byUser.keys.sorted().map { ($0, start()) })
        var items = Dictionary(uniqueKeysWithValues: byItem.keys.sorted().map { ($0, start()) })
        func sweep<A: Hashable, B: Hashable>(_ x: inout [A: [Float]], _ y: [B: [Float]], _ obs: [A: [B: Float]]) {
            var yty = [Double](repeating: 0, count: f * f)
            for v in y.values { for i in 0..<f { for j in 0..<f { yty[i * f + j] += Double(v[i] * v[j]) } } }
            for (key, seen) in obs {
                var a = yty
                for i in 0..<f { a[i * f + i] += Double(lambda) }
                var b = [Double](repeating: 0, count: f)
                for (other, n) in seen {
                    guard let v = y[other] else { continue }
                    let c = Double(alpha * n)
                    for i in 0..<f {
                        b[i] += (1 + c) * Double(v[i])
                        for j in 0..<f { a[i * f + j] += c * Double(v[i] * v[j]) }
                    }
                }
                if let solved = Cholesky.solve(a, b, f) { x[key] = solved.map { Float($0) } }
            }
        }
        for _ in 0..<sweeps {
            sweep(&users, items, byUser)
            sweep(&items, users, byItem)
        }
        userFactors = users
        itemFactors = items
    }

    /// The tracks with factors by ALS score for a user, best first (the first 500).
    func alsOrder(_ user: String) -> [Int] {
        if let m = memo.als.withLock({ $0[user] }) { return m }
        guard let p = userFactors[user] else { return [] }
        let order = itemFactors.map { row, q in (row, zip(p, q).reduce(0) { $0 + $1.0 * $1.1 }) }
            .sorted { ($0.1, $1.0) > ($1.1, $0.0) }.prefix(500).map(\.0)
        memo.als.withLock { $0[user] = order }
        return order
    }

    /// Item-kNN scores of tracks for a user (the user's liked tracks left out).
    func knnScores(_ user: String) -> [Int: Float] {
        if let m = memo.knn.withLock({ $0[user] }) { return m }
        let liked = (userLikes[user] ?? [:]).keys.compactMap { catalog.row(of: $0) }.sorted()
        var scores = community.neighbourScores(of: liked, liked: true)
        for l in liked { scores[l, default: 0] += 1 }
        memo.knn.withLock { $0[user] = scores }
        return scores
    }

    /// Item-kNN's order for a user, best first (the first 500).
    func knnOrder(_ user: String) -> [Int] {
        if let m = memo.knnOrder.withLock({ $0[user] }) { return m }
        let order = knnScores(user).sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(500).map(\.key)
        memo.knnOrder.withLock { $0[user] = order }
        return order
    }

    /// The context-filtered popularity order for a context (the first 500).
    func contextOrder(_ context: [UInt64]) -> [Int] {
        if let m = memo.context.withLock({ $0[context] }) { return m }
        let order = community.contextOrder(context, limit: 500)
        memo.context.withLock { $0[context] = order }
        return order
    }

    /// The first `k` tracks of a baseline for a user, leaving out `excluding`.
    /// - Parameters:
    ///   - salt: varies the random baseline between queries (deterministic).
    ///   - context: the query's context attributes (``attributes(of:)``), for ``BaselineKind/contextPopular``.
    public func rank(_ kind: BaselineKind, user: String, k: Int, excluding: Set<String> = [], salt: UInt64, context: [UInt64] = []) -> [String] {
        var out: [String] = []
        var taken = Set<String>()
        func take(_ ids: [String]) {
            for id in ids {
                if out.count >= k { return }
                if !excluding.contains(id) && taken.insert(id).inserted { out.append(id) }
            }
        }
        switch kind {
        case .mostPopular:
            take(popularOrder)
        case .userMostLiked:
            take(userOrder(user))
            take(popularOrder)
        case .random:
            var rng = SeededGenerator(seed: seed ^ salt, user: user, counter: 0x7261_6e64)
            var tries = 0
            while out.count < min(k, catalog.count - excluding.count), tries < 100 * k {
                tries += 1
                take([catalog.tracks[Int(rng.next() % UInt64(catalog.count))].id])
            }
        case .itemKNN:
            take(knnOrder(user).map { catalog.tracks[$0].id })
            take(popularOrder)
        case .als:
            take(alsOrder(user).map { catalog.tracks[$0].id })
            take(popularOrder)
        case .contextPopular:
            take(contextOrder(context).map { catalog.tracks[$0].id })
            take(popularOrder)
        }
        return out
    }

    /// Scores of tracks under a baseline for a user (higher is better), consistent with ``rank``.
    public func scores(_ kind: BaselineKind, user: String, tracks: [String], salt: UInt64, context: [UInt64] = []) -> [Double] {
        switch kind {
        case .mostPopular:
            return tracks.map { -Double(popularPosition[$0] ?? popularOrder.count) }
        case .userMostLiked:
            let order = userOrder(user)
            var pos: [String: Int] = [:]
            for (i, id) in order.enumerated() { pos[id] = i }
            return tracks.map { t in
                if let p = pos[t] { return -Double(p) }
                return -Double(order.count + (popularPosition[t] ?? popularOrder.count))
            }
        case .random:
            return tracks.map { t in
                Double(StableHash.mix(seed ^ salt ^ StableHash.fnv1a(user) ^ StableHash.fnv1a(t)) >> 11) * 0x1.0p-53
            }
        case .itemKNN:
            let knn = knnScores(user)
            return tracks.map { t in
                let pop = -Double(popularPosition[t] ?? popularOrder.count) / Double(max(1, popularOrder.count)) * 1e-6
                return Double(catalog.row(of: t).flatMap { knn[$0] } ?? 0) + pop
            }
        case .als:
            guard let p = userFactors[user] else { return scores(.mostPopular, user: user, tracks: tracks, salt: salt) }
            return tracks.map { t in
                guard let row = catalog.row(of: t), let q = itemFactors[row] else { return -1e9 }
                return Double(zip(p, q).reduce(0) { $0 + $1.0 * $1.1 })
            }
        case .contextPopular:
            return tracks.map { t in
                let pop = -Double(popularPosition[t] ?? popularOrder.count) / Double(max(1, popularOrder.count)) * 1e-6
                return Double(catalog.row(of: t).map { community.contextLikes(of: $0, attributes: context) } ?? 0) + pop
            }
        }
    }
}
