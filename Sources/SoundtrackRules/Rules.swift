import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackStore

/// A pick staged against a user's state: the answer, and the row the store keeps for feedback.
public struct StagedPick: Sendable {
    /// The pick to answer with.
    public var pick: Pick
    /// Its row (``UserWrite/pick(_:state:)``).
    public var row: PickRow
}

/// An onboarding the rules staged (``Rules/stageOnboarding(_:song:library:user:createUser:)``):
/// the pick, and whether it created its user.
public struct StagedOnboarding: Sendable {
    /// The onboarding's pick.
    public var staged: StagedPick
    /// Whether the user was created by it.
    public var created: Bool

    /// The writes that commit it, in one transaction: the user first when it was created, then the
    /// pick with `state` (the user's state, or its changes).
    public func writes(state: UserState) -> [UserWrite] {
        (created ? [.addUser(staged.pick.user, at: staged.row.record.at)] : []) + [.pick(staged.row, state: state)]
    }
}

/// What the rules made of one feedback event.
public enum FeedbackVerdict: Sendable, Equatable {
    /// Applied to the user's state; the row to insert (the state's changes are in its ``UserState/changes``).
    case applied(FeedbackRow)
    /// An event with this id was applied before: nothing changes.
    case duplicate
}

/// The rules of picks and feedback, in one place: the CLI, the HTTP service, batch and replay all
/// stage picks and events here, against a user's ``CachedUserState``, and differ only in how they
/// cache states and commit the ``UserWrite``s.
///
/// Staging changes the state in memory (the engine records what it changed in
/// ``UserState/changes``) and returns the row to insert; nothing is written. A ``RuleError``
/// leaves the state as it was.
///
/// ```swift
/// let rules = Rules(engine: engine)
/// let pick = try Rules.pickNamed(by: event, appliedBy: owner, lookup: store.pickRecord(id:))
/// let verdict = try rules.stageFeedback(event, appliedBy: owner, user: &cached, pick: pick)
/// if case let .applied(row) = verdict { try store.commit([.feedback(row, state: cached.state)]) }
/// ```
///
/// The rules of a feedback event, checked in this order (docs/formats.md):
/// 1. **Id.** An applied event with the same id: the same user's makes this one a duplicate
///    (nothing else is checked, nothing changes); another user's rejects it (``RuleError/eventIdTaken(_:)``).
///    An event that was rejected leaves no trace: a later event with its id is judged on its own.
/// 2. **User.** An unknown user rejects it (``RuleError/unknownUser(_:)``).
/// 3. **Track.** A track not in the catalog rejects it (``RuleError/unknownTrack(_:field:)``).
///    Checked before the rules that depend on what the user did before, so that a log replayed
///    again rejects such a line for the same reason (by then the user's later events are applied).
/// 4. **Time.** An event earlier than the user's previous applied event (equal times pass) is
///    rejected (``RuleError/outOfOrder(at:previous:)``): a user's events apply in time order.
/// 5. **Context.** A `pick_id` naming another user's pick rejects it; without a snapshot, so does a
///    `pick_id` naming no pick or a pick whose bin no longer exists (with a snapshot, the snapshot is
///    the context then).
/// 6. **Apply.** The engine applies it; its row gets the user's next `applied_seq`, and keeps the
///    event's snapshot only when the user keeps raw snapshots. A liked event that the sampling
///    admits (``BlendExampleSampling``) first makes the query it teaches the blend, from the state
///    before it (``Recommender/feedback(_:pick:state:position:)``), stored with its row.
public struct Rules: Sendable {
    /// The engine, with the catalog the rules check tracks against.
    public let engine: Recommender

    /// Rules over an engine.
    public init(engine: Recommender) {
        self.engine = engine
    }

    // MARK: - Picks

    /// Stages a pick that learns: the engine picks from the user's state and changes it (the pick
    /// counter, the session, any new bin); the row numbers the pick by the counter before it.
    /// - Parameter pickId: the pick's id; `nil` for the engine's own (stable across runs).
    /// - Parameter settings: the person's settings; the engine sees what they permit of the
    ///   snapshot (``permitted(_:settings:)``), and with location services off the pick says so.
    public func stagePick(
        _ snapshot: Snapshot, top: Int = 1, pickId: String? = nil, state: inout UserState, settings: UserSettings = UserSettings()
    ) -> StagedPick {
        precondition(snapshot.user == state.user, "a snapshot of another user")
        let seq = state.pickCounter
        var (pick, record) = engine.pick(Self.permitted(snapshot, settings: settings), state: &state, top: top, pickId: pickId)
        Self.mark(&pick, settings: settings)
        return StagedPick(pick: pick, row: PickRow(record: record, seq: seq))
    }

