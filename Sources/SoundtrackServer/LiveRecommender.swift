import Foundation
import Logging
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackRules
import SoundtrackStore
import Synchronization

/// The recommender as the HTTP service runs it: each user's state cached in memory behind a
/// per-user lock, picks and events staged on it by the ``Rules``, and the ``UserWrite``s they
/// give handed to the ``GroupCommitter``.
///
/// Consistency: a user's writes are queued in the order they were staged in memory, and the
/// single committer commits them in that order, so the database always holds a prefix of the
/// in-memory history. Picks answer at once (their write follows in the next batch, with the
/// user's changed state); feedback answers only after the batch holding it has committed. A
/// feedback event's write is its row and the event itself (``UserWrite/pendingFeedback(_:event:)``),
/// not the state it changed: the state is a checkpointed view of the feedback rows, written with
/// the user's next pick or by ``checkpointViews()`` (every few seconds, after many events, and at
/// shutdown), and a user loaded before then applies its pending events again
/// (``Rules/catchUp(_:pick:)``), to the same state. An event with a snapshot of a person who does
/// not keep raw snapshots (`keep_raw_snapshots` off, the default) is the exception: the snapshot
/// must reach no file, so its row is written with the state it changed (``UserWrite/feedback(_:state:)``),
/// as a pick's is. A write that fails evicts its user, whose
/// state is then reloaded from the database.
public final class LiveRecommender: Sendable {
    final class Slot: Sendable {
        enum Value {
            case empty
            case loaded(CachedUserState)
            case forgotten
        }

        let value = Mutex<Value>(.empty)
    }

    /// A staged event whose write is not committed yet: it holds its id (rule 1 of ``Rules``)
    /// until then.
    private struct PendingEvent {
        var user: String
        var ticket: CommitTicket
    }

    /// The database.
    public let store: Store
    /// The rules, over the engine with the blend in use (``use(ranker:)`` swaps it).
    private let rulesBox: Mutex<Rules>
    var rules: Rules { rulesBox.withLock { $0 } }

    /// Ranks with `ranker` from the next request on (a blend the background refit promoted).
    func use(ranker: RankerModel) {
        rulesBox.withLock { $0 = Rules(engine: $0.engine.with(ranker: ranker)) }
    }
    /// The feedback log's size as this process counts it: an event's position, which decides
    /// whether it teaches the blend a query (``BlendExampleSampling``).
    private let logPosition: Atomic<Int64>
    let metrics: ServerMetrics
    let logger: Logger
    private let slots = Mutex<[String: Slot]>([:])
    private let pendingPicks = Mutex<[String: PickRecord]>([:])
    private let pendingEvents = Mutex<[String: PendingEvent]>([:])
    private let committerBox = Mutex<GroupCommitter?>(nil)
    /// Users with feedback applied in memory whose state is not queued for writing yet, and the
    /// number of such events (``checkpointViews()``).
    private let dirty = Mutex<(users: Set<String>, events: Int)>(([], 0))
    /// Called when the events waiting for a checkpoint reach ``checkpointEvents``.
    private let checkpointDue = Mutex<(@Sendable () -> Void)?>(nil)
    /// Called when a forget has committed (``CommunityRecountService`` counts the community again).
    private let forgetCommitted = Mutex<(@Sendable () -> Void)?>(nil)
    /// Whether a count of the community model is under way: the model has one journal, so two
    /// counts at once would end each other's (``recountCommunityIfForgotten(slice:stop:)``).
    let communityRecounting = Mutex(false)
    /// How many events wait for a checkpoint before one is asked for.
    let checkpointEvents: Int
    private let pickIds: PickIds

    /// Creates the live recommender over a service's store and engine, with the whole catalog
    /// index in memory. Pick ids follow the greatest of the service's ids in the database (``PickIds``).
    init(
        service: SoundtrackService, index: CatalogIndex, clock: ServerClock, checkpointEvents: Int = 20_000, metrics: ServerMetrics,
        logger: Logger
    ) throws {
        self.checkpointEvents = max(1, checkpointEvents)
        store = service.store
        let last = try store.greatestPickId(from: PickIds.range.lower, below: PickIds.range.upper).flatMap(PickIds.value(of:))
        pickIds = PickIds(after: last ?? 0, now: clock.now)
        rulesBox = Mutex(Rules(engine: service.engine.with(catalog: IndexCatalog(index))))
        logPosition = Atomic(try service.store.feedbackLogSize())
        self.metrics = metrics
        self.logger = logger
    }

