import Foundation
import HTTPTypes
import Hummingbird
import SoundtrackContext
import SoundtrackEngine
import SoundtrackRules
import SoundtrackStore

/// Listening sessions of groups (docs/scoring.md, "Listening together"): `POST /v1/sessions`,
/// `GET /v1/sessions/{session}`, joining and leaving (`POST /v1/sessions/{session}/members`,
/// `DELETE /v1/sessions/{session}/members/{user}`), group picks (`POST …/picks`) and a member's
/// feedback on the current track (`POST …/feedback`), which teaches that member and counts as a
/// vote: when most members skip, the track is skipped.
///
/// Keys: an admin key reaches every session and joins everyone it names at once. A user's key
/// opens a session as one of its people: its own user joins, the others are **invited** and take
/// part only once they join with their own key (nobody's taste is ranked, and nobody votes,
/// without their consent). A user's key joins only a session it was invited to, leaves (or
/// declines) as its own user, and picks and gives feedback as a member.
extension SoundtrackAPI {
    func postSession(_ request: Request, context: APIRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let r = try JSONObjectReader(Self.parseJSON(try await readBody(request)), base: "")
        try r.rejectUnknown(["members"])
        _ = try r.require("members", "two or more user ids")
        let members = try r.strings("members") ?? []
        try Rules.checkGroup(members)
        let joined: Set<String>
        if principal.role == .admin {
            joined = Set(members)
        } else {
            guard let own = members.first(where: principal.may(reach:)) else {
                throw APIError(.forbidden, code: "forbidden", message: "a user's key opens only a session it is a member of", field: "members")
            }
            joined = [own]
        }
        let session = try live.store.createGroupSession(
            id: configuration.sessionIDs(), members: members, joined: joined, at: configuration.clock.now())
        var response = Self.json(Self.sessionJSON(session))
        response.status = .created
        return response
    }

    func getSession(_ request: Request, context: APIRequestContext, id: String) throws -> Response {
        let session = try memberSession(id, context: context)
        return Self.json(Self.sessionJSON(session))
    }

    func postSessionMember(_ request: Request, context: APIRequestContext, id: String) async throws -> Response {
        let principal = try context.requirePrincipal()
        let r = try JSONObjectReader(Self.parseJSON(try await readBody(request)), base: "")
        try r.rejectUnknown(["user"])
        let user = try r.identifier("user")
        try principal.authorize(user: user)
        if principal.role != .admin {
            guard let session = try live.store.groupSession(id: id) else { throw RuleError.unknownSession(id) }
            guard session.invited.contains(user) || session.members.contains(user) else {
                throw APIError(.forbidden, code: "forbidden", message: "a user's key joins only a session it was invited to", field: "user")
            }
        }
        return Self.json(Self.sessionJSON(try live.store.joinGroupSession(id: id, user: user, at: configuration.clock.now())))
    }

    func deleteSessionMember(_ request: Request, context: APIRequestContext, id: String, user: String) throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.authorize(user: user)
        guard let session = try live.store.leaveGroupSession(id: id, user: user) else {
            return Self.json(.object([("id", .string(id)), ("ended", .bool(true))]))
        }
        return Self.json(Self.sessionJSON(session))
    }

    /// A group pick for the session's members in the shared snapshot of the body (its `user`, a
    /// member, is whose phone sent it), leaving out what the session played lately.
    func postSessionPick(_ request: Request, context: APIRequestContext, id: String) async throws -> Response {
        let principal = try context.requirePrincipal()
        let body = try await readBody(request)
        let snapshot = try body.withUnsafeReadableBytes { raw throws(InputError) in try Snapshot.decode(bytes: raw) }
        try principal.authorize(user: snapshot.user)
        let top = try Self.top(request)
        guard let session = try live.store.groupSession(id: id) else { throw RuleError.unknownSession(id) }
        guard session.members.contains(snapshot.user) else { throw RuleError.notMember(snapshot.user, session: id) }
        guard session.members.count >= 2 else { throw RuleError.groupTooSmall(session.members.count) }
        // What the sender's settings let anyone see of their snapshot; each member's pick then
        // applies that member's own settings.
        let shared = Rules.permitted(snapshot, settings: try live.settings(user: snapshot.user))
        let pick = try live.groupPick(shared, members: session.members, top: top, exclude: Set(session.played))
        try live.store.recordGroupPick(
            id: id, context: Rules.sharedContext(shared, session: id), track: pick.track.id, previous: session.track,
            window: live.rules.engine.config.repeatWindow)
        return Self.json(.object([("session", .string(id))] + Self.members(of: pick.json(includeRanked: top > 1))))
    }

    /// The members of a JSON object (none for another value).
    private static func members(of value: JSONValue) -> [(String, JSONValue)] {
        if case let .object(pairs) = value { return pairs }
        return []
    }

    /// A member's feedback on the session's current track: an event of that member (the session's
    /// shared snapshot as its context) that teaches that member's bins only, and a vote.
    func postSessionFeedback(_ request: Request, context: APIRequestContext, id: String) async throws -> Response {
        let principal = try context.requirePrincipal()
        let r = try JSONObjectReader(Self.parseJSON(try await readBody(request)), base: "")
        try r.rejectUnknown(["id", "user", "signal", "at"])
        let eventId = try r.identifier("id")
        let user = try r.identifier("user")
        let signal = try r.requiredEnumeration("signal", Signal.self)
        guard signal != .rate else { throw InputError(path: "signal", expected: "like, dislike, skip or complete", got: "'rate'") }
        let at = try r.timestamp("at") ?? Timestamp(date: configuration.clock.now(), offsetSeconds: 0)
        try principal.authorize(user: user)
        guard let session = try live.store.groupSession(id: id) else { throw RuleError.unknownSession(id) }
        guard session.members.contains(user) else { throw RuleError.notMember(user, session: id) }
        guard let track = session.track, let shared = session.snapshot else { throw RuleError.noTrackYet(session: id) }
        let event = FeedbackEvent(
            id: eventId, user: user, at: at, track: track, signal: signal, snapshot: Rules.memberSnapshot(shared, member: user))
        let verdict = try await live.feedback([event])[0].get()
        let voted = try live.store.recordGroupVote(id: id, user: user, skip: event.isDislike, track: track)
        return Self.json(
            .object([
                ("event", verdict.json(eventId: eventId)), ("vote_counted", .bool(voted.counted)), ("session", Self.sessionJSON(voted.session))
            ]))
    }

    /// The session, for the key of a member or of someone invited, or an admin key.
    private func memberSession(_ id: String, context: APIRequestContext) throws -> GroupSession {
        let principal = try context.requirePrincipal()
        guard let session = try live.store.groupSession(id: id) else { throw RuleError.unknownSession(id) }
        guard principal.role == .admin || (session.members + session.invited).contains(where: principal.may(reach:)) else {
            throw APIError(.forbidden, code: "forbidden", message: "this key reaches no member of session '\(id)'", field: nil)
        }
        return session
    }

    /// A session as JSON: its id, members, the people invited, the current track, the members'
    /// votes on it and whether it was skipped.
    static func sessionJSON(_ s: GroupSession) -> JSONValue {
        .object([
            ("id", .string(s.id)), ("members", .array(s.members.map { .string($0) })), ("invited", .array(s.invited.map { .string($0) })),
            ("track", s.track.map { .string($0) } ?? .null),
            ("votes", .object(s.members.compactMap { m in s.votes[m].map { (m, .string($0)) } })), ("skipped", .bool(s.skipped)),
            ("ended", .bool(false))
        ])
    }
}
