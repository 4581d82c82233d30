/// The PostgreSQL schema of Soundtrack: every table with its place in a cluster sharded by user
/// (``tables``), and the append-only migrations that create it (``migrations``).
///
/// It is the twin of the SQLite schema (SoundtrackStore's `Schema`): the same tables and columns,
/// keyed so that each can be distributed by user (docs/architecture.md, "PostgreSQL and sharding by
/// user"). A SQLite migration gets its PostgreSQL twin here, in the same change:
/// `SoundtrackPostgresTests` compares the two live schemas and fails on a table or column one has
/// and the other lacks, and on a last migration that names an older SQLite schema.
public enum PostgresSchema {
    /// Every table, once, with its distribution (the one place in code that says which tables are
    /// shared and which are a person's).
    public static let tables: [PostgresTable] = [
        // A person's rows: distributed by user_id, colocated with users.
        PostgresTable(
            "users", .byUser, sqlite: .init(table: "users", renamed: ["id": "user_id"]),
            why: "the person; its key is the distribution column, so it is named user_id as in every table of a person"),
        .init("user_settings", .byUser, sqlite: .init(table: "user_settings"), why: "a person's settings"),
        .init("bins", .byUser, sqlite: .init(table: "bins"), why: "a person's bins, keyed (user_id, id)"),
        .init("weights", .byUser, sqlite: .init(table: "weights"), why: "a person's feature weights"),
        .init(
            "places", .byUser,
            sqlite: .init(table: "places", added: ["rowid": "the order of the person's places, which SQLite's store reads as the rowid"]),
            why: "a person's learned places"),
        .init("sessions", .byUser, sqlite: .init(table: "sessions"), why: "a person's listening session"),
        .init(
            "picks", .byUser,
            sqlite: .init(
                table: "picks",
                retyped: ["ranking": "bytea: SQLite's TEXT column holds the ranking's bytes (a BLOB), which PostgreSQL's text cannot (migration 2)"]),
            why: "a person's picks, keyed (user_id, id)"),
        .init(
            "feedback", .byUser,
            sqlite: .init(
                table: "feedback",
                added: ["rowid": "the feedback log's order (the community model counts every row up to a position), SQLite's implicit rowid"]),
            why: "a person's events, keyed (user_id, id); an id's owner across people is event_ids"),
        .init("calendar_events", .byUser, sqlite: .init(table: "calendar_events"), why: "a person's imported calendar"),
        .init("library_tracks", .byUser, sqlite: .init(table: "library_tracks"), why: "a person's streaming library"),
        .init("pending_events", .byUser, sqlite: .init(table: "pending_events"), why: "a person's events not yet in their stored state"),
        .init("blend_examples", .byUser, sqlite: .init(table: "blend_examples"), why: "the queries a person's likes taught the blend"),
        .init("community_people", .byUser, sqlite: .init(table: "community_people"), why: "a person's pairing windows of the community model"),
        .init("group_members", .byUser, sqlite: .init(table: "group_members"), why: "a person's membership of a group session"),
        .init("quiz_players", .byUser, sqlite: .init(table: "quiz_players"), why: "a person's quiz record"),
        .init("quizzes", .byUser, sqlite: .init(table: "quizzes"), why: "a person's quiz rounds"),
        // Separately distributed: a lookup by a key that is not the person.
        .init(
            "event_ids", .byColumn("id"), personal: true, sqlite: nil,
            why: "whose each event id is (rule 1: an id another person used is refused), one row an event, by id; "
                + "SQLite's feedback.id is unique across people, a key a distributed feedback table cannot have"),
        // Shared: a copy on every node.
        .init(
            "songs", .reference,
            sqlite: .init(table: "songs", added: ["rowid": "the catalog's order (the rows of its index), SQLite's implicit rowid"]),
            why: "the catalog"),
        .init("catalog_index", .reference, sqlite: .init(table: "catalog_index"), why: "the catalog's stored similarity index"),
        .init("community", .reference, sqlite: .init(table: "community"), why: "the community model's header and track counts"),
        .init("community_co_liked", .reference, sqlite: .init(table: "community_co_liked"), why: "the community model: co-likes by track"),
        .init("community_co_rated", .reference, sqlite: .init(table: "community_co_rated"), why: "the community model: co-reactions by track"),
        .init("community_contexts", .reference, sqlite: .init(table: "community_contexts"), why: "the community model: likes by context"),
        .init("community_tops", .reference, sqlite: .init(table: "community_tops"), why: "the community model: most liked by attribute"),
        .init("ranker_blends", .reference, sqlite: .init(table: "ranker_blends"), why: "the blends the deployment learned"),
        .init("store_settings", .reference, sqlite: .init(table: "store_settings"), why: "settings of the whole store"),
        .init(
            "group_sessions", .reference, sqlite: .init(table: "group_sessions"),
            why: "a listening session belongs to all its members, who live on different nodes"),
        .init(
            "api_keys", .reference, personal: true, sqlite: .init(table: "api_keys"),
            why: "a request's key is looked up by its hash before anyone knows whose it is; admin keys are no one's; few rows, rarely written"),
        .init("schema_migrations", .reference, sqlite: nil, why: "the migrations applied (SQLite's is GRDB's grdb_migrations)")
    ]

    /// SQLite's tables with no PostgreSQL twin, with why.
    public static let sqliteOnlyTables: [String: String] = [
        "grdb_migrations": "GRDB's record of the migrations applied; PostgreSQL's is schema_migrations"
    ]

    /// The table named `name`, if the schema has one.
    public static func table(_ name: String) -> PostgresTable? { tables.first { $0.name == name } }

    /// The migrations, oldest first: never edit one that has been released, append another.
    public static let migrations: [PostgresMigration] = [v1, v2]

    /// The statements that place the tables on a Citus cluster: reference tables first (the
    /// distributed tables' foreign keys point at them), then `users`, then the tables colocated
    /// with it, then the separately distributed ones. Run once, after the migrations, on a
    /// coordinator with the citus extension; plain PostgreSQL needs none of them.
    public static var citusStatements: [String] {
        var statements: [String] = []
        for t in tables where t.distribution == .reference {
            statements.append("SELECT create_reference_table('\(t.name)')")
        }
        statements.append("SELECT create_distributed_table('users', 'user_id')")
        for t in tables where t.distribution == .byUser && t.name != "users" {
            statements.append("SELECT create_distributed_table('\(t.name)', 'user_id', colocate_with => 'users')")
        }
        for t in tables {
            if case .byColumn(let column) = t.distribution {
                statements.append("SELECT create_distributed_table('\(t.name)', '\(column)', colocate_with => 'none')")
            }
        }
        return statements
    }
}
