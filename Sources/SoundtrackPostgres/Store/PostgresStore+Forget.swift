import Foundation
import PostgresNIO
import SoundtrackStore

extension PostgresStore {
    /// Deletes every row of a person in one transaction (``PersonStore/forget(user:)``).
    /// - Returns: false when there was no such person.
    @discardableResult
    public func forget(user: String) throws -> Bool {
        try transaction(locking: [user]) { tx in
            guard try Self.userExists(tx, user) else { return false }
            try Self.deletePerson(tx, user)
            return true
        }
    }

    /// Deletes the person's rows from every personal table (``PostgresTable/personal``: those
    /// distributed by user, and `event_ids` and `api_keys`, which no foreign key cascades to),
    /// `users` last; ends the group sessions the person leaves with fewer than two members (what
    /// SQLite's trigger `group_session_ends_below_two` does); and, as SQLite's forget does, drops the
    /// community model counted from the person's events and counts the forget
    /// (`store_settings.forgotten_people`). SQLite deletes the model's header and tops and the
    /// co-occurrence rows of the person's tracks; this store deletes the co-occurrence tables whole,
    /// because it writes no community model yet (counted again from the log when one is).
    static func deletePerson(_ tx: PostgresTransaction, _ user: String) throws {
        let sessions = try tx.query("SELECT session_id FROM group_members WHERE user_id = \(user)").map { try $0.decode(String.self) }
        for table in ["community", "community_tops", "community_co_liked", "community_co_rated", "community_contexts"] {
            try tx.execute(PostgresQuery(unsafeSQL: "DELETE FROM \(table)"))
        }
        try tx.execute(
            """
            INSERT INTO store_settings (name, value) VALUES ('forgotten_people', '1')
            ON CONFLICT (name) DO UPDATE SET value = (store_settings.value::bigint + 1)::text
            """)
        for table in PostgresSchema.tables where table.personal && table.name != "users" {
            var binds = PostgresBindings()
            binds.append(user)
            try tx.execute(PostgresQuery(unsafeSQL: "DELETE FROM \(table.name) WHERE user_id = $1", binds: binds))
        }
        try tx.execute("DELETE FROM users WHERE user_id = \(user)")
        for session in sessions {
            try tx.execute(
                "DELETE FROM group_sessions WHERE id = \(session) AND (SELECT count(*) FROM group_members WHERE session_id = \(session)) < 2")
        }
    }
}
