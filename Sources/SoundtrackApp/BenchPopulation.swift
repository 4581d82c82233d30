import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackStore

/// A deterministic benchmark population for `bench batch` and `bench replay`: many users with many
/// bins each, and JSON Lines of snapshots or feedback events for them.
///
/// Building hundreds of thousands of bins one by one (a similarity search each) would take minutes,
/// so a few template users are built with the engine (``PickBenchmark/syntheticUser(engine:user:bins:queries:seed:)``)
/// and every user is a copy of one of them under its own id. Picks still differ per user: every
/// random choice is seeded by the user id.
public enum BenchPopulation {
    /// The id of the `i`-th user: `bu-00042`.
    public static func userId(_ i: Int) -> String {
        let s = String(i)
        return "bu-" + String(repeating: "0", count: max(0, 5 - s.count)) + s
    }

    /// Writes `users` users with `bins` bins each into the store (in transactions of 500 users).
    /// - Parameters:
    ///   - engine: an engine over the store's catalog in memory.
    ///   - templates: how many distinct template users to copy.
    ///   - at: the creation time written for the users.
    /// - Returns: the mean number of bins a user holds: `bins`, or the engine's bin cap when the
    ///   contexts were more (the closest merged, as for a real user).
    @discardableResult
    public static func build(store: Store, engine: Recommender, users: Int, bins: Int, seed: UInt64, templates: Int = 8, at: Date) throws -> Double {
        let models = (0..<max(1, templates)).map { t in
            PickBenchmark.syntheticUser(engine: engine, user: "template-\(t)", bins: bins, queries: 0, seed: seed &+ UInt64(t)).0
        }
        var writes: [UserWrite] = []
        for i in 0..<users {
            let m = models[i % models.count]
            var s = UserState(
                user: userId(i), bins: m.bins, weights: m.weights, places: m.places, session: SessionState(),
                recentTracks: [], pickCounter: 0, nextBinNumber: m.nextBinNumber,
                vocabulary: m.vocabulary, mergedInto: m.mergedInto)
            for b in s.bins {
                s.changes.bins.insert(b.number)
                s.changes.songs.insert(b.number)
            }
            s.changes.weights = true
            s.changes.places = true
            s.changes.counters = true  // the next bin number: without it, new bins took numbers in use
            writes.append(.addUser(s.user, at: at))
            writes.append(.state(s))
            if writes.count == 1000 {
                try store.commit(writes)
                writes.removeAll(keepingCapacity: true)
            }
        }
        try store.commit(writes)
        return Double(models.map(\.bins.count).reduce(0, +)) / Double(models.count)
    }

    /// JSON Lines of `count` snapshots of random users of the population, drawn from the contexts
    /// the template bins were made from (so most picks land in an existing bin).
    public static func snapshots(count: Int, users: Int, bins: Int, seed: UInt64) -> [UInt8] {
        var rng = SeededGenerator(seed: seed ^ 0x5A5A)
        var out: [UInt8] = []
        out.reserveCapacity(count * 400)
        for _ in 0..<count {
            let user = userId(Int(rng.next() % UInt64(max(1, users))))
            let s = PickBenchmark.randomSnapshot(user: user, rng: &rng, contextId: Int(rng.next() % UInt64(max(1, bins))))
            s.json().write(into: &out)
            out.append(0x0A)
        }
        return out
    }

    /// JSON Lines of `count` feedback events with embedded snapshots, of random users of the
    /// population, on tracks from `tracks`. Each snapshot keeps its context's weekday and time of
    /// day (so most events land in a bin of the user, as a real person's recurring contexts do) on
    /// a later day than the user's previous event (so every user's events are in time order).
    public static func events(count: Int, users: Int, bins: Int, tracks: [String], seed: UInt64) -> [UInt8] {
        var rng = SeededGenerator(seed: seed ^ 0xA5A5)
        var out: [UInt8] = []
        out.reserveCapacity(count * 500)
        let base = DayScenario.firstDay
        let signals: [Signal] = [.like, .skip, .complete, .dislike, .like, .complete]
        var lastDay = [Int](repeating: -1, count: max(1, users))
        for k in 0..<count {
            let u = Int(rng.next() % UInt64(max(1, users)))
            let user = userId(u)
            var s = PickBenchmark.randomSnapshot(user: user, rng: &rng, contextId: Int(rng.next() % UInt64(max(1, bins))))
            let seconds = Int(s.at.date.timeIntervalSince(base))
            let (weekday, second) = (seconds / 86_400 % 7, seconds % 86_400)
            var day = lastDay[u] + 1
            day += (weekday - day % 7 + 7) % 7
            lastDay[u] = day
            let at = Timestamp(date: base.addingTimeInterval(Double(day * 86_400 + second)), offsetSeconds: DayScenario.offset)
            s.at = at
            let e = FeedbackEvent(
                id: "bev-\(k)", user: user, at: at, track: tracks[Int(rng.next() % UInt64(tracks.count))],
                signal: signals[Int(rng.next() % UInt64(signals.count))], playedMs: 30_000 + Int(rng.next() % 200_000), snapshot: s)
            e.json().write(into: &out)
            out.append(0x0A)
        }
        return out
    }
}
