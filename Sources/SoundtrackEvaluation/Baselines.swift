import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

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
}

/// Like and dislike counts learned from training events, and the baselines' rankings and scores.
public struct BaselineModel: Sendable {
    let catalog: CatalogIndex
    let seed: UInt64
    var globalLikes: [String: Int] = [:]
    var userLikes: [String: [String: Int]] = [:]
    var userDislikes: [String: [String: Int]] = [:]
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
    public mutating func learn(user: String, track: String, positive: Bool) {
        if positive {
            globalLikes[track, default: 0] += 1
            userLikes[user, default: [:]][track, default: 0] += 1
        } else {
            userDislikes[user, default: [:]][track, default: 0] += 1
        }
    }

    /// Recomputes the most-popular order from the likes counted so far.
    public mutating func refresh() {
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

    /// The first `k` tracks of a baseline for a user, leaving out `excluding`.
    /// - Parameter salt: varies the random baseline between queries (deterministic).
    public func rank(_ kind: BaselineKind, user: String, k: Int, excluding: Set<String> = [], salt: UInt64) -> [String] {
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
        }
        return out
    }

    /// Scores of tracks under a baseline for a user (higher is better), consistent with ``rank``.
    public func scores(_ kind: BaselineKind, user: String, tracks: [String], salt: UInt64) -> [Double] {
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
        }
    }
}