    /// Stages a pick that learns for a user who may not exist, from what the user's settings let
    /// the engine see of the snapshot (``permitted(_:by:)``).
    /// - Throws: ``RuleError/unknownUser(_:)`` when `user` is `nil`.
    public func stagePick(_ snapshot: Snapshot, top: Int = 1, pickId: String? = nil, user: inout CachedUserState?) throws(RuleError) -> StagedPick {
        try Self.requireKnown(user: snapshot.user, known: user != nil)
        precondition(user!.pending.isEmpty, "a state behind its feedback: catchUp(_:pick:) first")
        return stagePick(snapshot, top: top, pickId: pickId, state: &user!.state, settings: user!.settings)
    }

    /// The rule every pick and onboarding meets first: the snapshot's user exists (front ends that
    /// look users up in bulk, such as `batch`, ask it for each line without a state at hand).
    /// - Throws: ``RuleError/unknownUser(_:)`` when `known` is false.
    public static func requireKnown(user: String, known: Bool) throws(RuleError) {
        guard known else { throw .unknownUser(user) }
    }

    /// What the engine may see of a snapshot under the person's settings: with `location_services`
    /// off, the snapshot without its coordinates, their accuracy and the speed (the place's label
    /// stays: the person or the app named it); with `calendar_titles` off, its calendar events
    /// without their titles (their times and any category the app gave stay). The rules apply it
    /// before anything learns, scores or stores the snapshot, for every front end.
    public static func permitted(_ snapshot: Snapshot, by user: CachedUserState) -> Snapshot {
        permitted(snapshot, settings: user.settings)
    }

    /// ``permitted(_:by:)`` for a person with these settings.
    public static func permitted(_ snapshot: Snapshot, settings: UserSettings) -> Snapshot {
        var s = snapshot
        if !settings.locationServices, var location = s.location {
            location.lat = nil
            location.lon = nil
            location.accuracyM = nil
            location.speedMps = nil
            s.location = location.place == nil ? nil : location
        }
        if !settings.calendarTitles, var calendar = s.calendar, calendar.events.contains(where: { $0.title != nil }) {
            for i in calendar.events.indices { calendar.events[i].title = nil }
            s.calendar = calendar
        }
        return s
    }

    /// An event as the engine may see it under the person's settings (its snapshot ``permitted(_:by:)``).
    public static func permitted(_ event: FeedbackEvent, by user: CachedUserState) -> FeedbackEvent {
        guard !user.locationServices || !user.calendarTitles, let snapshot = event.snapshot else { return event }
        var e = event
        e.snapshot = permitted(snapshot, by: user)
        return e
    }

    /// A pick that learns nothing (`--read-only`, `?learn=false`): made from a copy of the state,
    /// with an id no learning pick takes (``Recommender/previewPickId(seed:user:counter:at:)``).
    public func previewPick(_ snapshot: Snapshot, top: Int = 1, state: UserState, settings: UserSettings = UserSettings()) -> Pick {
        var copy = state
        let id = Recommender.previewPickId(seed: engine.seed, user: state.user, counter: state.pickCounter, at: snapshot.at.date)
        var pick = engine.pick(Self.permitted(snapshot, settings: settings), state: &copy, top: top, pickId: id).pick
        Self.mark(&pick, settings: settings)
        return pick
    }

    /// A pick that learns nothing, for a user who may not exist.
    /// - Throws: ``RuleError/unknownUser(_:)`` when `user` is `nil`.
    public func previewPick(_ snapshot: Snapshot, top: Int = 1, user: CachedUserState?) throws(RuleError) -> Pick {
        try Self.requireKnown(user: snapshot.user, known: user != nil)
        let user = user!
        precondition(user.pending.isEmpty, "a state behind its feedback: catchUp(_:pick:) first")
        return previewPick(snapshot, top: top, state: user.state, settings: user.settings)
    }

    /// Stages an onboarding that may create its user: with `createUser`, a user who does not exist
    /// gets a new state first, and the writes add the user before the pick
    /// (``StagedOnboarding/writes(state:)``), so that a failed onboarding leaves no user behind.
    /// - Throws: as ``stageOnboarding(_:song:library:user:)``.
    public func stageOnboarding(
        _ snapshot: Snapshot, song: String, library: [String] = [], user: inout CachedUserState?, createUser: Bool
    ) throws(RuleError) -> StagedOnboarding {
        let created = user == nil && createUser
        if created { user = CachedUserState(state: engine.newUser(snapshot.user)) }
        return StagedOnboarding(staged: try stageOnboarding(snapshot, song: song, library: library, user: &user), created: created)
    }

