import Foundation
import SoundtrackContext
import SoundtrackEngine

/// A person's core path in a store: what the rules and the front-ends read and write of one person
/// (docs/architecture.md: "load a user's state, commit `UserWrite`s, look event ids and picks up").
/// The SQLite ``Store`` conforms; so does the PostgreSQL store (`SoundtrackPostgres.PostgresStore`),
/// and one conformance suite checks both against the semantics written here.
///
/// ```swift
/// let verdict = try store.updatePerson(event.user, defaults: defaults) { user, reads in
///     let owner = try reads.feedbackOwner(eventId: event.id)
///     let pick = try Rules.pickNamed(by: event, appliedBy: owner, lookup: reads.pickRecord(id:))
///     let verdict = try rules.stageFeedback(event, appliedBy: owner, user: &user, pick: pick)
///     guard case let .applied(row) = verdict else { return (verdict, []) }
///     return (verdict, [.feedback(row, state: user!.state)])
/// }
/// ```
///
/// Every method is one transaction of its own, synchronous (callers are threads: the CLI, the
/// service's committer, batch and replay), and leaves nothing of itself when it throws. A committed
/// write is durable when the method returns. Event ids are unique across people: an id is applied
/// once, a person's retry of it is a duplicate, another person's use of it is refused by the rules
/// (``feedbackOwner(eventId:)`` names the owner). Not here: the catalog, the models, imports,
/// history, exports and the bulk loads (``Store`` has them; the next steps of issue 44).
public protocol PersonStore: AnyObject, Sendable {
    // MARK: Users

    /// Adds a person with default settings; an email is stored only as a keyed hash.
    /// - Throws: `RuleError.userExists` for an id in use (nothing written); the email key's errors.
    func addUser(_ user: NewUser, at: Date) throws

    /// Whether a person exists.
    func userExists(_ id: String) throws -> Bool

    /// A person as `users show` lists them (profile, counts of bins, feedback and picks), or `nil`.
    func user(_ id: String) throws -> Store.UserSummary?

    // MARK: Settings

    /// A person's settings (the defaults when their row is missing).
    /// - Throws: `RuleError.unknownUser`.
    func settings(user: String) throws -> UserSettings

    /// Changes a person's settings in one transaction: `change` gets the stored ones and may throw
    /// (nothing is written then). Turning location services off deletes the person's places and
    /// the coordinates their stored snapshots keep; turning calendar titles off removes the titles
    /// their imported events and stored snapshots keep.
    /// - Returns: the settings as stored.
    /// - Throws: `RuleError.unknownUser`, what `change` throws.
    @discardableResult
    func updateSettings(user: String, _ change: (inout UserSettings) throws -> Void) throws -> UserSettings

    // MARK: API keys

    /// Stores a new API key (its hash only).
    /// - Throws: `RuleError.unknownUser` for a user key of no person, `RuleError.keyExists` for an
    ///   id or hash in use, `InputError` for a label over 128 characters.
    func insertKey(_ key: APIKeyRecord) throws

    /// The key whose secret hashes to `hash`, revoked or not; `nil` when there is none.
    func key(hash: String) throws -> APIKeyRecord?

    /// Every key's id and whether it is revoked, in one query (a cache of looked-up keys
    /// revalidates all its entries at once).
    func keyRevocations() throws -> [String: Bool]

    /// Revokes a key by id.
    /// - Returns: false when there is no such key or it was already revoked.
    @discardableResult
    func revokeKey(id: String, at: Date) throws -> Bool

    // MARK: The rules' lookups

    /// The person a committed feedback event id belongs to, or `nil` when the id is new (ids are
    /// unique across people).
    func feedbackOwner(eventId: String) throws -> String?

    /// A committed pick by id, of whatever person, or `nil`.
    func pickRecord(id: String) throws -> PickRecord?

    /// How many feedback events the store holds: the log position of the newest (a forget does not
    /// move it back).
    func feedbackLogSize() throws -> Int64

    // MARK: A person's state

    /// A person's state with their feedback sequence, last event time, settings and the events
    /// their stored state does not include yet (``CachedUserState/pending``); `nil` for no such person.
    func loadCachedState(user: String, defaults: [Float]) throws -> CachedUserState?

    /// Commits writes in one transaction, in order (``UserWrite`` says what each writes): all of
    /// them or nothing. A feedback row whose id is committed already (of anyone) fails the whole
    /// commit; the rules judge ids before (``updatePerson(_:defaults:_:)`` does both in one transaction).
    func commit(_ writes: [UserWrite]) throws

    /// Loads a person's state (`nil` for no such person), runs `body` on it with the rules'
    /// lookups of the same transaction, and commits the writes `body` returns in that transaction:
    /// all of it or nothing, and no other writer of this person in between (also in another
    /// process on the same database). `body` may run more than once when the store must start the
    /// transaction over (PostgreSQL: another person committed the same event id meanwhile); it
    /// must change nothing outside its state and return value.
    /// - Throws: what `body` throws (nothing is written then); the store's errors.
    func updatePerson<R>(
        _ user: String, defaults: [Float],
        _ body: (_ user: inout CachedUserState?, _ reads: any PersonReads) throws -> (result: R, writes: [UserWrite])
    ) throws -> R

    // MARK: Forget

    /// Deletes every row of a person in one transaction: their state, settings, picks, feedback,
    /// event ids, keys and every other table keyed by them.
    /// - Returns: false when there was no such person.
    @discardableResult
    func forget(user: String) throws -> Bool
}

/// The rules' lookups inside one transaction of ``PersonStore/updatePerson(_:defaults:_:)``, as
/// that transaction sees the store. Valid only inside its closure.
public protocol PersonReads {
    /// The person a committed feedback event id belongs to, or `nil` when the id is new.
    func feedbackOwner(eventId: String) throws -> String?

    /// A committed pick by id, of whatever person, or `nil`.
    func pickRecord(id: String) throws -> PickRecord?

    /// How many feedback events the store holds (``PersonStore/feedbackLogSize()``).
    func feedbackLogSize() throws -> Int64
}
