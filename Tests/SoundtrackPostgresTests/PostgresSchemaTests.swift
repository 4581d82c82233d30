import GRDB
import PostgresNIO
import XCTest

@testable import SoundtrackPostgres
@testable import SoundtrackStore

/// The PostgreSQL schema on a live server: the migrations apply once, the schema keeps the rules
/// of distribution by user, and it is the twin of the SQLite schema.
final class PostgresSchemaTests: XCTestCase {
    let logger = TestDatabase.logger

    func testMigrationsApplyOnceAndASecondRunChangesNothing() async throws {
        try await TestDatabase.withFreshDatabase { endpoint in
            try await endpoint.withConnection(logger: logger) { c in
                let migrator = PostgresMigrator()
                let all = PostgresSchema.migrations.map(\.version)
                let first = try await migrator.migrate(c, logger: logger)
                XCTAssertEqual(first, all)
                let before = try await LiveSchema.read(c, logger: logger)
                let second = try await migrator.migrate(c, logger: logger)
                XCTAssertEqual(second, [], "a second run applies nothing")
                let after = try await LiveSchema.read(c, logger: logger)
                XCTAssertEqual(after, before, "a second run changes no table, key or column")
                let applied = try await migrator.appliedVersions(c, logger: logger)
                XCTAssertEqual(applied, all)
            }
        }
    }

    func testTwoConnectionsMigratingAtOnceApplyEachMigrationOnce() async throws {
        try await TestDatabase.withFreshDatabase { endpoint in
            let logger = self.logger
            async let a = endpoint.withConnection(logger: logger) { try await PostgresMigrator().migrate($0, logger: logger) }
            async let b = endpoint.withConnection(logger: logger) { try await PostgresMigrator().migrate($0, logger: logger) }
            let (ranA, ranB) = try await (a, b)
            XCTAssertEqual((ranA + ranB).sorted(), PostgresSchema.migrations.map(\.version), "each migration ran once, on one of the two")
        }
    }

    func testAnEditedOrUnknownMigrationIsRefused() async throws {
        try await TestDatabase.withFreshDatabase { endpoint in
            try await endpoint.withConnection(logger: logger) { c in
                try await PostgresMigrator().migrate(c, logger: logger)
                var edited = PostgresSchema.migrations
                edited[0].sql += "\n-- edited"
                do {
                    try await PostgresMigrator(migrations: edited).migrate(c, logger: logger)
                    XCTFail("an edited migration was accepted")
                } catch let error as PostgresMigrationError {
                    XCTAssertEqual(error, .changed(version: 1))
                }
                let newer = PostgresMigration(version: PostgresSchema.migrations.count + 1, summary: "a newer build's", sqliteSchema: "v99", sql: "SELECT 1")
                try await PostgresMigrator(migrations: PostgresSchema.migrations + [newer]).migrate(c, logger: logger)
                do {
                    try await PostgresMigrator().migrate(c, logger: logger)
                    XCTFail("a database of a newer build was accepted")
                } catch let error as PostgresMigrationError {
                    XCTAssertEqual(error, .unknownVersions([newer.version]))
                }
            }
        }
    }

    /// The rules of ``DistributionRules`` on the schema as the server has it after every migration.
    func testTheLiveSchemaCanBeDistributedByUser() async throws {
        try await TestDatabase.withFreshDatabase { endpoint in
            try await endpoint.withConnection(logger: logger) { c in
                try await PostgresMigrator().migrate(c, logger: logger)
                let schema = try await LiveSchema.read(c, logger: logger)
                XCTAssertEqual(schema.tables.count, PostgresSchema.tables.count)
                XCTAssertGreaterThan(schema.foreignKeys.count, 10, "the catalog query found the foreign keys")
                XCTAssertGreaterThan(schema.uniqueKeys.count, PostgresSchema.tables.count, "the catalog query found the keys")
                let violations = DistributionRules.violations(of: schema)
                XCTAssertEqual(violations, [], violations.map(\.description).joined(separator: "\n"))
            }
        }
    }

