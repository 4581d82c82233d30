import Foundation
import SoundtrackStore

/// Loads users' states on `workers` threads at once (each its own read transaction of the pool),
/// the users split by the same hash (`worker`) that assigns them to workers, and hands worker
/// `w`'s states to `each(w, states)` on that worker's thread (users without a state are left out).
/// Few users (under 64) are loaded in one transaction and handed over on the calling thread.
/// Returns what `each` returned, by worker.
func loadStatesInParallel<R>(
    store: Store, users: [String], workers: Int, defaults: [Float], worker: (String) -> Int,
    each: @Sendable (Int, [String: CachedUserState]) throws -> R
) throws -> [R] {
    let workers = max(1, workers)
    if workers == 1 || users.count < 64 {
        let loaded = try store.loadCachedStates(users: users, defaults: defaults)
        var parts = [[String: CachedUserState]](repeating: [:], count: workers)
        for (user, state) in loaded { parts[worker(user)][user] = state }
        return try (0..<workers).map { try each($0, parts[$0]) }
    }
    var parts = [[String]](repeating: [], count: workers)
    for u in users { parts[worker(u)].append(u) }
    let results = ParallelResults<R>(workers)
    let split = parts
    DispatchQueue.concurrentPerform(iterations: workers) { w in
        let r = Result { try each(w, store.loadCachedStates(users: split[w], defaults: defaults)) }
        results.value.withUnsafeMutableBufferPointer { $0[w] = r }
    }
    return try results.value.map { try $0!.get() }
}

/// One result slot per worker of `concurrentPerform`, each written by its own worker only.
private final class ParallelResults<R>: @unchecked Sendable {
    var value: [Result<R, any Error>?]
    init(_ n: Int) { value = Array(repeating: nil, count: n) }
}

/// One of a worker's lines: its user's ordinal (the order in which the run first met the user), its
/// index in the block, and what the worker keeps for the user.
typealias UserLine<T> = (ordinal: Int, index: Int, value: T)

/// Puts a worker's lines of a block in the order it applies them, as batch and replay both do:
/// each user's lines together (users by ordinal) and each user's lines in input order. A user's
/// state is then brought into the cache once per block instead of once per line; users are
/// independent, so the result is the same as applying the lines in input order.
func groupByUser<T>(_ lines: inout [UserLine<T>]) {
    lines.sort { $0.ordinal != $1.ordinal ? $0.ordinal < $1.ordinal : $0.index < $1.index }
}