    /// Stages an onboarding: a first bin from one song the user wants now and the snapshot (see
    /// ``Recommender/onboard(_:song:library:state:)``), recorded as a pick of that song.
    /// - Throws: ``RuleError/unknownUser(_:)``, ``RuleError/unknownTrack(_:field:)`` (`song`).
    public func stageOnboarding(_ snapshot: Snapshot, song: String, library: [String] = [], user: inout CachedUserState?) throws(RuleError) -> StagedPick {
        try Self.requireKnown(user: snapshot.user, known: user != nil)
        precondition(user!.pending.isEmpty, "a state behind its feedback: catchUp(_:pick:) first")
        // In the index the engine onboards from (a catalog read that failed gives an empty one).
        guard engine.catalog.index().row(of: song) != nil else { throw .unknownTrack(song, field: "song") }
        let seq = user!.state.pickCounter
        var (pick, record) = engine.onboard(Self.permitted(snapshot, by: user!), song: song, library: library, state: &user!.state)
        Self.mark(&pick, settings: user!.settings)
        return StagedPick(pick: pick, row: PickRow(record: record, seq: seq))
    }

    /// What the person's settings say of a pick: that it was made without location (`location_services`
    /// off), and no suggested volume unless `volume_control` is on.
    static func mark(_ pick: inout Pick, settings: UserSettings) {
        pick.locationOff = !settings.locationServices
        if !settings.volumeControl { pick.volume = nil }
    }

    // MARK: - Feedback

    /// The pick an event names, looked up before the event is staged (``stageFeedback(_:appliedBy:user:position:pick:)``
    /// takes it as a value): `nil` without a pick id, and without a lookup for an event that rule 1
    /// decides alone (an applied event holds its id).
    /// - Parameter lookup: looks a pick up by id, of whatever user (`nil`: no such pick).
    /// - Throws: what `lookup` throws (its database errors).
    public static func pickNamed(
        by event: FeedbackEvent, appliedBy owner: String?, lookup: (String) throws -> PickRecord?
    ) rethrows -> PickRecord? {
        guard needsState(appliedBy: owner), let id = event.pickId else { return nil }
        return try lookup(id)
    }

    /// Stages a feedback event of a known user (the rules in the order of the type's summary).
    /// - Parameters:
    ///   - owner: the user of an applied event with the event's id (committed, or staged and not
    ///     yet committed), `nil` when there is none.
    ///   - user: the event user's state; changed when the event applies.
    ///   - position: the event's place in the feedback log (the log's size before it, plus one; a
    ///     replayed file's line number), which decides whether it teaches the blend a query
    ///     (``BlendExampleSampling``); `nil`: it teaches none (catching up: it taught one when first applied).
    ///   - pick: the pick the event names, of whatever user, `nil` when there is none or the
    ///     event names none (``pickNamed(by:appliedBy:lookup:)``).
    /// - Returns: the verdict; an applied event's row.
    /// - Throws: a ``RuleError``, and then nothing changed.
    public func stageFeedback(
        _ event: FeedbackEvent, appliedBy owner: String?, user: inout CachedUserState, position: Int64? = nil, pick: PickRecord?
    ) throws(RuleError) -> FeedbackVerdict {
        if try Self.isDuplicate(event, appliedBy: owner) { return .duplicate }
        precondition(event.user == user.state.user, "an event of another user")
        precondition(pick.map { $0.pickId == event.pickId } ?? true, "the pick of another id: pickNamed(by:appliedBy:lookup:) gives it")
        precondition(user.pending.isEmpty, "a state behind its feedback: catchUp(_:pick:) first")
        let event = Self.permitted(event, by: user)
        guard engine.catalog.track(id: event.track) != nil else { throw .unknownTrack(event.track, field: "track") }
        let at = event.at.date.timeIntervalSince1970
        if let last = user.lastEventAt, at < last {
            throw .outOfOrder(at: event.at, previous: Date(timeIntervalSince1970: last))
        }
        let record = try context(of: event, state: user.state, pick: pick)
        let (outcome, example) = engine.feedback(event, pick: record, state: &user.state, position: position)
        user.feedbackSeq += 1
        user.lastEventAt = at
        // The row keeps the snapshot only for users who keep raw snapshots; without it the row
        // does not retain the snapshot's fields either.
        var stored = event
        if !user.keepRawSnapshots { stored.snapshot = nil }
        return .applied(
            FeedbackRow(event: stored, outcome: outcome, seq: user.feedbackSeq, keepSnapshot: user.keepRawSnapshots, example: example))
    }

