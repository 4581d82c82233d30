import Dispatch
import Foundation
import Logging
import ServiceLifecycle
import SoundtrackStore
import Synchronization

/// The service's single committer: takes the ``UserWrite``s the request handlers queue, commits
/// everything queued so far in one transaction (group commit), then fulfils their tickets. It
/// runs as a service and, on graceful shutdown, commits what is left before it returns.
///
/// The commits run on a thread of their own (`st-commit`), not on Swift's cooperative pool: a
/// commit blocks in SQLite (and in `fsync`), and on the pool every step of the committer would
/// wait in line behind the request handlers' jobs. The queue is bounded
/// (``GroupCommitter/admit()``), so a committer that falls behind slows the picks down instead of
/// piling up writes in memory.
final class GroupCommitter: Service, Sendable {
    /// Writes taken together: the writes (handed to the store as they are) and their tickets.
    struct Batch: Sendable {
        var writes: [UserWrite] = []
        var tickets: [CommitTicket?] = []
        var count: Int { writes.count }
        var isEmpty: Bool { writes.isEmpty }

        mutating func append(_ write: UserWrite, _ ticket: CommitTicket?) {
            writes.append(write)
            tickets.append(ticket)
        }

        /// The first `n` writes, removed from this batch.
        mutating func removeFirst(_ n: Int) -> Batch {
            let head = Batch(writes: Array(writes.prefix(n)), tickets: Array(tickets.prefix(n)))
            writes.removeFirst(n)
            tickets.removeFirst(n)
            return head
        }
    }

    private enum Waiting {
        /// The commit thread is awake.
        case no
        /// It sleeps until a write comes.
        case forWrites
        /// It holds picks back until `oldest + pickDelay`, a write someone waits for, or a full batch.
        case toGather
    }

    private struct State {
        var items = Batch()
        /// Whether the commit thread sleeps (then `wake` must be signalled for it to go on).
        var waiting = Waiting.no
        /// Whether a queued write has someone waiting for its commit (feedback, forget).
        var urgent = false
        /// When the oldest queued write was queued.
        var oldest = ContinuousClock.now
        var closed = false
        /// Handlers waiting in ``admit()`` for the queue to go below `maxQueued`.
        var admissions: [CheckedContinuation<Void, Never>] = []
    }

    private let store: Store
    private let maxBatch: Int
    private let maxQueued: Int
    private let pickDelay: Duration
    /// The nice value the commit thread adds to its priority (``ServerConfiguration/backgroundNice``).
    private let nice: Int32
    private let logger: Logger
    private let metrics: ServerMetrics
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    /// Called with the writes of each commit (committed: `nil`; failed: the error) before their tickets complete.
    let settled: @Sendable ([UserWrite], (any Error)?) -> Void
    /// Called once when the committer is asked to close, before it stops taking writes: the last
    /// writes to queue (the final checkpoint of the users' states).
    let closing: @Sendable () -> Void

    init(
        store: Store, maxBatch: Int, maxQueued: Int, pickDelay: Duration, nice: Int32 = 0, metrics: ServerMetrics, logger: Logger,
        settled: @escaping @Sendable ([UserWrite], (any Error)?) -> Void, closing: @escaping @Sendable () -> Void = {}
    ) {
        self.store = store
        self.nice = nice
        self.maxBatch = max(1, maxBatch)
        self.maxQueued = max(1, maxQueued)
        self.pickDelay = pickDelay
        self.metrics = metrics
        self.logger = logger
        self.settled = settled
        self.closing = closing
    }

