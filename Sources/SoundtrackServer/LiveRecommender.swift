import Foundation
import Logging
import Synchronization
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackStore

/// The recommender as the HTTP service runs it: each user's state cached in memory behind a
/// per-user lock, the engine run on it, and what changed handed to the ``GroupCommitWriter``.
///
/// Consistency: a user's writes are queued in the order they were applied in memory, and the
/// single writer commits them in that order, so the database always holds a prefix of the
/// in-memory history. Picks answer at once (their write follows in the next batch); feedback
/// answers only after the batch holding it has committed. A write that fails evicts its user,
/// whose state is then reloaded from the database.
public final class LiveRecommender: Sendable {
    /// The outcome of one feedback event.
    public enum FeedbackResult: Sendable, Equatable {
        /// Applied and committed.
        case applied(FeedbackOutcome)
        /// An event with this id was committed before: nothing changed.
        case duplicate
    }

    final class Slot: Sendable {
        enum Value {
            case empty
            case loaded(CachedUserState)
            case forgotten
        }

        let value = Mutex<Value>(.empty)
    }

    private struct PendingEvent {
        var user: String
        var ticket: CommitTicket
    }

    /// The database.
    public let store: Store
    let engine: Recommender
    let metrics: ServerMetrics
    let logger: Logger
    private let slots = Mutex<[String: Slot]>([:])
    private let pendingPicks = Mutex<[String: PickRecord]>([:])
    private let pendingEvents = Mutex<[String: PendingEvent]>([:])
    private let writerBox = Mutex<GroupCommitWriter?>(nil)
    private let pickIds: PickIds

    /// Creates the live recommender over a service's store and engine, with the whole catalog
    /// index in memory. Pick ids follow the greatest of the service's ids in the database (``PickIds``).
    init(service: SoundtrackService, index: CatalogIndex, clock: ServerClock, metrics: ServerMetrics, logger: Logger) throws {
        store = service.store
        let last = try store.greatestPickId(from: PickIds.range.lower, below: PickIds.range.upper).flatMap(PickIds.value(of:))
        pickIds = PickIds(after: last ?? 0, now: clock.now)
        engine = service.engine.with(catalog: IndexCatalog(index))
        self.metrics = metrics
        self.logger = logger
    }

    var writer: GroupCommitWriter {
        writerBox.withLock { $0! }
    }

    func attach(_ writer: GroupCommitWriter) {
        writerBox.withLock { $0 = writer }
    }

    // MARK: - Picks

    /// Picks a track for a snapshot: from the cached state, learning unless `learn` is false.
    /// A learning pick first waits while the writer's queue is full (it does not wait for its own commit).
    /// - Throws: ``APIError`` `unknown_user` for an unknown user, `unavailable` when shutting down.
    public func pick(_ snapshot: Snapshot, top: Int = 1, learn: Bool = true) async throws -> Pick {
        if learn { await writer.admit() }
        let pick: Pick = try withUser(snapshot.user) { cached in
            if !learn {
                var copy = cached.state
                return engine.pick(snapshot, state: &copy, top: top).pick
            }
            let seq = cached.state.pickCounter
            let (pick, record) = engine.pick(snapshot, state: &cached.state, top: top, pickId: pickIds.next())
            let write = PendingWrite.pick(state: cached.state.pendingPart, record: record, seq: seq)
            cached.state.changes = UserState.Changes()
            pendingPicks.withLock { $0[record.pickId] = record }
            do {
                try writer.enqueue(write, ticket: nil)
            } catch {
                pendingPicks.withLock { _ = $0.removeValue(forKey: record.pickId) }
                throw error
            }
            return pick
        }
        metrics.picks.increment()
        if pick.bin.created && learn { metrics.binsCreated.increment() }
        return pick
    }

    // MARK: - Feedback

