import Foundation
import Logging
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackStore
import Synchronization

/// The paths of Soundtrack one request at a time, as the CLI (and the demo) run them: each pick or
/// feedback event is one SQLite transaction that loads the user's state, stages the pick or event
/// with the ``Rules`` (the catalog read in the same transaction) and commits the one
/// ``UserWrite`` they give.
///
/// ```swift
/// let service = SoundtrackService(store: store, engine: engine)
/// let pick = try service.pick(snapshot)
/// let verdict = try service.feedback(event)   // .applied(row) or .duplicate
/// ```
public final class SoundtrackService: Sendable {
    /// The database.
    public let store: Store
    /// The engine (its catalog is replaced per transaction by the store's).
    public let engine: Recommender
    /// Where the service reports what it did (user ids, bin ids, counts; never coordinates, titles or device names).
    public let logger: Logger

    /// Creates a service.
    public init(store: Store, engine: Recommender, logger: Logger = Logger(label: "soundtrack.service")) {
        self.store = store
        self.engine = engine
        self.logger = logger
    }

    private var defaults: [Float] { engine.config.defaultWeights }

    /// The rules with the catalog of one transaction.
    private func rules(_ reads: TransactionReads) -> Rules {
        Rules(engine: engine.with(catalog: reads.catalog))
    }

    /// ``Store/readUser(_:defaults:_:)`` with the user's state brought up to date with its feedback
    /// first (``Rules/catchUp(_:pick:)``), as every path of the rules needs it.
    private func readCurrentUser<R>(_ user: String, _ body: (CachedUserState?, TransactionReads) throws -> R) throws -> R {
        try store.readUser(user, defaults: defaults) { cached, reads in
            var cached = cached
            if cached != nil { try rules(reads).catchUp(&cached!, pick: reads.pickRecord(id:)) }
            return try body(cached, reads)
        }
    }

    /// ``Store/updateUser(_:defaults:_:)`` with the user's state brought up to date with its
    /// feedback first (``Rules/catchUp(_:pick:)``): the writes then include what catching up changed.
    private func updateCurrentUser<R>(
        _ user: String, _ body: (inout CachedUserState?, TransactionReads) throws -> (result: R, writes: [UserWrite])
    ) throws -> R {
        try store.updateUser(user, defaults: defaults) { cached, reads in
            if cached != nil { try rules(reads).catchUp(&cached!, pick: reads.pickRecord(id:)) }
            return try body(&cached, reads)
        }
    }

    /// Picks a track for a snapshot.
    /// - Parameters:
    ///   - top: how many ranked tracks to return.
    ///   - learn: when false nothing is written (the pick, session and any new bin are discarded).
    /// - Throws: ``RuleError/unknownUser(_:)``; database errors.
    public func pick(_ snapshot: Snapshot, top: Int = 1, learn: Bool = true) throws -> Pick {
        if !learn {
            return try readCurrentUser(snapshot.user) { user, reads in
                try rules(reads).previewPick(snapshot, top: top, user: user)
            }
        }
        return try updateCurrentUser(snapshot.user) { user, reads in
            let staged = try rules(reads).stagePick(snapshot, top: top, user: &user)
            let pick = staged.pick
            logger.debug(
                "pick",
                metadata: [
                    "user": "\(pick.user)", "pick": "\(pick.pickId)", "bin": "\(pick.bin.id)",
                    "created": "\(pick.bin.created)", "score": "\(pick.bin.score)", "source": "\(pick.source)"
                ])
            return (pick, [.pick(staged.row, state: user!.state)])
        }
    }

    /// Picks for a group in one shared context (``GroupPick``): a read-only pick of each member's
    /// state for the snapshot (what each member's settings permit of it), aggregated. Nothing is
    /// written: each member's feedback teaches that member.
    /// - Parameter exclude: tracks the group heard lately, left out.
    /// - Throws: ``RuleError/groupTooSmall(_:)``, ``RuleError/memberTwice(_:)``,
    ///   ``RuleError/unknownMember(_:)``; database errors.
    public func groupPick(_ snapshot: Snapshot, members: [String], top: Int = 1, exclude: Set<String> = []) throws -> GroupPick {
        try Rules.checkGroup(members)
        let picks = try members.map { member in
            try readCurrentUser(member) { user, reads in
                guard user != nil else { throw RuleError.unknownMember(member) }
                return try rules(reads).previewPick(Rules.memberSnapshot(snapshot, member: member), top: GroupPick.depth, user: user)
            }
        }
        return try Rules.groupPick(members: members, picks: picks, top: top, exclude: exclude)
    }

