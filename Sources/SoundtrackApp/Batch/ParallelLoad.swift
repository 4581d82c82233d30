import Foundation
import SoundtrackStore

/// Loads users' states on `workers` threads at once (each its own read transaction of the pool),
/// the users split by the same hash that assigns them to workers.
func loadStatesInParallel(
    store: Store, users: [String], workers: Int, defaults: [Float], worker: (String) -> Int
) throws -> [String: (cached: CachedUserState, lastEventAt: Double?)] {
    if workers <= 1 || users.count < 64 {
        return try store.loadCachedStates(users: users, defaults: defaults)
    }
    var parts = [[String]](repeating: [], count: workers)
    for u in users { parts[worker(u)].append(u) }
    final class Results: @unchecked Sendable {
        var value: [Result<[String: (cached: CachedUserState, lastEventAt: Double?)], any Error>]
        init(_ n: Int) { value = Array(repeating: .success([:]), count: n) }
    }
    let results = Results(workers)
    let split = parts
    DispatchQueue.concurrentPerform(iterations: workers) { w in
        let r = Result { try store.loadCachedStates(users: split[w], defaults: defaults) }
        results.value.withUnsafeMutableBufferPointer { $0[w] = r }
    }
    var out: [String: (cached: CachedUserState, lastEventAt: Double?)] = [:]
    out.reserveCapacity(users.count)
    for r in results.value { out.merge(try r.get()) { a, _ in a } }
    return out
}
