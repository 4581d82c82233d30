import Crypto
import Foundation
import Logging
import PostgresNIO

/// Brings a PostgreSQL database's schema up to date with ``PostgresSchema/migrations``.
///
/// Each missing migration runs in a transaction of its own under one advisory lock
/// (``lockKey``), and is recorded in `schema_migrations` in that transaction: two processes
/// migrating the same new database at once run each migration once, the second waiting for the
/// first and then finding it applied. A migration's text is kept as its checksum: a migration
/// edited after a database applied it, or a database holding versions this build does not know,
/// is refused (``PostgresMigrationError``) rather than written to.
public struct PostgresMigrator: Sendable {
    /// The advisory lock every migration runs under (the bytes of "Soundtra").
    public static let lockKey: Int64 = 0x536F_756E_6474_7261

    /// The migrations it applies, in version order.
    public let migrations: [PostgresMigration]

    /// - Parameter migrations: the schema's by default; versions 1, 2, 3… in order (a programming
    ///   error otherwise).
    public init(migrations: [PostgresMigration] = PostgresSchema.migrations) {
        precondition(migrations.enumerated().allSatisfy { $0.offset + 1 == $0.element.version }, "migrations are numbered 1, 2, 3… in order")
        self.migrations = migrations
    }

    /// Applies the migrations the database lacks.
    /// - Returns: the versions this call applied, oldest first (none when the schema was current).
    /// - Throws: ``PostgresMigrationError`` for a database this build cannot migrate, PostgresNIO's
    ///   errors for the server's.
    @discardableResult
    public func migrate(_ connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        let applied = try await prepare(connection, logger: logger)
        var done: [Int] = []
        for migration in migrations where !applied.contains(migration.version) {
            let ran = try await run(migration, on: connection, logger: logger)
            if ran { done.append(migration.version) }
        }
        return done
    }

    /// The versions the database has applied, oldest first (none for a new database).
    public func appliedVersions(_ connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        let exists =
            try await connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger)
            .collect().first?.decode(Bool.self) ?? false
        guard exists else { return [] }
        var versions: [Int] = []
        for try await version in try await connection.query("SELECT version FROM schema_migrations ORDER BY version", logger: logger).decode(Int.self) {
            versions.append(version)
        }
        return versions
    }

    /// Creates `schema_migrations` when missing and checks what the database applied against this
    /// build's migrations.
    private func prepare(_ connection: PostgresConnection, logger: Logger) async throws -> Set<Int> {
        let rows: [(Int, Bool)] = try await connection.withTransaction(logger: logger) { c in
            try await c.query("SELECT pg_advisory_xact_lock(\(Self.lockKey))", logger: logger)
            try await c.query(
                """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version integer NOT NULL PRIMARY KEY CHECK (version >= 1),
                    summary text NOT NULL,
                    sqlite_schema text NOT NULL,
                    checksum text NOT NULL CHECK (length(checksum) = 64),
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """, logger: logger)
            var rows: [(Int, Bool)] = []
            for try await (version, checksum) in try await c.query("SELECT version, checksum FROM schema_migrations ORDER BY version", logger: logger)
                .decode((Int, String).self)
            {
                let known = migrations.first { $0.version == version }
                rows.append((version, known.map { Self.checksum($0.sql) == checksum } ?? false))
            }
            return rows
        }
        let unknown = rows.map(\.0).filter { v in !migrations.contains { $0.version == v } }
        guard unknown.isEmpty else { throw PostgresMigrationError.unknownVersions(unknown) }
        if let changed = rows.first(where: { !$0.1 }) { throw PostgresMigrationError.changed(version: changed.0) }
        return Set(rows.map(\.0))
    }

    /// Runs one migration unless another process applied it meanwhile; returns whether it ran.
    private func run(_ migration: PostgresMigration, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        do {
            return try await connection.withTransaction(logger: logger) { c in
                try await c.query("SELECT pg_advisory_xact_lock(\(Self.lockKey))", logger: logger)
                let present = try await c.query("SELECT 1 FROM schema_migrations WHERE version = \(migration.version)", logger: logger).collect()
                guard present.isEmpty else { return false }
                for statement in SQLStatements.split(migration.sql) {
                    try await c.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await c.query(
                    """
                    INSERT INTO schema_migrations (version, summary, sqlite_schema, checksum)
                    VALUES (\(migration.version), \(migration.summary), \(migration.sqliteSchema), \(Self.checksum(migration.sql)))
                    """, logger: logger)
                logger.info("applied PostgreSQL migration", metadata: ["version": "\(migration.version)", "summary": "\(migration.summary)"])
                return true
            }
        } catch let error as PostgresTransactionError {
            throw PostgresMigrationError.failed(version: migration.version, message: PostgresErrorText.describe(error))
        }
    }

    /// The SHA-256 of a migration's text, as hex.
    static func checksum(_ sql: String) -> String { SHA256.hash(data: Array(sql.utf8)).map { String(format: "%02x", $0) }.joined() }
}

/// Why ``PostgresMigrator`` refused or failed to migrate a database.
public enum PostgresMigrationError: Error, Equatable, CustomStringConvertible {
    /// The database applied migrations this build does not have (a newer build's).
    case unknownVersions([Int])
    /// A migration's text differs from the one the database applied: released migrations are never edited.
    case changed(version: Int)
    /// A migration failed; nothing of it was kept.
    case failed(version: Int, message: String)

    public var description: String {
        switch self {
        case .unknownVersions(let v): "the database has PostgreSQL migrations this build does not know (\(v.map(String.init).joined(separator: ", "))): a newer build made it"
        case .changed(let v): "PostgreSQL migration \(v) differs from the one the database applied: a released migration was edited"
        case .failed(let v, let message): "PostgreSQL migration \(v) failed: \(message)"
        }
    }
}