    var committer: GroupCommitter {
        committerBox.withLock { $0! }
    }

    func attach(_ committer: GroupCommitter) {
        committerBox.withLock { $0 = committer }
    }

    /// Sets what asks for a checkpoint once ``checkpointEvents`` events wait for one.
    func onCheckpointDue(_ due: @escaping @Sendable () -> Void) {
        checkpointDue.withLock { $0 = due }
    }

    /// Sets what is called once a forget has committed.
    func onForgetCommitted(_ call: @escaping @Sendable () -> Void) {
        forgetCommitted.withLock { $0 = call }
    }

    // MARK: - Checkpoints of the view

    /// Queues the state of every user with feedback not yet in a queued state write (a checkpoint
    /// of the view: each state marks the user's pending events as included as it commits,
    /// ``UserWrite/view(_:)``), then deletes the pending rows the states include, oldest first, in
    /// writes of `pruneSlice` rows (``UserWrite/prunePending(limit:)``). Users evicted meanwhile
    /// are skipped: their pending events wait in the database for their next load.
    /// - Parameters:
    ///   - slice: how many states to queue before `pause` is called (and after, the next ones).
    ///   - pruneSlice: how many pending rows each deletion after the states deletes at most.
    ///   - pause: called between slices: the checkpoint thread lets the committer commit a slice
    ///     (and the feedback queued meanwhile) before it queues the next, so that no feedback waits
    ///     behind thousands of states in one transaction.
    /// - Returns: the number of states queued.
    @discardableResult
    public func checkpointViews(slice: Int = .max, pruneSlice: Int = .max, pause: () -> Void = {}) -> Int {
        let (users, events) = dirty.withLock { d in
            defer { d = ([], 0) }
            return d
        }
        var queued = 0
        for (i, user) in users.sorted().enumerated() {
            if i > 0, i % max(1, slice) == 0 { pause() }
            guard let slot = slots.withLock({ $0[user] }) else { continue }
            slot.value.withLock { v in
                guard case .loaded = v else { return }
                var taken = Slot.Value.empty
                swap(&taken, &v)
                guard case var .loaded(cached) = consume taken else { preconditionFailure("a loaded slot") }
                do {
                    try committer.enqueue(.view(cached.takeChanges()), ticket: nil)
                    v = .loaded(cached)
                    queued += 1
                } catch {
                    // Closed: the state stays behind its pending events, which its next load applies.
                    v = .empty
                }
            }
        }
        // The rows of the events these states include (and any older ones included since), after
        // the states in commit order. At least one deletion, for rows an earlier round left.
        var left = max(events, 1)
        while left > 0 {
            pause()
            do { try committer.enqueue(.prunePending(limit: min(left, max(1, pruneSlice))), ticket: nil) } catch { break }
            left -= min(left, max(1, pruneSlice))
        }
        return queued
    }

    /// Records that `user` has feedback whose state waits for a checkpoint; asks for one when enough wait.
    private func markDirty(_ user: String) {
        let due = dirty.withLock { d in
            d.users.insert(user)
            d.events += 1
            return d.events == checkpointEvents
        }
        if due { checkpointDue.withLock { $0 }?() }
    }

    private var defaults: [Float] { rules.engine.config.defaultWeights }

    // MARK: - Picks

    /// Picks a track for a snapshot: from the cached state, learning unless `learn` is false.
    /// A learning pick first waits while the committer's queue is full (it does not wait for its own commit).
    /// - Throws: ``RuleError/unknownUser(_:)``; ``APIError/unavailable`` when shutting down.
    public func pick(_ snapshot: Snapshot, top: Int = 1, learn: Bool = true) async throws -> Pick {
        if learn { await committer.admit() }
        let pick: Pick = try withUser(snapshot.user) { cached in
            if !learn { return try rules.previewPick(snapshot, top: top, user: cached) }
            let staged = try rules.stagePick(snapshot, top: top, pickId: pickIds.next(), user: &cached)
            let record = staged.row.record
            pendingPicks.withLock { $0[record.pickId] = record }
            do {
                try committer.enqueue(.pick(staged.row, state: cached!.takeChanges()), ticket: nil)
            } catch {
                pendingPicks.withLock { _ = $0.removeValue(forKey: record.pickId) }
                cached = nil  // the state went ahead of what will be committed: reload it
                throw error
            }
            return staged.pick
        }
        metrics.picks.increment()
        if pick.bin.created && learn { metrics.binsCreated.increment() }
        return pick
    }

