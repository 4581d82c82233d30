import Foundation
import GRDB
import SoundtrackContext

/// A listening session of a group (docs/scoring.md, "Listening together"), as stored.
public struct GroupSession: Sendable, Equatable {
    /// The session's id.
    public var id: String
    /// The members, in the order they joined.
    public var members: [String]
    /// The shared snapshot of the last pick (its `user` is the session's id), `nil` before the first.
    public var snapshot: Snapshot?
    /// The track of the last pick.
    public var track: String?
    /// The tracks the session played, newest last (at most the engine's repeat window).
    public var played: [String]
    /// Each member's vote on ``track`` (`like` or `skip`); members who gave none are absent.
    public var votes: [String: String]
    /// Whether most members skipped ``track``.
    public var skipped: Bool
}

extension Store {
    /// Opens a listening session of a group: its members must be known users (the ``Rules`` check
    /// the count and repeats first).
    /// - Throws: ``RuleError/unknownMember(_:)``, ``RuleError/userExists(_:)`` for a session id in use; database errors.
    public func createGroupSession(id: String, members: [String], at: Date) throws -> GroupSession {
        try database.write { db in
            for m in members where try !Self.userExists(db, m) { throw RuleError.unknownMember(m) }
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM group_sessions WHERE id = ?)", arguments: [id]) == true {
                throw RuleError.userExists(id)
            }
            try db.execute(sql: "INSERT INTO group_sessions (id, created_at) VALUES (?, ?)", arguments: [id, at.timeIntervalSince1970])
            for (i, m) in members.enumerated() {
                // Join order is the time order; members given together keep theirs.
                try db.execute(
                    sql: "INSERT INTO group_members (session_id, user_id, joined_at) VALUES (?, ?, ?)",
                    arguments: [id, m, at.timeIntervalSince1970 + Double(i) * 1e-6])
            }
            return try Self.groupSession(db, id: id)!
        }
    }

    /// A listening session, `nil` when there is none with this id (or it ended).
    public func groupSession(id: String) throws -> GroupSession? {
        try database.read { db in try Self.groupSession(db, id: id) }
    }

    /// Adds a member to a session.
    /// - Throws: ``RuleError/unknownSession(_:)``, ``RuleError/unknownMember(_:)``,
    ///   ``RuleError/alreadyMember(_:session:)``; database errors.
    public func joinGroupSession(id: String, user: String, at: Date) throws -> GroupSession {
        try database.write { db in
            let session = try Self.requireGroupSession(db, id: id)
            guard try Self.userExists(db, user) else { throw RuleError.unknownMember(user) }
            guard !session.members.contains(user) else { throw RuleError.alreadyMember(user, session: id) }
            try db.execute(
                sql: "INSERT INTO group_members (session_id, user_id, joined_at) VALUES (?, ?, ?)",
                arguments: [id, user, at.timeIntervalSince1970])
            return try Self.groupSession(db, id: id)!
        }
    }

    /// Removes a member from a session; a session left with fewer than two members ends.
    /// - Returns: the session, `nil` when it ended.
    /// - Throws: ``RuleError/unknownSession(_:)``, ``RuleError/notMember(_:session:)``; database errors.
    public func leaveGroupSession(id: String, user: String) throws -> GroupSession? {
        try database.write { db in
            let session = try Self.requireGroupSession(db, id: id)
            guard session.members.contains(user) else { throw RuleError.notMember(user, session: id) }
            try db.execute(sql: "DELETE FROM group_members WHERE session_id = ? AND user_id = ?", arguments: [id, user])
            return try Self.groupSession(db, id: id)
        }
    }

    /// Records a group pick: the shared snapshot (stored as the session's), the track, played
    /// tracks kept to the newest `window`; the members' votes start again.
    /// - Throws: ``RuleError/unknownSession(_:)``; database errors.
    public func recordGroupPick(id: String, snapshot: Snapshot, track: String, window: Int) throws {
        try database.write { db in
            let session = try Self.requireGroupSession(db, id: id)
            var shared = snapshot
            shared.user = id
            let played = Array((session.played + [track]).suffix(max(1, window)))
            try db.execute(
                sql: "UPDATE group_sessions SET snapshot = ?, track = ?, played = ?, skipped = 0 WHERE id = ?",
                arguments: [shared.json().serialized(), track, JSONValue.array(played.map { .string($0) }).serialized(), id])
            try db.execute(sql: "UPDATE group_members SET vote = NULL WHERE session_id = ?", arguments: [id])
        }
    }

    /// Records a member's vote (`like` or `skip`) on the session's current track; when more than
    /// half the members voted `skip`, the track is skipped.
    /// - Returns: the session after the vote.
    /// - Throws: ``RuleError/unknownSession(_:)``, ``RuleError/notMember(_:session:)``; database errors.
    public func recordGroupVote(id: String, user: String, skip: Bool) throws -> GroupSession {
        try database.write { db in
            let session = try Self.requireGroupSession(db, id: id)
            guard session.members.contains(user) else { throw RuleError.notMember(user, session: id) }
            try db.execute(
                sql: "UPDATE group_members SET vote = ? WHERE session_id = ? AND user_id = ?", arguments: [skip ? "skip" : "like", id, user])
            let skips = try Int.fetchOne(db, sql: "SELECT count(*) FROM group_members WHERE session_id = ? AND vote = 'skip'", arguments: [id]) ?? 0
            if 2 * skips > session.members.count { try db.execute(sql: "UPDATE group_sessions SET skipped = 1 WHERE id = ?", arguments: [id]) }
            return try Self.groupSession(db, id: id)!
        }
    }

    static func requireGroupSession(_ db: Database, id: String) throws -> GroupSession {
        guard let session = try groupSession(db, id: id) else { throw RuleError.unknownSession(id) }
        return session
    }

    static func groupSession(_ db: Database, id: String) throws -> GroupSession? {
        guard let row = try Row.fetchOne(db, sql: "SELECT snapshot, track, played, skipped FROM group_sessions WHERE id = ?", arguments: [id]) else {
            return nil
        }
        let members = try Row.fetchAll(db, sql: "SELECT user_id, vote FROM group_members WHERE session_id = ? ORDER BY joined_at, user_id", arguments: [id])
        let snapshotText: String? = row["snapshot"]
        let playedText: String = row["played"]
        var played: [String] = []
        if case let .array(items) = try JSONParser.parse(playedText) { played = items.compactMap { if case let .string(s) = $0 { s } else { nil } } }
        return GroupSession(
            id: id, members: members.map { $0["user_id"] }, snapshot: try snapshotText.map { try Snapshot.decode(Data($0.utf8)) },
            track: row["track"], played: played,
            votes: Dictionary(uniqueKeysWithValues: members.compactMap { m in (m["vote"] as String?).map { (m["user_id"] as String, $0) } }),
            skipped: row["skipped"])
    }
}