    /// Applies feedback events in order and waits until all are committed.
    /// - Returns: one result per event, in order: the outcome, or the error that rejected it.
    public func feedback(_ events: [FeedbackEvent]) async -> [Result<FeedbackResult, any Error>] {
        await writer.admit()
        var staged: [(ticket: CommitTicket, duplicate: Bool, outcome: FeedbackOutcome?)?] = []
        var results: [Result<FeedbackResult, any Error>?] = []
        for event in events {
            do {
                staged.append(try stage(event))
                results.append(nil)
            } catch {
                staged.append(nil)
                results.append(.failure(error))
            }
        }
        for (i, s) in staged.enumerated() {
            guard let s else { continue }
            do {
                try await s.ticket.wait()
                if s.duplicate {
                    results[i] = .success(.duplicate)
                    metrics.feedbackDuplicates.increment()
                } else if let outcome = s.outcome {
                    results[i] = .success(.applied(outcome))
                    metrics.feedbackApplied.increment()
                    if outcome.switchedTo != nil { metrics.binSwitches.increment() }
                    if outcome.createdBin != nil { metrics.binsCreated.increment() }
                }
            } catch {
                results[i] = .failure(error)
            }
        }
        return results.map { $0! }
    }

    /// Applies one event in memory and queues its write; the ticket completes when it is committed.
    private func stage(_ event: FeedbackEvent) throws -> (ticket: CommitTicket, duplicate: Bool, outcome: FeedbackOutcome?) {
        try withUser(event.user) { cached in
            let ticket = CommitTicket()
            // Claim the id, or find the write that already holds it.
            let earlier: PendingEvent? = pendingEvents.withLock { p in
                if let e = p[event.id] { return e }
                p[event.id] = PendingEvent(user: event.user, ticket: ticket)
                return nil
            }
            if let earlier {
                guard earlier.user == event.user else { throw Self.idTaken(event.id) }
                return (earlier.ticket, true, nil)
            }
            var claimed = true
            defer { if claimed { pendingEvents.withLock { _ = $0.removeValue(forKey: event.id) } } }
            if let owner = try store.feedbackOwner(eventId: event.id) {
                guard owner == event.user else { throw Self.idTaken(event.id) }
                let done = CommitTicket()
                done.complete(nil)
                return (done, true, nil)
            }
            var record: PickRecord?
            if let pickId = event.pickId {
                let pending = pendingPicks.withLock { $0[pickId] }
                if let pending, pending.user == event.user {
                    record = pending
                } else {
                    record = try store.pickRecord(id: pickId, user: event.user)
                }
                if record == nil && event.snapshot == nil {
                    throw InputError(path: "pick_id", expected: "a pick of user '\(event.user)'", got: "'\(pickId)'")
                }
            }
            var state = cached.state
            let outcome = try engine.feedback(event, pick: record, state: &state)
            let seq = cached.feedbackSeq + 1
            let write = PendingWrite.feedback(
                state: state.pendingPart, event: event, outcome: outcome, seq: seq, keepSnapshot: cached.keepRawSnapshots)
            state.changes = UserState.Changes()
            try writer.enqueue(write, ticket: ticket)
            claimed = false
            cached.state = state
            cached.feedbackSeq = seq
            return (ticket, false, outcome)
        }
    }

    private static func idTaken(_ id: String) -> InputError {
        InputError(path: "id", expected: "an event id not used by another user", got: "'\(id)'")
    }

    // MARK: - Users

    /// A user's bins, from the cached state.
    public func bins(user: String) throws -> [Bin] {
        try withUser(user) { $0.state.bins }
    }

    /// Adds a user (see ``Store/addUser(id:email:age:region:at:)``).
    public func addUser(id: String, email: String?, age: Int?, region: String?, at: Date) throws {
        try store.addUser(id: id, email: email, age: age, region: region, at: at)
        slots.withLock { s in
            if let slot = s[id], slot.value.withLock({ if case .forgotten = $0 { return false } else { return true } }) {
                s[id] = nil
            }
        }
    }

