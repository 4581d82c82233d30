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

        /// The users whose writes must go in the next transaction: those of the writes someone
        /// waits for (with a ticket) and of every write that is not a pick (checkpoints of the
        /// view, which spreads them out itself).
        var mustGo: Set<String> {
            var users = Set<String>()
            for (w, t) in zip(writes, tickets) {
                if case .pick = w, t == nil { continue }
                users.formUnion(w.users)
            }
            return users
        }

        /// Removes and returns, in their order, the writes of `users` and those that name no user;
        /// the others stay, in theirs.
        mutating func remove(users: Set<String>) -> Batch {
            var taken = Batch(), kept = Batch()
            for (w, t) in zip(writes, tickets) {
                let named = w.users
                if named.isEmpty || named.contains(where: users.contains) {
                    taken.append(w, t)
                } else {
                    kept.append(w, t)
                }
            }
            self = kept
            return taken
        }

        /// The same writes with each user's together, users in the order of their first write
        /// (a user's writes keep their order): then any prefix that ends at a user's last write
        /// holds all of its users' writes.
        func groupedByUser() -> Batch {
            var order: [String: Int] = [:]
            var keys: [Int] = []
            keys.reserveCapacity(writes.count)
            for w in writes {
                let user = w.users.first ?? ""
                if order[user] == nil { order[user] = order.count }
                keys.append(order[user]!)
            }
            let sorted = keys.indices.sorted { keys[$0] != keys[$1] ? keys[$0] < keys[$1] : $0 < $1 }
            return Batch(writes: sorted.map { writes[$0] }, tickets: sorted.map { tickets[$0] })
        }

    }

    /// Picks that are due, each user's together (``Batch/groupedByUser()``), committed a few
    /// hundred at a time from the front.
    struct Due {
        private var batch = Batch()
        private var next = 0
        var isEmpty: Bool { next >= batch.count }

        init(_ batch: Batch = Batch()) { self.batch = batch.groupedByUser() }

        /// The next writes, at least `count` of them (or all that are left), ending at the last
        /// write of a user.
        mutating func take(atLeast count: Int) -> Batch {
            var end = min(next + count, batch.count)
            if end > next {
                let last = batch.writes[end - 1].users.first ?? ""
                while end < batch.count, (batch.writes[end].users.first ?? "") == last { end += 1 }
            }
            let head = Batch(writes: Array(batch.writes[next..<end]), tickets: Array(batch.tickets[next..<end]))
            next = end
            if isEmpty { self = Due() }
            return head
        }

        /// The writes left of `users` (and those that name no user), removed, in their order.
        mutating func remove(users: Set<String>) -> Batch {
            var rest = Batch(writes: Array(batch.writes[next...]), tickets: Array(batch.tickets[next...]))
            let taken = rest.remove(users: users)
            batch = rest
            next = 0
            return taken
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
    /// About how many picks due go in one transaction (all of a user's together).
    private let chunk: Int
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
        store: Store, maxBatch: Int, chunk: Int = 2048, maxQueued: Int, pickDelay: Duration, nice: Int32 = 0,
        metrics: ServerMetrics,
        logger: Logger,
        settled: @escaping @Sendable ([UserWrite], (any Error)?) -> Void, closing: @escaping @Sendable () -> Void = {}
    ) {
        self.store = store
        self.nice = nice
        self.maxBatch = max(1, maxBatch)
        self.chunk = max(1, min(chunk, self.maxBatch))
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
        try enqueue([write], ticket: ticket)
    }

    /// Queues one user's writes together, in order, `ticket` answered with the last: they are next
    /// to each other in the queue, and the committer keeps a user's neighbouring writes in one
    /// transaction (a new user's row and its onboarding pick).
    func enqueue(_ writes: [UserWrite], ticket: CommitTicket?) throws(APIError) {
        let signal: Bool = try state.withLock { (s: inout State) throws(APIError) in
            guard !s.closed else { throw APIError.unavailable }
            if s.items.isEmpty { s.oldest = .now }
            for (i, write) in writes.enumerated() { s.items.append(write, i == writes.count - 1 ? ticket : nil) }
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
            /// The batch to commit.
            case commit(Batch, admissions: [CheckedContinuation<Void, Never>])
            /// The whole queue, picks not due: what must go now goes (sorted off the lock: the
            /// queue may hold thousands of picks); the rest goes back.
            case urgent(Batch)
            /// The whole queue, picks due: what must go now goes first, in a transaction of its
            /// own; the rest becomes `due`.
            case startDue(Batch)
            /// A transaction of `due` (``commitDue(_:)``).
            case nextOfDue
            case exit
        }
        // Picks that are due, each user's together, put into a transaction `chunk` or so at a time.
        var due = Due()
        while true {
            let next: Next = state.withLock { s in
                s.waiting = .no
                if !due.isEmpty { return .nextOfDue }
                if s.items.isEmpty {
                    if s.closed { return .exit }
                    s.waiting = .forWrites
                    return .sleep(until: nil)
                }
                let dueAt = s.oldest + pickDelay
                let picksDue = s.closed || !s.admissions.isEmpty || s.items.count >= maxBatch || ContinuousClock.now >= dueAt
                if !picksDue && !s.urgent {
                    s.waiting = .toGather
                    return .sleep(until: dueAt)
                }
                let all = s.items
                s.items = Batch()
                s.urgent = false
                if !picksDue { return .urgent(all) }
                if all.count <= chunk { return .commit(all, admissions: takeAdmissions(&s)) }
                return .startDue(all)
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
            case var .startDue(all):
                let first = all.remove(users: all.mustGo)
                due = Due(all)
                let admissions = state.withLock { takeAdmissions(&$0) }
                for a in admissions { a.resume() }
                if !first.isEmpty { commit(first) }
            case .nextOfDue:
                commitDue(&due)
            case var .urgent(rest):
                let batch = rest.remove(users: rest.mustGo)
                let admissions = putBack(rest)
                for a in admissions { a.resume() }
                if !batch.isEmpty { commit(batch) }
            }
        }
    }

    /// Commits picks that are due, in one transaction that takes them `chunk` writes or so at a
    /// time (each user's together) until none are left, or until writes someone waits for were
    /// queued meanwhile: then those and their users' writes (the ones still in `due` first) are
    /// the transaction's last part, and the rest of `due` waits for the next transaction. A
    /// second of picks is thus one transaction when nothing else comes (as few page rewrites as
    /// before), and feedback waits for one part and the commit, not for the whole second.
    private func commitDue(_ due: inout Due) {
        let start = ContinuousClock.now
        var included = Batch()
        var closed = false
        do {
            try store.commit(parts: { () -> [UserWrite]? in
                if closed || due.isEmpty { return nil }
                // At least one part of `due` a transaction, so that feedback cannot starve the picks.
                if !included.isEmpty, let urgent = takeUrgent(&due) {
                    closed = true
                    included.writes += urgent.writes
                    included.tickets += urgent.tickets
                    return urgent.writes
                }
                let part = due.take(atLeast: chunk)
                included.writes += part.writes
                included.tickets += part.tickets
                return part.writes
            })
            metrics.commitSeconds.record(ContinuousClock.now - start)
            metrics.writeBatches.increment()
            metrics.writesCommitted.increment(by: Int64(included.count))
            settle(included, nil)
        } catch {
            retryOneByOne(included, after: error)
        }
    }

    /// The queued writes someone waits for, with every queued write of their users and their writes
    /// still in `due` (older, so first); the other queued writes stay queued. `nil` when none waits.
    private func takeUrgent(_ due: inout Due) -> Batch? {
        guard
            var queued: Batch = state.withLock({ s in
                guard s.urgent else { return nil }
                defer {
                    s.items = Batch()
                    s.urgent = false
                }
                return s.items
            })
        else { return nil }
        let users = queued.mustGo
        var batch = due.remove(users: users)
        let taken = queued.remove(users: users)
        batch.writes += taken.writes
        batch.tickets += taken.tickets
        let admissions = putBack(queued)
        for a in admissions { a.resume() }
        return batch
    }

    /// Puts writes taken from the queue back in front of what was queued since; returns the
    /// handlers waiting for room, if there is room now.
    private func putBack(_ rest: Batch) -> [CheckedContinuation<Void, Never>] {
        state.withLock { s in
            s.items = Batch(writes: rest.writes + s.items.writes, tickets: rest.tickets + s.items.tickets)
            s.urgent = s.items.tickets.contains { $0 != nil }
            return takeAdmissions(&s)
        }
    }

    /// The handlers waiting for room, to be let go when the queue has some.
    private func takeAdmissions(_ s: inout State) -> [CheckedContinuation<Void, Never>] {
        guard s.items.count < maxQueued else { return [] }
        defer { s.admissions = [] }
        return s.admissions
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
            retryOneByOne(batch, after: error)
        }
    }

    /// One bad write must not sink the others: retries each write of a failed batch in its own
    /// transaction.
    private func retryOneByOne(_ batch: Batch, after error: any Error) {
        // A user's writes after one of theirs failed fail too: each was staged on the state the failed one
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

    private func settle(_ batch: Batch, _ error: (any Error)?) {
        settled(batch.writes, error)
        for ticket in batch.tickets { ticket?.complete(error) }
    }

    /// An error's type and, for SQLite, its result code: never values from requests.
    static func describe(_ error: any Error) -> String {
        String(describing: type(of: error))
    }
}