    /// A migration that breaks the rules, applied for real after the schema's: the check names each
    /// broken rule. (What a future migration that forgets `user_id` in a key would meet.)
    func testTheRulesCatchAMigrationThatBreaksThem() async throws {
        let bad = PostgresMigration(
            version: PostgresSchema.migrations.count + 1, summary: "deliberately not distributable", sqliteSchema: "v22",
            sql: """
                CREATE TABLE tokens (
                    id text NOT NULL PRIMARY KEY,
                    user_id text NOT NULL,
                    bin_id bigint NOT NULL,
                    FOREIGN KEY (user_id, bin_id) REFERENCES bins (user_id, id)
                );
                CREATE TABLE shared_notes (id bigint PRIMARY KEY, user_id text, pick_owner text, pick_id text,
                    FOREIGN KEY (pick_owner, pick_id) REFERENCES picks (user_id, id));
                CREATE UNIQUE INDEX feedback_by_id ON feedback (id);
                ALTER TABLE bins ADD CONSTRAINT bins_other_person FOREIGN KEY (prior, id) REFERENCES bins (user_id, id);
                CREATE TABLE unlisted (n bigint);
                """)
        try await TestDatabase.withFreshDatabase { endpoint in
            try await endpoint.withConnection(logger: logger) { c in
                try await PostgresMigrator(migrations: PostgresSchema.migrations + [bad]).migrate(c, logger: logger)
                let schema = try await LiveSchema.read(c, logger: logger)
                let tables =
                    PostgresSchema.tables + [
                        PostgresTable("tokens", .byUser, sqlite: nil, why: "a test's"),
                        PostgresTable("shared_notes", .reference, sqlite: nil, why: "a test's")
                    ]
                let found = Set(DistributionRules.violations(of: schema, tables: tables).map(\.description))
                let expected: Set<String> = [
                    "tokens: primary key tokens_pkey (id) does not include user_id",
                    "feedback: unique key feedback_by_id (id) does not include user_id",
                    "bins: foreign key bins_other_person (prior, id) → bins (user_id, id) does not pair user_id with user_id: it may point at another person's row",
                    "shared_notes: has a user_id column but is not listed as personal (a forget would miss it)",
                    "shared_notes: foreign key shared_notes_pick_owner_pick_id_fkey (pick_owner, pick_id) → picks (user_id, id): "
                        + "a reference table may not point at a distributed table",
                    "unlisted: not in PostgresSchema.tables: say whether it is a person's (byUser), shared (reference) or distributed by another key"
                ]
                XCTAssertEqual(found, expected, "found:\n\(found.sorted().joined(separator: "\n"))")
            }
        }
    }

    /// The PostgreSQL schema is the SQLite schema's twin: the same tables (less those listed as one
    /// store's own) and in each the same columns, of matching types, NOT NULL where SQLite's are;
    /// and the last PostgreSQL migration names the newest SQLite migration. A SQLite migration
    /// without its PostgreSQL twin fails here.
    func testThePostgresSchemaIsTheTwinOfTheSQLiteSchema() async throws {
        XCTAssertEqual(
            PostgresSchema.migrations.last?.sqliteSchema, Schema.latestMigration,
            "the SQLite schema is at \(Schema.latestMigration): add the PostgreSQL migration that brings PostgreSQL there (PostgresSchema.migrations)")
        let sqlite = try sqliteTables()
        try await TestDatabase.withFreshDatabase { endpoint in
            try await endpoint.withConnection(logger: logger) { c in
                try await PostgresMigrator().migrate(c, logger: logger)
                let live = try await LiveSchema.read(c, logger: logger)
                let twins = Dictionary(uniqueKeysWithValues: PostgresSchema.tables.compactMap { t in t.sqlite.map { ($0.table, t) } })
                let expectedSQLite = Set(twins.keys).union(PostgresSchema.sqliteOnlyTables.keys)
                XCTAssertEqual(
                    Set(sqlite.keys), expectedSQLite,
                    "SQLite tables without a PostgreSQL twin: \(Set(sqlite.keys).subtracting(expectedSQLite).sorted()); "
                        + "twins of no SQLite table: \(expectedSQLite.subtracting(sqlite.keys).sorted())")
                XCTAssertEqual(Set(live.tables.keys), Set(PostgresSchema.tables.map(\.name)))
                for (name, columns) in sqlite.sorted(by: { $0.key < $1.key }) {
                    guard let table = twins[name], let twin = table.sqlite, let pgColumns = live.tables[table.name] else { continue }
                    let pg = Dictionary(uniqueKeysWithValues: pgColumns.map { ($0.name, $0) })
                    var expected = Set(twin.added.keys)
                    for column in columns {
                        let pgName = twin.renamed[column.name] ?? column.name
                        expected.insert(pgName)
                        guard let p = pg[pgName] else { continue }
                        // A column the twin lists as retyped has the type it names (the text before the colon).
                        let retyped = twin.retyped[column.name].map { Set([String($0.prefix { $0 != ":" })]) }
                        let types = retyped ?? Self.postgresTypes[column.type.uppercased()] ?? []
                        XCTAssertTrue(types.contains(p.type), "\(name).\(column.name): SQLite's \(column.type) is PostgreSQL's \(types), not \(p.type)")
                        if column.notNull { XCTAssertFalse(p.nullable, "\(name).\(column.name) is NOT NULL in SQLite, nullable in PostgreSQL") }
                    }
                    XCTAssertEqual(
                        Set(pg.keys), expected,
                        "\(name): columns only in PostgreSQL \(Set(pg.keys).subtracting(expected).sorted()), only in SQLite \(expected.subtracting(pg.keys).sorted())")
                }
            }
        }
    }

    /// The PostgreSQL types a SQLite column's declared type is stored as.
    static let postgresTypes: [String: Set<String>] = [
        "INTEGER": ["bigint"], "REAL": ["double precision"], "TEXT": ["text", "json"], "BLOB": ["bytea"]
    ]

    /// The tables of a new SQLite database of this build, with their columns (name, declared type, NOT NULL).
    private func sqliteTables() throws -> [String: [(name: String, type: String, notNull: Bool)]] {
        let queue = try DatabaseQueue()
        try Schema.migrator.migrate(queue)
        return try queue.read { db in
            var tables: [String: [(name: String, type: String, notNull: Bool)]] = [:]
            let names = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            for name in names {
                tables[name] = try db.columns(in: name).map { ($0.name, $0.type, $0.isNotNull) }
            }
            return tables
        }
    }
}