    /// A pick for a group (``GroupPick``): each member's read-only pick of the shared snapshot from
    /// the cached states, aggregated; counted as one pick.
    /// - Throws: ``RuleError/unknownMember(_:)``, ``RuleError/nothingToPlay``; ``APIError/unavailable``.
    public func groupPick(_ shared: Snapshot, members: [String], top: Int, exclude: Set<String>) throws -> GroupPick {
        let picks = try members.map { member in
            try withUser(member) { cached in
                guard cached != nil else { throw RuleError.unknownMember(member) }
                return try rules.previewPick(Rules.memberSnapshot(shared, member: member), top: GroupPick.depth, user: cached)
            }
        }
        let pick = try Rules.groupPick(members: members, picks: picks, top: top, exclude: exclude)
        metrics.picks.increment()
        return pick
    }

    /// Onboards a user from one song and a snapshot (``Rules/stageOnboarding(_:song:library:user:)``),
    /// creating the user when there is none and `createUser` is set: the user's row and the pick
    /// are queued together and committed in one transaction, and the answer waits for it. An
    /// onboarding the rules refuse writes nothing, so a new user is not left behind.
    /// - Returns: the pick of the song, and whether the user was created.
    /// - Throws: ``RuleError/unknownUser(_:)``, ``RuleError/unknownTrack(_:field:)``; the commit's error.
    public func onboard(_ snapshot: Snapshot, song: String, createUser: Bool) async throws -> (pick: Pick, created: Bool) {
        await committer.admit()
        let ticket = CommitTicket()
        let result: (pick: Pick, created: Bool) = try withUser(snapshot.user) { cached in
            // The library `import spotify-library` stored (none for a user this onboarding creates).
            let library = cached == nil ? [] : try store.library(user: snapshot.user).map(\.trackID)
            let onboarding = try rules.stageOnboarding(snapshot, song: song, library: library, user: &cached, createUser: createUser)
            let record = onboarding.staged.row.record
            pendingPicks.withLock { $0[record.pickId] = record }
            let writes = onboarding.writes(state: cached!.takeChanges())
            do {
                try committer.enqueue(writes, ticket: ticket)
            } catch {
                pendingPicks.withLock { _ = $0.removeValue(forKey: record.pickId) }
                cached = nil  // the state went ahead of what will be committed: reload it
                throw error
            }
            // A created user's slot is dropped after this (it was unknown when loaded): the
            // next request loads the committed state.
            return (onboarding.staged.pick, onboarding.created)
        }
        try await ticket.wait()
        metrics.picks.increment()
        return result
    }

    /// Adds tracks to the catalog (those it lacks) and ranks with the catalog as it then is.
    /// - Returns: how many were added.
    public func addToCatalog(_ tracks: [Track]) throws -> Int {
        let added = try store.insertMissingTracks(tracks)
        if added > 0 {
            let index = IndexCatalog(CatalogIndex(tracks: try store.allTracks()))
            rulesBox.withLock { $0 = Rules(engine: $0.engine.with(catalog: index)) }
        }
        return added
    }

    /// Waits until every write queued for the user so far is committed, with the user's state as
    /// held in memory (events applied since the last checkpoint included).
    /// - Throws: ``RuleError/unknownUser(_:)``; the commit's error.
    public func settle(user: String) async throws {
        let ticket = CommitTicket()
        try withUser(user) { cached in
            guard cached != nil else { throw RuleError.unknownUser(user) }
            // Written even when nothing changed since the last state write (then a session row as
            // it is): the write is what the ticket waits on (the committer commits it with the
            // user's queued picks), and it deletes the pending events a checkpoint of the view
            // already covers, which the export would otherwise list until they are pruned.
            do {
                try committer.enqueue(.state(cached!.takeChanges()), ticket: ticket)
            } catch {
                cached = nil  // the state went ahead of what will be committed: reload it
                throw error
            }
        }
        try await ticket.wait()
    }

    /// Whether the catalog holds a track.
    public func hasTrack(_ id: String) -> Bool { rules.engine.catalog.track(id: id) != nil }

    // MARK: - Feedback

