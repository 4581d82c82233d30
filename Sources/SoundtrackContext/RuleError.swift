import Foundation

/// An input that is well formed but that the rules of Soundtrack refuse: an unknown user, an id
/// taken by someone else, an event out of time order, a track or pick that does not exist.
///
/// The rules module (`SoundtrackRules`) decides these for picks and feedback events, the store for
/// the operations that need a user to exist (keys, calendars, libraries). Each front-end maps them
/// once, by case, never by their text: to an exit status (the CLI), an HTTP status and code (the
/// service), or a line of an error report (batch, replay, imports).
///
/// ```swift
/// do { try service.feedback(event) } catch let e as RuleError {
///     print(e.field, e)   // "at", "at: expected a time not before the user's previous event (…), got '…' (…)"
/// }
/// ```
public enum RuleError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No user has this id.
    case unknownUser(String)
    /// A user with this id exists already.
    case userExists(String)
    /// An API key with this id or secret exists already.
    case keyExists(String)
    /// The event's id belongs to an applied event of another user.
    case eventIdTaken(String)
    /// The event is earlier than the user's previous applied event (`previous`).
    case outOfOrder(at: Timestamp, previous: Date)
    /// The track is not in the catalog; `field` names the input that held it (`track`, `song`).
    case unknownTrack(String, field: String)
    /// The event names a pick (`pickId`) that does not exist, and carries no snapshot.
    case unknownPick(String, user: String)
    /// The event names a pick of another user than its own (`user`).
    case pickOfAnotherUser(String, user: String)
    /// The event names a pick whose bin no longer exists, and carries no snapshot.
    case pickBinGone(String)
    /// The event names neither a pick nor carries a snapshot.
    case noContext
    /// The user (`user`) has no learned place with this id.
    case unknownPlace(String, user: String)
    /// A group names fewer than two members (the count).
    case groupTooSmall(Int)
    /// A group names this member more than once.
    case memberTwice(String)
    /// A group names a member who is not a known user.
    case unknownMember(String)
    /// No listening session of a group has this id (or it ended).
    case unknownSession(String)
    /// The user is not a member of the session (`session`).
    case notMember(String, session: String)
    /// The user is a member of the session already.
    case alreadyMember(String, session: String)
    /// The session has no current track (no pick yet) for feedback to be about.
    case noTrackYet(session: String)
    /// The session's current track changed since the request read it (another pick came first).
    case sessionMoved(session: String)
    /// Every track the members rank was played lately.
    case nothingToPlay
    /// The user (`user`) was issued no quiz round with this id (another person's round included).
    case unknownQuiz(String, user: String)
    /// The quiz round was answered before: a round is answered once.
    case quizAnswered(String)
    /// The person's history is too short for a quiz round: `likedSongs` songs liked in `bins` bins
    /// (docs/scoring.md, "Quiz").
    case tooLittleHistory(user: String, likedSongs: Int, bins: Int)

    /// The input field at fault (a JSON path of the event or request).
    public var field: String {
        switch self {
        case .unknownUser: "user"
        case .userExists, .keyExists, .eventIdTaken: "id"
        case .outOfOrder: "at"
        case let .unknownTrack(_, field): field
        case .unknownPick, .pickOfAnotherUser, .pickBinGone, .noContext: "pick_id"
        case .unknownPlace: "place"
        case .groupTooSmall, .memberTwice, .unknownMember: "members"
        case .unknownSession: "session"
        case .notMember, .alreadyMember: "user"
        case .noTrackYet, .sessionMoved, .nothingToPlay: "session"
        case .unknownQuiz, .quizAnswered: "quiz"
        case .tooLittleHistory: "user"
        }
    }

    /// What the rules expected there, in words.
    public var expected: String {
        switch self {
        case .unknownUser: "a known user (add users with `soundtrack users add` or POST /v1/users)"
        case .userExists: "a new user id"
        case .keyExists: "a new key id"
        case .eventIdTaken: "an event id not used by another user"
        case let .outOfOrder(at, previous):
            "a time not before the user's previous event (\(Timestamp(date: previous, offsetSeconds: at.offsetSeconds).rfc3339))"
        case .unknownTrack: "a track id of the catalog"
        case let .unknownPick(_, user): "a pick of user '\(user)' (or an embedded snapshot)"
        case let .pickOfAnotherUser(_, user): "a pick of user '\(user)'"
        case .pickBinGone: "a pick whose bin still exists (or an embedded snapshot)"
        case .noContext: "a pick of this user or an embedded snapshot"
        case let .unknownPlace(_, user): "a place of user '\(user)' (soundtrack places list)"
        case .groupTooSmall: "two or more members"
        case .memberTwice: "each member once"
        case .unknownMember: "known users as members"
        case .unknownSession: "an open listening session (POST /v1/sessions)"
        case let .notMember(_, session): "a member of session '\(session)'"
        case let .alreadyMember(_, session): "a user who is not yet a member of session '\(session)'"
        case .noTrackYet: "a session with a current track (POST …/picks first)"
        case .sessionMoved: "the session's current track as the request found it (another pick came first: read the session again)"
        case .nothingToPlay: "a track the members rank that the session did not play lately"
        case let .unknownQuiz(_, user): "a quiz round issued to user '\(user)' (GET /v1/users/{id}/quiz, soundtrack quiz --json)"
        case .quizAnswered: "a quiz round not answered yet (a round is answered once)"
        case .tooLittleHistory:
            "a person with a history for a quiz: at least 5 songs liked, in at least 2 bins (like more songs in more places first)"
        }
    }

    /// What was found instead.
    public var got: String {
        switch self {
        case let .unknownUser(id), let .eventIdTaken(id), let .unknownTrack(id, _), let .unknownPick(id, _), let .pickBinGone(id),
            let .unknownPlace(id, _), let .unknownQuiz(id, _):
            "'\(id)'"
        case let .quizAnswered(id): "'\(id)' (answered before)"
        case let .tooLittleHistory(user, songs, bins):
            "'\(user)' with \(songs) liked song\(songs == 1 ? "" : "s") in \(bins) bin\(bins == 1 ? "" : "s")"
        case let .userExists(id), let .keyExists(id): "'\(id)' (already exists)"
        case let .outOfOrder(at, _): "'\(at.rfc3339)' (events must be in time order per user)"
        case let .pickOfAnotherUser(id, _): "'\(id)' (a pick of another user)"
        case .noContext: "nothing"
        case let .groupTooSmall(n): n == 1 ? "one member" : "\(n) members"
        case let .memberTwice(id): "'\(id)' twice"
        case let .unknownMember(id): "'\(id)' (an unknown user)"
        case let .unknownSession(id): "'\(id)'"
        case let .notMember(id, _): "'\(id)' (not a member)"
        case let .alreadyMember(id, _): "'\(id)' (a member already)"
        case let .noTrackYet(session), let .sessionMoved(session): "'\(session)'"
        case .nothingToPlay: "every ranked track played lately"
        }
    }

    /// `field: expected …, got …`, as an ``InputError`` reads.
    public var description: String { "\(field): expected \(expected), got \(got)" }
}

extension InputError {
    /// The input error that says what `rule` says, for code that reports every refused input as
    /// an ``InputError`` (the engine's own guards, which the rules check before calling it).
    public init(_ rule: RuleError) {
        self.init(path: rule.field, expected: rule.expected, got: rule.got)
    }
}
