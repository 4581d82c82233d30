extension PostgresSchema {
    /// `picks.ranking` as `bytea`: the PostgreSQL store writes a pick's ranking in the bytes the
    /// SQLite store writes (bin Int32 and score Float32 a bin, `StoredForm.ranking`), which SQLite
    /// keeps in a column declared TEXT and PostgreSQL's `text` cannot hold (it refuses a zero byte).
    /// A row written as text before (none: no store wrote picks before this) keeps its bytes.
    static let v2 = PostgresMigration(
        version: 2, summary: "picks.ranking as bytea, the bytes the SQLite store writes", sqliteSchema: "v22",
        sql: """
            ALTER TABLE picks ALTER COLUMN ranking TYPE bytea USING convert_to(ranking, 'UTF8')
            """)
}