    /// Applies one feedback event, exactly once per event id (``Rules`` says how it is judged).
    /// - Returns: `.applied` with the event's row (its ``FeedbackRow/outcome``), or `.duplicate`.
    /// - Throws: ``RuleError`` for an event the rules reject (nothing is written); database errors.
    public func feedback(_ event: FeedbackEvent) throws -> FeedbackVerdict {
        try updateCurrentUser(event.user) { user, reads in
            let owner = try reads.feedbackOwner(eventId: event.id)
            let position = try reads.feedbackLogSize() + 1
            let pick = try Rules.pickNamed(by: event, appliedBy: owner, lookup: reads.pickRecord(id:))
            let verdict = try rules(reads).stageFeedback(event, appliedBy: owner, user: &user, position: position, pick: pick)
            guard case let .applied(row) = verdict else {
                logger.debug("feedback duplicate", metadata: ["user": "\(event.user)", "event": "\(event.id)"])
                return (verdict, [])
            }
            let outcome = row.outcome
            logger.debug(
                "feedback",
                metadata: [
                    "user": "\(event.user)", "event": "\(event.id)", "signal": "\(event.signal.rawValue)",
                    "bin": "b-\(outcome.bin)", "streak": "\(outcome.dislikeStreak)",
                    "switched_to": "\(outcome.switchedTo.map { "b-\($0)" } ?? "-")"
                ])
            return (verdict, [.feedback(row, state: user!.state)])
        }
    }

    /// Onboards a user: a first bin from one song they want now and the snapshot
    /// (``Rules/stageOnboarding(_:song:library:user:)``), recorded as a pick of that song.
    /// - Parameter library: the person's own track ids, preferred over the catalog when similar
    ///   enough; `nil`: the library stored by `import spotify-library` (none for a new user).
    /// - Parameter createUser: create the user when there is none (with default settings), in the
    ///   same transaction as the onboarding: an onboarding that fails leaves no user behind.
    /// - Returns: the pick, and whether the user was created.
    /// - Throws: ``RuleError/unknownUser(_:)`` (unless `createUser`), ``RuleError/unknownTrack(_:field:)``
    ///   (`song`), an ``InputError`` of the engine's checks; database errors. Nothing is written then.
    public func onboard(_ snapshot: Snapshot, song: String, library: [String]? = nil, createUser: Bool = false) throws -> (pick: Pick, created: Bool) {
        // Without a library given, the one `import spotify-library` stored, when there is one.
        let library = try library ?? store.library(user: snapshot.user).map(\.trackID)
        return try updateCurrentUser(snapshot.user) { user, reads in
            let onboarding = try rules(reads).stageOnboarding(snapshot, song: song, library: library, user: &user, createUser: createUser)
            let pick = onboarding.staged.pick
            logger.debug(
                "onboard",
                metadata: [
                    "user": "\(pick.user)", "pick": "\(pick.pickId)", "bin": "\(pick.bin.id)", "created": "\(pick.bin.created)"
                ])
            return ((pick, onboarding.created), onboarding.writes(state: user!.state))
        }
    }

    /// Writes what the engine's community model counted since it was loaded or last written
    /// (``Store/checkpointCommunity(_:)``); nothing for an engine without a model from the store.
    /// - Returns: whether it was written.
    @discardableResult
    public func checkpointCommunity() throws -> Bool {
        guard let shared = engine.community as? SharedCommunity else { return false }
        return try store.checkpointCommunity(shared) != nil
    }

    /// A person's learned places, in the order they were learned.
    /// - Throws: ``RuleError/unknownUser(_:)``; database errors.
    public func places(user: String) throws -> [LearnedPlace] {
        try state(user: user).places.places
    }

    /// Names one of a person's learned places (`nil` removes its name), relabels their bins, and
    /// writes the state (``Recommender/namePlace(_:_:state:)``).
    /// - Returns: the place as named.
    /// - Throws: ``RuleError/unknownUser(_:)``, ``RuleError/unknownPlace(_:user:)``; database errors.
    public func namePlace(user: String, place: String, name: String?) throws -> LearnedPlace {
        try updateCurrentUser(user) { cached, _ in
            guard cached != nil else { throw RuleError.unknownUser(user) }
            try engine.namePlace(place, name, state: &cached!.state)
            let named = cached!.state.places.places.first { $0.id == place }!
            return (named, [.state(cached!.state)])
        }
    }

