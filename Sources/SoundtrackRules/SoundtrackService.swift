import Foundation
import Logging
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackStore

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

    /// Applies one feedback event, exactly once per event id (``Rules`` says how it is judged).
    /// - Returns: `.applied` with the event's row (its ``FeedbackRow/outcome``), or `.duplicate`.
    /// - Throws: ``RuleError`` for an event the rules reject (nothing is written); database errors.
    public func feedback(_ event: FeedbackEvent) throws -> FeedbackVerdict {
        try updateCurrentUser(event.user) { user, reads in
            let owner = try reads.feedbackOwner(eventId: event.id)
            let verdict = try rules(reads).stageFeedback(event, appliedBy: owner, user: &user, pick: reads.pickRecord(id:))
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

    /// Onboards a user from one song and the current snapshot (see ``Rules/stageOnboarding(_:song:library:user:)``)
    /// in one transaction, and records the pick of that song so that feedback can name it.
    /// - Parameter library: the user's own tracks, preferred over the catalog when similar enough.
    /// - Throws: ``RuleError`` for an unknown user or a song not in the catalog.
    public func onboard(_ snapshot: Snapshot, song: String, library: [String] = []) throws -> Pick {
        try updateCurrentUser(snapshot.user) { user, reads in
            let staged = try rules(reads).stageOnboarding(snapshot, song: song, library: library, user: &user)
            let pick = staged.pick
            logger.debug(
                "onboard",
                metadata: [
                    "user": "\(pick.user)", "pick": "\(pick.pickId)", "bin": "\(pick.bin.id)", "created": "\(pick.bin.created)"
                ])
            return (pick, [.pick(staged.row, state: user!.state)])
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
    /// one transaction per user behind, so that the states everything after it reads are current
    /// (the commands do it as they open a database no service or replay holds: `Bootstrap.open`).
    /// A user whose events do not apply again is left as it is and reported (a warning is logged);
    /// loading that user fails the same way until its database is mended.
    /// - Returns: how many users were brought up to date and by how many events, and the users
    ///   that could not be, with why.
    /// - Throws: database errors of reading which users are behind.
    @discardableResult
    public func catchUp() throws -> (users: Int, events: Int, failed: [String: String]) {
        let behind = try store.usersBehind()
        guard !behind.isEmpty else { return (0, 0, [:]) }
        // The whole catalog in memory, as the service holds it, instead of a query for every track
        // an event names (a third of the time of a catch-up).
        let inMemory = Rules(engine: engine.with(catalog: IndexCatalog(CatalogIndex(tracks: try store.allTracks()))))
        var failed: [String: String] = [:]
        for user in behind.keys.sorted() {
            do {
                try store.updateUser(user, defaults: defaults) { cached, reads in
                    guard cached != nil else { return ((), []) }
                    try inMemory.catchUp(&cached!, pick: reads.pickRecord(id:))
                    return ((), [.state(cached!.state)])
                }
            } catch {
                failed[user] = "\(error)"
                logger.warning("a user's state could not be brought up to date", metadata: ["user": "\(user)", "error": "\(error)"])
            }
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
