import Dispatch
import SoundtrackEngine
import SoundtrackStore
import Synchronization

// The thread pool and the writer of ``SoundtrackService/catchUp(workers:usersPerTransaction:eventsPerTransaction:)``.

/// Runs `body` on every state of an array on `workers` threads, each state on one thread, the
/// threads taking the next state as they finish one (states differ in how many events they have).
enum CatchUpWork {
    /// Applies `body` to each element in place; returns each element's error (`nil` when none).
    static func run(
        _ states: inout [CachedUserState], workers: Int, _ body: @Sendable (inout CachedUserState) throws -> Void
    ) -> [String?] {
        let n = states.count
        var errors = [String?](repeating: nil, count: n)
        guard n > 0 else { return errors }
        let next = Atomic<Int>(0)
        states.withUnsafeMutableBufferPointer { s in
            errors.withUnsafeMutableBufferPointer { e in
                let slots = Slots(states: s, errors: e)
                DispatchQueue.concurrentPerform(iterations: max(1, min(workers, n))) { _ in
                    while true {
                        let i = next.wrappingAdd(1, ordering: .relaxed).oldValue
                        guard i < n else { return }
                        do { try body(&slots.states[i]) } catch { slots.errors[i] = "\(error)" }
                    }
                }
            }
        }
        return errors
    }

    /// The two buffers, each element written by the one thread that took its index.
    private struct Slots: @unchecked Sendable {
        let states: UnsafeMutableBufferPointer<CachedUserState>
        let errors: UnsafeMutableBufferPointer<String?>
    }
}

/// Writes the groups of a catch-up in order on a thread of its own, so that the next group is
/// loaded and caught up meanwhile; at most two groups wait (memory stays bounded). A group whose
/// transaction fails is written again one user at a time, so that one user's failure is only theirs.
final class CatchUpWriter: @unchecked Sendable {
    private let store: Store
    private let queue = DispatchQueue(label: "soundtrack.catch-up.writer")
    private let room = DispatchSemaphore(value: 2)
    private let outcome = Mutex<(failed: [String: String], skipped: [String])>(([:], []))

    init(store: Store) { self.store = store }

    /// Queues a group's states (blocks while two groups wait).
    func write(_ states: [(state: UserState, mark: PendingMark)]) {
        guard !states.isEmpty else { return }
        room.wait()
        queue.async { [self] in
            defer { room.signal() }
            do {
                let skipped = try store.commitCaughtUp(states)
                outcome.withLock { $0.skipped += skipped }
            } catch {
                for s in states {
                    do {
                        let skipped = try store.commitCaughtUp([s])
                        outcome.withLock { $0.skipped += skipped }
                    } catch {
                        outcome.withLock { $0.failed[s.state.user] = "\(error)" }
                    }
                }
            }
        }
    }

    /// Waits for the queued groups; the users whose states could not be written (with why), and
    /// those left as another writer wrote them.
    func finish() -> (failed: [String: String], skipped: [String]) {
        queue.sync {}
        return outcome.withLock { $0 }
    }
}

/// A catch-up's catalog could not be read: not one user's failure.
struct CatalogFailure: Error {
    let error: any Error
}

/// A group of the catch-up as read from the database: its users' states with their pending
/// events, the picks those name, and each state's pending mark.
struct CatchUpGroup: Sendable {
    var states: [CachedUserState]
    var picks: [String: PickRecord]
    var marks: [PendingMark]
}

/// A value computed on another thread from the moment it is created.
final class InBackground<T: Sendable>: @unchecked Sendable {
    private let done = DispatchGroup()
    private var result: Result<T, any Error>?

    init(_ compute: @escaping @Sendable () throws -> T) {
        done.enter()
        DispatchQueue.global().async { [self] in
            result = Result { try compute() }
            done.leave()
        }
    }

    /// The value, once computed (waits for it).
    func value() throws -> T {
        done.wait()
        return try result!.get()
    }
}
