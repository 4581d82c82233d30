import Foundation
import GRDB
import SoundtrackContext

/// A listening session of a group (docs/scoring.md, "Listening together"), as stored.
public struct GroupSession: Sendable, Equatable {
    /// The session's id.
    public var id: String
    /// The members who joined, in the order they joined: the ones picks rank for and votes count.
    public var members: [String]
    /// The people invited who have not joined yet, in the order they were invited.
    public var invited: [String]
    /// The shared context of the last pick (``Rules/sharedContext(_:session:)``), `nil` before the first.
    public var snapshot: Snapshot?
    /// The track of the last pick.
    public var track: String?
    /// The tracks the session played, newest last (at most the engine's repeat window).
    public var played: [String]
    /// Each member's vote on ``track`` (`like` or `skip`); members who gave none are absent.
    public var votes: [String: String]
    /// Whether more than half the members voted `skip` on ``track``.
    public var skipped: Bool
}

extension Store {
    /// Opens a listening session of a group: its people must be known users (the ``Rules`` check
    /// the count and repeats first); those of `joined` join at once, the others are invited.
    /// - Throws: ``RuleError/unknownMember(_:)``, ``RuleError/userExists(_:)`` for a session id in use; database errors.
    public func createGroupSession(id: String, members: [String], joined: Set<String>, at: Date) throws -> GroupSession {
        try database.write { db in
            for m in members where try !Self.userExists(db, m) { throw RuleError.unknownMember(m) }
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM group_sessions WHERE id = ?)", arguments: [id]) == true {
                throw RuleError.userExists(id)
            }
            try db.execute(sql: "INSERT INTO group_sessions (id, created_at) VALUES (?, ?)", arguments: [id, at.timeIntervalSince1970])
            for (i, m) in members.enumerated() {
                // People named together keep their order.
                let t = at.timeIntervalSince1970 + Double(i) * 1e-6
                try db.execute(
                    sql: "INSERT INTO group_members (session_id, user_id, invited_at, joined_at) VALUES (?, ?, ?, ?)",
                    arguments: [id, m, t, joined.contains(m) ? t : nil])
            }
            return try Self.groupSession(db, id: id)!
        }
    }

    /// A listening session, `nil` when there is none with this id (or it ended).
    public func groupSession(id: String) throws -> GroupSession? {
        try database.read { db in try Self.groupSession(db, id: id) }
    }

    /// A person joins a session: one invited accepts, anyone else is added (who may add whom is
    /// the front end's rule).
    /// - Throws: ``RuleError/unknownSession(_:)``, ``RuleError/unknownMember(_:)``,
    ///   ``RuleError/alreadyMember(_:session:)``; database errors.
    public func joinGroupSession(id: String, user: String, at: Date) throws -> GroupSession {
        try database.write { db in
            let session = try Self.requireGroupSession(db, id: id)
            guard try Self.userExists(db, user) else { throw RuleError.unknownMember(user) }
            guard !session.members.contains(user) else { throw RuleError.alreadyMember(user, session: id) }
            try db.execute(
                sql: """
                    INSERT INTO group_members (session_id, user_id, invited_at, joined_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (session_id, user_id) DO UPDATE SET joined_at = excluded.joined_at
                    """, arguments: [id, user, at.timeIntervalSince1970, at.timeIntervalSince1970])
            return try Self.groupSession(db, id: id)!
        }
    }

    /// A member leaves a session, or an invited person declines; a session left with fewer than
    /// two people ends.
    /// - Returns: the session, `nil` when it ended.
    /// - Throws: ``RuleError/unknownSession(_:)``, ``RuleError/notMember(_:session:)``; database errors.
    public func leaveGroupSession(id: String, user: String) throws -> GroupSession? {
        try database.write { db in
            let session = try Self.requireGroupSession(db, id: id)
            guard session.members.contains(user) || session.invited.contains(user) else { throw RuleError.notMember(user, session: id) }
            try db.execute(sql: "DELETE FROM group_members WHERE session_id = ? AND user_id = ?", arguments: [id, user])
            if session.members.contains(user) { try Self.countSkips(db, id: id) }
            return try Self.groupSession(db, id: id)
        }
    }

    /// Records a group pick, if the session's track is still `previous` (the one the pick's
    /// request read): the shared context, the track, the played tracks kept to the newest
    /// `window`; the members' votes start again.
    /// - Throws: ``RuleError/unknownSession(_:)``, ``RuleError/sessionMoved(session:)`` when another
    ///   pick came first; database errors.
    public func recordGroupPick(id: String, context: Snapshot, track: String, previous: String?, window: Int) throws {
        try database.write { db in
            let session = try Self.requireGroupSession(db, id: id)
            guard session.track == previous else { throw RuleError.sessionMoved(session: id) }
            let played = Array((session.played + [track]).suffix(max(1, window)))
            try db.execute(
                sql: "UPDATE group_sessions SET snapshot = ?, track = ?, played = ?, skipped = 0 WHERE id = ?",
                arguments: [context.json().serialized(), track, JSONValue.array(played.map { .string($0) }).serialized(), id])
            try db.execute(sql: "UPDATE group_members SET vote = NULL WHERE session_id = ?", arguments: [id])
        }
    }

    /// Records a member's vote (`like` or `skip`) on `track` while it is still the session's
    /// current track (a vote on a track another pick replaced meanwhile is not counted); the track
    /// is skipped while more than half the members vote `skip`.
    /// - Returns: the session after the vote, and whether the vote was counted.
    /// - Throws: ``RuleError/unknownSession(_:)``, ``RuleError/notMember(_:session:)``; database errors.
    public func recordGroupVote(id: String, user: String, skip: Bool, track: String) throws -> (session: GroupSession, counted: Bool) {
        try database.write { db in
            let session = try Self.requireGroupSession(db, id: id)
            guard session.members.contains(user) else { throw RuleError.notMember(user, session: id) }
            guard session.track == track else { return (session, false) }
            try db.execute(
                sql: "UPDATE group_members SET vote = ? WHERE session_id = ? AND user_id = ?", arguments: [skip ? "skip" : "like", id, user])
            try Self.countSkips(db, id: id)
            return (try Self.groupSession(db, id: id)!, true)
        }
    }

    /// Sets the session's `skipped` from its members' votes: more than half of those who joined voted `skip`.
    static func countSkips(_ db: Database, id: String) throws {
        try db.execute(
            sql: """
                UPDATE group_sessions SET skipped = (
                    2 * (SELECT count(*) FROM group_members WHERE session_id = ?1 AND joined_at IS NOT NULL AND vote = 'skip')
                    > (SELECT count(*) FROM group_members WHERE session_id = ?1 AND joined_at IS NOT NULL)) WHERE id = ?1
                """, arguments: [id])
    }

    static func requireGroupSession(_ db: Database, id: String) throws -> GroupSession {
        guard let session = try groupSession(db, id: id) else { throw RuleError.unknownSession(id) }
        return session
    }

    static func groupSession(_ db: Database, id: String) throws -> GroupSession? {
        guard let row = try Row.fetchOne(db, sql: "SELECT snapshot, track, played, skipped FROM group_sessions WHERE id = ?", arguments: [id]) else {
            return nil
        }
        let people = try Row.fetchAll(
            db, sql: "SELECT user_id, joined_at, vote FROM group_members WHERE session_id = ? ORDER BY coalesce(joined_at, invited_at), user_id",
            arguments: [id])
        let snapshotText: String? = row["snapshot"]
        guard let played = try? decodeStrings(row["played"], user: id, column: "played") else {
            throw StoreError.corrupt(table: "group_sessions", column: "played", row: 0, expected: "a JSON array of track ids")
        }
        let joined = people.filter { ($0["joined_at"] as Double?) != nil }
        return GroupSession(
            id: id, members: joined.map { $0["user_id"] }, invited: people.filter { ($0["joined_at"] as Double?) == nil }.map { $0["user_id"] },
            snapshot: try snapshotText.map { try Snapshot.decode(Data($0.utf8)) }, track: row["track"], played: played,
            votes: Dictionary(uniqueKeysWithValues: joined.compactMap { m in (m["vote"] as String?).map { (m["user_id"] as String, $0) } }),
            skipped: row["skipped"])
    }
}