    /// A user's whole engine state.
    /// - Throws: ``RuleError/unknownUser(_:)``; database errors.
    public func state(user: String) throws -> UserState {
        try readCurrentUser(user) { cached, _ in
            guard let cached else { throw RuleError.unknownUser(user) }
            return cached.state
        }
    }

    /// Brings every user's stored state up to date with the user's feedback (``Rules/catchUp(_:pick:)``),
    /// so that the states everything after it reads are current (the commands do it as they open a
    /// database no service or replay holds: `Bootstrap.open`; `serve` before it serves).
    ///
    /// Users are taken in groups of `usersPerTransaction` users and `eventsPerTransaction` events at
    /// most (a user with more events is a group alone): each group is loaded in bulk, caught up on
    /// `workers` threads (each user on one thread, its events in order), and its states written in
    /// one transaction, while the next group is loaded and caught up. A state is written only when
    /// its user's pending events are still those it was loaded with (``Store/commitCaughtUp(_:)``):
    /// a command that wrote the user meanwhile brought it up to date itself. A user whose events do
    /// not apply again is left as it is and reported (a warning is logged); loading that user fails
    /// the same way until its database is mended.
    /// - Parameters:
    ///   - workers: threads that apply events (users are independent).
    ///   - usersPerTransaction: users loaded, caught up and written together, at most.
    ///   - eventsPerTransaction: their pending events, at most (unless one user has more).
    /// - Returns: how many users were brought up to date and by how many events, and the users
    ///   that could not be, with why.
    /// - Throws: database errors of reading which users are behind, or the catalog.
    @discardableResult
    public func catchUp(
        workers: Int = ProcessInfo.processInfo.activeProcessorCount, usersPerTransaction: Int = 512, eventsPerTransaction: Int = 20_000
    ) throws -> (users: Int, events: Int, failed: [String: String]) {
        let behind = try store.usersBehind()
        guard !behind.isEmpty else { return (0, 0, [:]) }
        // The whole catalog in memory, as the service holds it, instead of a query for every track
        // an event names (a third of the time of a catch-up); read while the first group loads.
        let engine = self.engine, store = self.store
        let catalog = InBackground { IndexCatalog(CatalogIndex(tracks: try store.allTracks())) }
        let groups = Self.catchUpGroups(behind, usersPerTransaction: usersPerTransaction, eventsPerTransaction: eventsPerTransaction)
        var failed: [String: String] = [:]
        // A group's users caught up, or the users that failed with why. A failed catalog read is
        // not a user's failure: it ends the catch-up (`CatalogFailure`).
        let defaults = self.defaults
        // A group's users behind, with their pending events, the picks those name and their marks.
        let load: @Sendable ([String]) throws -> CatchUpGroup = { group in
            let loaded = try store.loadCachedStates(users: group, defaults: defaults)
            let states = group.compactMap { loaded[$0] }.filter { !$0.pending.isEmpty }
            let picks = try store.pickRecords(ids: states.flatMap { $0.pending.compactMap(\.event.pickId) })
            return CatchUpGroup(states: states, picks: picks, marks: states.map { $0.pendingMark! })
        }
        func apply(_ group: CatchUpGroup) throws -> (done: [(state: UserState, mark: PendingMark)], failed: [String: String]) {
            var states = group.states
            let picks = group.picks
            let index: IndexCatalog
            do { index = try catalog.value() } catch { throw CatalogFailure(error: error) }
            let rules = Rules(engine: engine.with(catalog: index))
            let errors = CatchUpWork.run(&states, workers: workers) { try rules.catchUp(&$0) { picks[$0] } }
            var done: [(state: UserState, mark: PendingMark)] = []
            var failed: [String: String] = [:]
            for (i, error) in errors.enumerated() {
                if let error { failed[states[i].state.user] = error } else { done.append((states[i].state, group.marks[i])) }
            }
            return (done, failed)
        }
        func stage(_ group: [String]) throws -> (done: [(state: UserState, mark: PendingMark)], failed: [String: String]) {
            try apply(try load(group))
        }
        let plan = groups
        // Without waiting for the disk: a crash loses at most the last groups' states, whose events
        // then stay pending (the transaction that writes a state marks them as included).
        let skipped = try store.withoutWaitingForDisk {
            let writer = CatchUpWriter(store: store)
            // The next group is read from the database on a thread of its own while this one is
            // caught up: the reads take one core, the catch-up every core, one after the other they
            // left a core idle for half the time.
            var next: InBackground<CatchUpGroup>? = plan.isEmpty ? nil : InBackground { try load(plan[0]) }
            for (k, group) in plan.enumerated() {
                let current = next!
                next = k + 1 < plan.count ? InBackground { try load(plan[k + 1]) } : nil
                do {
                    let (done, groupFailed) = try apply(try current.value())
                    failed.merge(groupFailed) { a, _ in a }
                    writer.write(done)
                } catch let e as CatalogFailure {
                    _ = try? next?.value()  // nothing reads the database after the catch-up returns
                    _ = writer.finish()
                    throw e.error
                } catch {
                    // What failed the group (a pending event that does not read, a database error)
                    // fails its users one at a time instead, so that the others go on.
                    guard group.count > 1 else {
                        failed[group[0]] = "\(error)"
                        continue
                    }
                    for user in group {
                        do {
                            let (done, userFailed) = try stage([user])
                            failed.merge(userFailed) { a, _ in a }
                            writer.write(done)
                        } catch let e as CatalogFailure {
                            _ = writer.finish()
                            throw e.error
                        } catch {
                            failed[user] = "\(error)"
                        }
                    }
                }
            }
            let written = writer.finish()
            failed.merge(written.failed) { a, _ in a }
            // The rows of the events the states now include, in the order they were written.
            try store.prunePending()
            return written.skipped
        }
        return logCatchUp(behind: behind, failed: failed, skipped: skipped)
    }