    /// Deletes every row of a user, after the user's queued writes; waits for the commit.
    /// - Returns: false when there was no such user.
    public func forget(user: String) async throws -> Bool {
        let slot = self.slot(user)
        let ticket = CommitTicket()
        let existed: Bool = try slot.value.withLock { v in
            switch v {
            case .forgotten: return false
            case .loaded: break
            case .empty:
                guard try store.userExists(user) else { return false }
            }
            try writer.enqueue(.forget(user: user), ticket: ticket)
            v = .forgotten
            return true
        }
        guard existed else {
            dropSlot(user, slot)
            return false
        }
        try await ticket.wait()
        dropSlot(user, slot)
        return true
    }

    /// The number of users whose state is in memory.
    public var cachedUsers: Int { slots.withLock { $0.count } }

    // MARK: - Writer callbacks

    /// Forgets the pending picks and event claims of settled writes (one lock each for a whole
    /// batch); a user whose write failed is reloaded from the database on next use.
    func settled(_ writes: [PendingWrite], _ error: (any Error)?) {
        var picks: [String] = [], events: [String] = []
        for write in writes {
            switch write {
            case let .pick(_, record, _): picks.append(record.pickId)
            case let .feedback(_, event, _, _, _): events.append(event.id)
            case .forget: break
            }
        }
        // In slices, so that the request handlers adding picks meanwhile wait microseconds, not the
        // millisecond or two that thousands of removals take.
        for slice in picks.chunks(of: 256) { pendingPicks.withLock { p in for id in slice { p.removeValue(forKey: id) } } }
        for slice in events.chunks(of: 256) { pendingEvents.withLock { p in for id in slice { p.removeValue(forKey: id) } } }
        guard error != nil else { return }
        for write in writes {
            // The database did not take this write: reload the user from it on next use.
            let slot = slots.withLock { $0[write.user] }
            slot?.value.withLock { v in
                if case .loaded = v { v = .empty }
            }
        }
    }

    // MARK: - Slots

    private func slot(_ user: String) -> Slot {
        slots.withLock { s in
            if let x = s[user] { return x }
            let x = Slot()
            s[user] = x
            return x
        }
    }

    private func dropSlot(_ user: String, _ slot: Slot) {
        let count: Int = slots.withLock { s in
            if s[user] === slot { s[user] = nil }
            return s.count
        }
        metrics.cachedUsers.set(Double(count))
    }

    /// Runs `body` on the user's cached state under the user's lock, loading it first if needed.
    private func withUser<R>(_ user: String, _ body: (inout CachedUserState) throws -> R) throws -> R {
        let slot = self.slot(user)
        var loadedNow = false
        let result: R
        do {
            result = try slot.value.withLock { v in
                switch v {
                case .forgotten:
                    throw APIError.unknownUser(user)
                case .empty:
                    do {
                        v = .loaded(try store.loadCachedState(user: user, defaults: engine.config.defaultWeights))
                        loadedNow = true
                    } catch is InputError {
                        throw APIError.unknownUser(user)
                    }
                case .loaded:
                    break
                }
                // Moved out (not copied: a copy retains and then releases every array of the
                // state), so that `cached` is uniquely referenced while the engine mutates it.
                var taken = Slot.Value.empty
                swap(&taken, &v)
                guard case var .loaded(cached) = consume taken else { throw APIError.internal }
                defer { v = .loaded(cached) }
                return try body(&cached)
            }
        } catch let e as APIError where e.code == "unknown_user" {
            dropSlot(user, slot)
            throw e
        }
        if loadedNow { metrics.cachedUsers.set(Double(cachedUsers)) }
        return result
    }
}

extension Array {
    /// The array in consecutive slices of at most `size` elements.
    func chunks(of size: Int) -> some Sequence<ArraySlice<Element>> {
        stride(from: 0, to: count, by: size).lazy.map { self[$0..<Swift.min($0 + size, self.count)] }
    }
}