    /// Brings a loaded state up to date with the user's feedback: applies again, in order, the
    /// events its stored state does not include yet (``CachedUserState/pending``: events the HTTP
    /// service committed before their effect, which its next checkpoint of the user writes). They
    /// apply exactly as they did the first time (the same state, the same event, the engine's
    /// randomness seeded by the event's id), so the state is the one the service had in memory.
    /// Its ``UserState/changes`` then hold what they changed, for the next state write.
    /// - Parameter pick: looks a pick up by id (the picks the events name are committed before them).
    /// - Throws: ``CatchUpError`` when an event does not apply again as it did (a database changed
    ///   by hand, or by another engine version); the state is then not usable.
    public func catchUp(_ user: inout CachedUserState, pick: (String) throws -> PickRecord?) throws {
        guard !user.pending.isEmpty else { return }
        let pending = user.pending
        user.pending = []
        // The community (collaborative signals) counted these events when they were first applied,
        // or when it was rebuilt from the feedback rows: they are not recorded in it again.
        let redo = Rules(engine: engine.with(community: nil))
        for p in pending {
            let verdict: FeedbackVerdict
            do {
                let named = try Self.pickNamed(by: p.event, appliedBy: nil, lookup: pick)
                verdict = try redo.stageFeedback(p.event, appliedBy: nil, user: &user, pick: named)
            } catch {
                throw CatchUpError(user: user.state.user, event: p.event.id, seq: p.seq, reason: "\(error)")
            }
            guard case let .applied(row) = verdict, row.seq == p.seq else {
                throw CatchUpError(
                    user: user.state.user, event: p.event.id, seq: p.seq, reason: "it applies as applied_seq \(user.feedbackSeq)")
            }
            // The same outcome as its row records (another seed or other models would differ).
            guard row.outcome.bin == p.bin, row.outcome.switchedTo == p.switchedTo else {
                throw CatchUpError(
                    user: user.state.user, event: p.event.id, seq: p.seq,
                    reason: "it lands in bin \(row.outcome.bin) (switched to \(row.outcome.switchedTo.map(String.init) ?? "none")), "
                        + "its row says \(p.bin) (\(p.switchedTo.map(String.init) ?? "none")): another seed or other models than the service's?")
            }
        }
    }

    /// Stages a feedback event of a user who may not exist (`nil`): the same rules, the same order.
    public func stageFeedback(
        _ event: FeedbackEvent, appliedBy owner: String?, user: inout CachedUserState?, position: Int64? = nil, pick: PickRecord?
    ) throws(RuleError) -> FeedbackVerdict {
        guard user != nil else { return try stageFeedbackOfUnknownUser(event, appliedBy: owner) }
        return try stageFeedback(event, appliedBy: owner, user: &user!, position: position, pick: pick)
    }

    /// The verdict on an event whose user does not exist: a duplicate or another user's id by
    /// rule 1, else ``RuleError/unknownUser(_:)``.
    public func stageFeedbackOfUnknownUser(_ event: FeedbackEvent, appliedBy owner: String?) throws(RuleError) -> FeedbackVerdict {
        if try Self.isDuplicate(event, appliedBy: owner) { return .duplicate }
        throw .unknownUser(event.user)
    }

    /// Whether judging an event needs its user's state: not when an applied event holds its id
    /// (`owner`), which decides it by rule 1 alone (a duplicate, or another user's id). A front-end
    /// that loads states in bulk (replay) need not load a user all of whose events are decided so.
    public static func needsState(appliedBy owner: String?) -> Bool {
        owner == nil
    }

    /// Rule 1: whether an applied event with the same id makes this one a duplicate.
    /// - Throws: ``RuleError/eventIdTaken(_:)`` when that event is another user's.
    static func isDuplicate(_ event: FeedbackEvent, appliedBy owner: String?) throws(RuleError) -> Bool {
        guard let owner else { return false }
        guard owner == event.user else { throw .eventIdTaken(event.id) }
        return true
    }

    /// Rule 5: the pick the event answers, `nil` when the snapshot is its context.
    /// - Parameter record: the pick the event names (`nil`: none by that id).
    func context(of event: FeedbackEvent, state: UserState, pick record: PickRecord?) throws(RuleError) -> PickRecord? {
        guard let id = event.pickId else {
            guard event.snapshot != nil else { throw .noContext }
            return nil
        }
        if let record, record.user != event.user { throw .pickOfAnotherUser(id, user: event.user) }
        // With a snapshot the engine uses the pick while its bin exists, and the snapshot otherwise.
        guard event.snapshot == nil else { return record }
        guard let record else { throw .unknownPick(id, user: event.user) }
        guard state.binIndex(number: record.binNumber) != nil else { throw .pickBinGone(id) }
        return record
    }
}

/// A pending event that does not apply again to its user's stored state (``Rules/catchUp(_:pick:)``).
public struct CatchUpError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The user.
    public var user: String
    /// The event's id.
    public var event: String
    /// Its `applied_seq`.
    public var seq: Int64
    /// Why it does not apply.
    public var reason: String

    public var description: String {
        "user '\(user)': the stored state cannot be brought up to date: feedback event '\(event)' (applied_seq \(seq)) "
            + "does not apply again (\(reason)); was the database changed outside Soundtrack, or by another version?"
    }
}
