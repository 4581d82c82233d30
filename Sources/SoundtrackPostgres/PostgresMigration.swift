/// One step of the PostgreSQL schema: SQL run in one transaction, recorded in `schema_migrations`.
public struct PostgresMigration: Sendable, Hashable {
    /// 1, 2, 3…: the order of the migrations, with no gap.
    public var version: Int
    /// What the migration does, in a line (stored with it).
    public var summary: String
    /// The SQLite migration whose schema this one brings PostgreSQL to (SoundtrackStore's `Schema`,
    /// "v22"): the last migration names the newest SQLite schema, or a test fails.
    public var sqliteSchema: String
    /// The statements, separated by `;`, run one by one in the migration's transaction (no parameters).
    public var sql: String

    public init(version: Int, summary: String, sqliteSchema: String, sql: String) {
        self.version = version
        self.summary = summary
        self.sqliteSchema = sqliteSchema
        self.sql = sql
    }
}