    /// Waits while the queue holds `maxQueued` writes or more (back-pressure for picks, which do
    /// not otherwise wait for the committer). Returns at once when the committer is closed.
    func admit() async {
        if state.withLock({ $0.items.count < maxQueued || $0.closed }) { return }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let (now, signal) = state.withLock { s in
                if s.items.count < maxQueued || s.closed { return (true, false) }
                s.admissions.append(c)
                // A committer holding picks back commits them now: someone waits for room.
                guard s.waiting == .toGather else { return (false, false) }
                s.waiting = .no
                return (false, true)
            }
            if now { c.resume() }
            if signal { wake.signal() }
        }
    }

    /// Queues a write. - Throws: ``APIError/unavailable`` once the committer has stopped taking writes.
    func enqueue(_ write: UserWrite, ticket: CommitTicket?) throws(APIError) {
        let signal: Bool = try state.withLock { (s: inout State) throws(APIError) in
            guard !s.closed else { throw APIError.unavailable }
            if s.items.isEmpty { s.oldest = .now }
            s.items.append(write, ticket)
            if ticket != nil { s.urgent = true }
            let signal: Bool
            switch s.waiting {
            case .no: signal = false
            case .forWrites: signal = true
            case .toGather: signal = ticket != nil || s.items.count >= maxBatch
            }
            if signal { s.waiting = .no }
            return signal
        }
        if signal { wake.signal() }
    }

    /// Whether the committer still takes writes.
    var isOpen: Bool { state.withLock { !$0.closed } }

    /// Stops taking writes; what is queued is still committed (``closing`` queues its writes first).
    func close() {
        if isOpen { closing() }
        let (signal, admissions) = state.withLock { s in
            s.closed = true
            defer {
                s.waiting = .no
                s.admissions = []
            }
            return (s.waiting != .no, s.admissions)
        }
        for a in admissions { a.resume() }
        if signal { wake.signal() }
    }

    func run() async throws {
        await runOnThread(named: "st-commit", nice: nice, loop, stop: close)
        logger.info("committer stopped: every queued write is committed")
    }

    /// The commit thread: takes what is queued, commits it, settles it; sleeps when there is nothing.
    /// Picks alone are held back up to `pickDelay` so that more of them share a transaction (each
    /// transaction rewrites the index and session pages it touches, whatever the number of rows).
    private func loop() {
        enum Next {
            case sleep(until: ContinuousClock.Instant?)
            case commit(Batch, admissions: [CheckedContinuation<Void, Never>])
            case exit
        }
        while true {
            let next: Next = state.withLock { s in
                s.waiting = .no
                if s.items.isEmpty {
                    if s.closed { return .exit }
                    s.waiting = .forWrites
                    return .sleep(until: nil)
                }
                let due = s.oldest + pickDelay
                if !s.urgent, !s.closed, s.admissions.isEmpty, s.items.count < maxBatch, ContinuousClock.now < due {
                    s.waiting = .toGather
                    return .sleep(until: due)
                }
                let batch: Batch
                if s.items.count <= maxBatch {
                    batch = s.items
                    s.items = Batch()
                    s.urgent = false
                } else {
                    batch = s.items.removeFirst(maxBatch)
                    s.urgent = s.items.tickets.contains { $0 != nil }
                    s.oldest = .now
                }
                var admissions: [CheckedContinuation<Void, Never>] = []
                if s.items.count < maxQueued {
                    admissions = s.admissions
                    s.admissions = []
                }
                return .commit(batch, admissions: admissions)
            }
            switch next {
            case .exit:
                return
            case .sleep(until: nil):
                wake.wait()
            case let .sleep(until: deadline?):
                let left = ContinuousClock.now.duration(to: deadline)
                _ = wake.wait(timeout: .now() + .nanoseconds(left.nanoseconds))
            case let .commit(batch, admissions):
                for a in admissions { a.resume() }
                commit(batch)
            }
        }
    }

    private func commit(_ batch: Batch) {
        let start = ContinuousClock.now
        do {
            try store.commit(batch.writes)
            metrics.commitSeconds.record(ContinuousClock.now - start)
            metrics.writeBatches.increment()
            metrics.writesCommitted.increment(by: Int64(batch.count))
            settle(batch, nil)
        } catch {
            // One bad write must not sink the others: retry each in its own transaction. A user's
            // writes after one of theirs failed fail too: each was staged on the state the failed one
            // left in memory (a state write after a failed event would hold the event's effect
            // without its row, or delete the pending events of writes that were not committed).
            logger.error("write batch failed; retrying one by one", metadata: ["writes": "\(batch.count)", "error": "\(Self.describe(error))"])
            var failedUsers = Set<String>()
            for (write, ticket) in zip(batch.writes, batch.tickets) {
                let one = Batch(writes: [write], tickets: [ticket])
                if write.users.contains(where: failedUsers.contains) {
                    settle(one, error)
                    continue
                }
                do {
                    try store.commit(one.writes)
                    settle(one, nil)
                } catch {
                    logger.error("write failed", metadata: ["users": "\(write.users.joined(separator: ","))", "error": "\(Self.describe(error))"])
                    failedUsers.formUnion(write.users)
                    settle(one, error)
                }
            }
        }
    }

    private func settle(_ batch: Batch, _ error: (any Error)?) {
        settled(batch.writes, error)
        for ticket in batch.tickets { ticket?.complete(error) }
    }

    /// An error's type and, for SQLite, its result code: never values from requests.
    static func describe(_ error: any Error) -> String {
        String(describing: type(of: error))
    }
}