    /// Stages feedback events in order and waits until all are committed.
    /// - Returns: one result per event, in order: the verdict, or the error that rejected it.
    public func feedback(_ events: [FeedbackEvent]) async -> [Result<FeedbackVerdict, any Error>] {
        await committer.admit()
        var staged: [(ticket: CommitTicket, verdict: FeedbackVerdict)?] = []
        var results: [Result<FeedbackVerdict, any Error>?] = []
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
                results[i] = .success(s.verdict)
                guard let outcome = s.verdict.outcome else {
                    metrics.feedbackDuplicates.increment()
                    continue
                }
                metrics.feedbackApplied.increment()
                if outcome.switchedTo != nil { metrics.binSwitches.increment() }
                if outcome.createdBin != nil { metrics.binsCreated.increment() }
            } catch {
                results[i] = .failure(error)
            }
        }
        return results.map { $0! }
    }

    /// Stages one event on the cached state and queues its write; the ticket completes when it is
    /// committed (a duplicate's when the event it repeats is).
    private func stage(_ event: FeedbackEvent) throws -> (ticket: CommitTicket, verdict: FeedbackVerdict) {
        try withUser(event.user) { cached in
            let ticket = CommitTicket()
            // The owner of the id (rule 1): an event staged and not committed yet holds it, else the
            // database knows it. An unclaimed id is claimed until this event is settled.
            let earlier: PendingEvent? = pendingEvents.withLock { p in
                if let e = p[event.id] { return e }
                p[event.id] = PendingEvent(user: event.user, ticket: ticket)
                return nil
            }
            var claimed = earlier == nil
            defer { if claimed { pendingEvents.withLock { _ = $0.removeValue(forKey: event.id) } } }
            let owner = try earlier?.user ?? store.feedbackOwner(eventId: event.id)
            let position = logPosition.add(1, ordering: .relaxed).newValue
            // A pick not committed yet is found in memory. Looked up before the state changes.
            let pick = try Rules.pickNamed(by: event, appliedBy: owner) { id in
                try pendingPicks.withLock { $0[id] } ?? store.pickRecord(id: id)
            }
            let verdict = try rules.stageFeedback(event, appliedBy: owner, user: &cached, position: position, pick: pick)
            guard case let .applied(row) = verdict else {
                // A duplicate answers once the event it repeats is committed.
                if let earlier { return (earlier.ticket, verdict) }
                let done = CommitTicket()
                done.complete(nil)
                return (done, verdict)
            }
            let keepsSnapshot = cached?.keepRawSnapshots ?? false
            do {
                if event.snapshot == nil || keepsSnapshot {
                    // The row and the event; the state follows with the user's next pick or checkpoint.
                    // As the rules saw it: without what the person's settings withhold (coordinates, calendar titles).
                    try committer.enqueue(.pendingFeedback(row, event: PendingEventText(Rules.permitted(event, by: cached!))), ticket: ticket)
                } else {
                    // The person does not keep raw snapshots: this one reaches no file, so the
                    // state it changed is written with the row instead of the event waiting for it.
                    try committer.enqueue(.feedback(row, state: cached!.takeChanges()), ticket: ticket)
                }
            } catch {
                cached = nil
                throw error
            }
            if event.snapshot == nil || keepsSnapshot { markDirty(event.user) }
            claimed = false
            return (ticket, verdict)
        }
    }

    /// Waits until every feedback event staged so far has settled: committed, failed or
    /// rejected (each holds its id in ``pendingEvents`` until then). What the community recorded
    /// before is then in the feedback log, or will never be.
    /// - Returns: false when `stop` said so first.
    func waitForStagedEvents(stop: () -> Bool) -> Bool {
        let staged = pendingEvents.withLock { p in p.map { ($0.key, $0.value.ticket) } }
        while pendingEvents.withLock({ p in staged.contains { id, ticket in p[id]?.ticket === ticket } }) {
            if stop() { return false }
            usleep(1_000)
        }
        return true
    }

    // MARK: - Users

    /// A user's bins, from the cached state.
    /// - Throws: ``RuleError/unknownUser(_:)``.
    public func bins(user: String) throws -> [Bin] {
        try withUser(user) { cached in
            guard let cached else { throw RuleError.unknownUser(user) }
            return cached.state.bins
        }
    }

    /// A user's settings, as the service holds them.
    /// - Throws: ``RuleError/unknownUser(_:)``.
    public func settings(user: String) throws -> UserSettings {
        try withUser(user) { cached in
            guard let cached else { throw RuleError.unknownUser(user) }
            return cached.settings
        }
    }

    /// Changes a user's settings, under the user's lock: when the change is one of how events are
    /// applied (``changesApplication(from:to:)``), the state as it stands is queued first (it
    /// covers every event still waiting to be applied again, so none is applied again under
    /// other settings than it was applied with), then the settings (``UserWrite/settings(_:_:scrubLocation:)``);
    /// the cached copy changes at once, so the next event is judged by the new ones. Turning
    /// location services off also empties the state's places. Answers once the settings are committed.
    /// - Returns: the new settings, and whether location services were turned off (the caller
    ///   then empties the write-ahead log, as after a forget).
    /// - Throws: ``RuleError/unknownUser(_:)``, what `change` throws (nothing changes then), the
    ///   commit's error (the user is then reloaded from the database).
    public func updateSettings(user: String, _ change: (inout UserSettings) throws -> Void) async throws -> (settings: UserSettings, locationTurnedOff: Bool) {
        let ticket = CommitTicket()
        let (settings, turnedOff) = try withUser(user) { cached -> (UserSettings, Bool) in
            guard cached != nil else { throw RuleError.unknownUser(user) }
            var next = cached!.settings
            try change(&next)
            let turnedOff = cached!.locationServices && !next.locationServices
            if turnedOff {
                cached!.state.places = PlaceBook()
                cached!.state.vocabulary.placeNames = [:]
                cached!.state.changes.places = true
            }
            do {
                // Only the settings that change how an event is applied need the state first.
                if Self.changesApplication(from: cached!.settings, to: next) {
                    try committer.enqueue(.state(cached!.takeChanges()), ticket: nil)
                }
                try committer.enqueue(.settings(user, next, scrubLocation: turnedOff), ticket: ticket)
            } catch {
                cached = nil  // the state went ahead of what will be committed: reload it
                throw error
            }
            cached!.settings = next
            return (next, turnedOff)
        }
        try await ticket.wait()
        return (settings, turnedOff)
    }

    /// A person's learned places as the service holds them.
    /// - Throws: ``RuleError/unknownUser(_:)``.
    public func places(user: String) throws -> [LearnedPlace] {
        try withUser(user) { cached in
            guard let cached else { throw RuleError.unknownUser(user) }
            return cached.state.places.places
        }
    }

    /// Names one of a person's learned places (`nil` removes its name) under the user's lock,
    /// relabels their bins, and answers once the state is committed.
    /// - Throws: ``RuleError/unknownUser(_:)``, ``RuleError/unknownPlace(_:user:)``, the commit's
    ///   error (the user is then reloaded from the database).
    public func namePlace(user: String, place: String, name: String?) async throws -> LearnedPlace {
        let ticket = CommitTicket()
        let named = try withUser(user) { cached -> LearnedPlace in
            guard cached != nil else { throw RuleError.unknownUser(user) }
            try rules.engine.namePlace(place, name, state: &cached!.state)
            do {
                try committer.enqueue(.state(cached!.takeChanges()), ticket: ticket)
            } catch {
                cached = nil  // the state went ahead of what will be committed: reload it
                throw error
            }
            return cached!.state.places.places.first { $0.id == place }!
        }
        try await ticket.wait()
        return named
    }

    /// Whether a change of settings changes how an event is applied again (what it learns from,
    /// what its row keeps): `location_services`, `keep_raw_snapshots` and `calendar_titles` do,
    /// `volume_control` not.
    static func changesApplication(from old: UserSettings, to new: UserSettings) -> Bool {
        old.locationServices != new.locationServices || old.keepRawSnapshots != new.keepRawSnapshots
            || old.calendarTitles != new.calendarTitles
    }

    /// A user's whole state as held in memory (loaded, and brought up to date, if it is not).
    /// - Throws: ``RuleError/unknownUser(_:)``.
    func state(user: String) throws -> UserState {
        try withUser(user) { cached in
            guard let cached else { throw RuleError.unknownUser(user) }
            return cached.state
        }
    }

    /// Adds a user (see ``Store/addUser(_:at:)``).
    /// - Throws: ``RuleError/userExists(_:)``.
    public func addUser(_ user: NewUser, at: Date) throws {
        try store.addUser(user, at: at)
        slots.withLock { s in
            if let slot = s[user.id], slot.value.withLock({ if case .forgotten = $0 { return false } else { return true } }) {
                s[user.id] = nil
            }
        }
    }

    /// Deletes every row of a user, after the user's queued writes; waits for the commit.
    /// - Throws: ``RuleError/unknownUser(_:)`` when there is no such user (or it is being forgotten).
    public func forget(user: String) async throws {
        let slot = self.slot(user)
        let ticket = CommitTicket()
        enum Found { case user, none, beingForgotten }
        let found: Found = try slot.value.withLock { v in
            switch v {
            case .forgotten: return .beingForgotten
            case .loaded: break
            case .empty:
                guard try store.userExists(user) else { return .none }
            }
            try committer.enqueue(.forget(user), ticket: ticket)
            v = .forgotten
            return .user
        }
        switch found {
        case .beingForgotten:
            throw RuleError.unknownUser(user)
        case .none:
            dropSlot(user, slot)
            throw RuleError.unknownUser(user)
        case .user:
            try await ticket.wait()
            dropSlot(user, slot)
            // The community model in memory still counts the person's events: counted again.
            forgetCommitted.withLock { $0 }?()
        }
    }

    /// The number of users whose state is in memory.
    public var cachedUsers: Int { slots.withLock { $0.count } }

    // MARK: - Committer callbacks

    /// Forgets the pending picks and event claims of settled writes (one lock each for a whole
    /// batch); a user whose write failed is reloaded from the database on next use.
    func settled(_ writes: [UserWrite], _ error: (any Error)?) {
        var picks: [String] = [], events: [String] = []
        for write in writes {
            switch write {
            case let .pick(row, _): picks.append(row.record.pickId)
            case let .feedback(row, _), let .pendingFeedback(row, _): events.append(row.event.id)
            case .addUser, .feedbackRows, .state, .view, .prunePending, .forget, .settings: break
            }
        }
        // In slices, so that the request handlers adding picks meanwhile wait microseconds, not the
        // millisecond or two that thousands of removals take.
        for slice in picks.chunks(of: 256) { pendingPicks.withLock { p in for id in slice { p.removeValue(forKey: id) } } }
        for slice in events.chunks(of: 256) { pendingEvents.withLock { p in for id in slice { p.removeValue(forKey: id) } } }
        guard error != nil else { return }
        for write in writes {
            // The database did not take this write: reload its user from it on next use.
            for user in write.users {
                let slot = slots.withLock { $0[user] }
                slot?.value.withLock { v in
                    if case .loaded = v { v = .empty }
                }
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

    /// Runs `body` on the user's cached state under the user's lock, loading it first if needed:
    /// `nil` for an unknown user (whose slot is then dropped). A `body` that sets the state to
    /// `nil` evicts it: the next use loads it from the database again.
    private func withUser<R>(_ user: String, _ body: (inout CachedUserState?) throws -> R) throws -> R {
        let slot = self.slot(user)
        var loadedNow = false, unknown = false
        defer {
            if unknown {
                dropSlot(user, slot)
            } else if loadedNow {
                metrics.cachedUsers.set(Double(cachedUsers))
            }
        }
        return try slot.value.withLock { v in
            var cached: CachedUserState?
            switch v {
            case .forgotten:
                throw RuleError.unknownUser(user)
            case .empty:
                cached = try store.loadCachedState(user: user, defaults: defaults)
                loadedNow = cached != nil
                unknown = cached == nil
                if cached?.pending.isEmpty == false {
                    // Feedback committed before its state (a checkpoint to come, or a crash before
                    // it): applied again, and the state written at the next checkpoint.
                    do {
                        try rules.catchUp(&cached!) { id in try pendingPicks.withLock { $0[id] } ?? store.pickRecord(id: id) }
                    } catch {
                        cached = nil  // not half caught up: the next use loads it again
                        throw error
                    }
                    markDirty(user)
                }
            case .loaded:
                // Moved out (not copied: a copy retains and then releases every array of the
                // state), so that `cached` is uniquely referenced while the engine mutates it.
                var taken = Slot.Value.empty
                swap(&taken, &v)
                guard case let .loaded(c) = consume taken else { preconditionFailure("a loaded slot") }
                cached = consume c
            }
            defer {
                if let c = cached.take() { v = .loaded(c) } else { v = .empty }
            }
            return try body(&cached)
        }
    }
}

extension Array {
    /// The array in consecutive slices of at most `size` elements.
    func chunks(of size: Int) -> some Sequence<ArraySlice<Element>> {
        stride(from: 0, to: count, by: size).lazy.map { self[$0..<Swift.min($0 + size, self.count)] }
    }
}