    /// The users behind in groups of at most `usersPerTransaction` users and
    /// `eventsPerTransaction` events (a user with more makes a group alone), in id order: what a
    /// group of a catch-up holds in memory stays bounded.
    static func catchUpGroups(_ behind: [String: Int], usersPerTransaction: Int, eventsPerTransaction: Int) -> [[String]] {
        var groups: [[String]] = [[]]
        var eventsInGroup = 0
        for user in behind.keys.sorted() {
            let n = behind[user]!
            if !groups[groups.count - 1].isEmpty,
                groups[groups.count - 1].count >= usersPerTransaction || eventsInGroup + n > eventsPerTransaction
            {
                groups.append([])
                eventsInGroup = 0
            }
            groups[groups.count - 1].append(user)
            eventsInGroup += n
        }
        return groups
    }

    /// Logs what a catch-up did and returns its summary: the users and events brought up to date,
    /// and the users that could not be.
    private func logCatchUp(
        behind: [String: Int], failed: [String: String], skipped: [String]
    ) -> (users: Int, events: Int, failed: [String: String]) {
        if !skipped.isEmpty {
            logger.debug("users another writer brought up to date during the catch-up", metadata: ["users": "\(skipped.count)"])
        }
        for (user, error) in failed.sorted(by: { $0.key < $1.key }) {
            logger.warning("a user's state could not be brought up to date", metadata: ["user": "\(user)", "error": "\(error)"])
        }
        let users = behind.count - failed.count
        let events = behind.filter { failed[$0.key] == nil }.values.reduce(0, +)
        if users > 0 {
            logger.notice(
                "users' states brought up to date with the feedback a service committed before its checkpoint",
                metadata: ["users": "\(users)", "events": "\(events)"])
        }
        return (users, events, failed)
    }

    /// A user's bins, in number order.
    /// - Throws: ``RuleError/unknownUser(_:)``; database errors.
    public func bins(user: String) throws -> [Bin] {
        try state(user: user).bins
    }

    /// Adds a user (the email is stored only as a hash).
    /// - Throws: ``RuleError/userExists(_:)``; database errors.
    public func addUser(_ user: NewUser, at: Date) throws {
        try store.addUser(user, at: at)
    }

    /// Deletes every row of a user.
    /// - Throws: ``RuleError/unknownUser(_:)``; database errors.
    public func forget(user: String) throws {
        guard try store.forget(user: user) else { throw RuleError.unknownUser(user) }
    }

    /// One user as `users show` lists it.
    /// - Throws: ``RuleError/unknownUser(_:)``; database errors.
    public func user(_ id: String) throws -> Store.UserSummary {
        guard let u = try store.user(id) else { throw RuleError.unknownUser(id) }
        return u
    }
}
