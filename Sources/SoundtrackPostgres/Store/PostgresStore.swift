import Foundation
import Logging
import PostgresNIO
import SoundtrackContext
import SoundtrackEngine
import SoundtrackStore

/// Soundtrack's store on PostgreSQL 15: a person's core path (``PersonStore``) on the schema of
/// ``PostgresSchema``, with the SQLite store's semantics and the same bytes in the same columns
/// (``StoredForm``).
///
/// ```swift
/// let store = try await PostgresStore.open(PostgresEndpoint(url: url), emailKey: key, logger: logger)
/// defer { store.close() }
/// try store.addUser(NewUser(id: "u-1"), at: Date())
/// let state = try store.loadCachedState(user: "u-1", defaults: defaults)
/// ```
///
/// Each method is one transaction on a connection of a small pool, run on the calling thread,
/// which waits for the server (postgres-nio's futures, never an event loop's thread or Swift's
/// cooperative pool). What keeps a person consistent when several processes write them at once:
/// every transaction that writes a person first takes that person's advisory transaction lock
/// (``personLockSpace``, `hashtext(user_id)`), in user order when it writes several, and reads
/// only after it holds it, in READ COMMITTED, so each statement sees what the previous holder
/// committed. Two instances judging events of one person therefore take turns: the second loads
/// the state and the event ids the first committed, and finds a retried id a duplicate instead of
/// inserting it twice. A lock rather than a version checked at commit, because the rules' work on
/// a person is cheap next to a round trip and a refused commit would have to be judged again
/// anyway; and the lock lives on the person's node in a cluster sharded by user. Event ids of two
/// people cannot collide on that lock: the `event_ids` primary key makes the second insert wait
/// for the first transaction and then fail, and ``updatePerson(_:defaults:_:)`` starts over, when
/// the rules find the id taken by the other person.
public final class PostgresStore: PersonStore {
    /// The first key of every person's advisory lock (`pg_advisory_xact_lock(int, int)`; the
    /// second is `hashtext(user_id)`): issue 44's number, apart from the migrator's one-key lock.
    public static let personLockSpace: Int32 = 44

    /// The database.
    public let endpoint: PostgresEndpoint
    let pool: PostgresConnectionPool
    let emailKey: EmailKey?
    let logger: Logger

    private init(endpoint: PostgresEndpoint, configuration: PostgresConnection.Configuration, connections: Int, emailKey: EmailKey?, logger: Logger) {
        self.endpoint = endpoint
        self.emailKey = emailKey
        self.logger = logger
        pool = PostgresConnectionPool(configuration: configuration, size: connections, logger: logger)
    }

    /// Opens a store on `endpoint`, bringing its schema up to date first (``PostgresMigrator``).
    /// - Parameters:
    ///   - emailKey: the key of the people's email hashes; `nil`: adding a person with an email
    ///     throws ``PostgresStoreError/noEmailKey``.
    ///   - connections: the most connections open at once (callers beyond wait for one).
    /// - Throws: ``PostgresMigrationError``, the connection's errors.
    public static func open(_ endpoint: PostgresEndpoint, emailKey: EmailKey? = nil, connections: Int = 4, logger: Logger) async throws -> PostgresStore {
        try await endpoint.withConnection(logger: logger) { c in _ = try await PostgresMigrator().migrate(c, logger: logger) }
        return PostgresStore(endpoint: endpoint, configuration: try endpoint.configuration(), connections: connections, emailKey: emailKey, logger: logger)
    }

    /// Closes the idle connections; the store is not used after.
    public func close() { pool.close() }

    /// Runs `body` in one transaction holding the advisory locks of `users` (sorted, so two
    /// transactions of the same people never wait for each other in a circle), committed when it
    /// returns and rolled back when it throws.
    /// - Parameter startOver: whether a race on an event id with another person's transaction, or a
    ///   deadlock the server broke, runs the whole transaction again (at most 4 times): for a
    ///   `body` that judges what it writes from what it reads.
    /// - Throws: what `body` throws; the server's errors as ``PostgresStoreError``.
    func transaction<T>(locking users: [String], readOnly: Bool = false, startOver: Bool = false, _ body: (PostgresTransaction) throws -> T) throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try pool.withConnection { c in
                    let tx = PostgresTransaction(connection: c, logger: logger)
                    // A read alone sees one snapshot of the store, as SQLite's read transaction does;
                    // a write reads after its locks, each statement seeing the latest commits.
                    try tx.execute(readOnly ? "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY" : "BEGIN")
                    do {
                        for user in Set(users).sorted() {
                            try tx.query("SELECT pg_advisory_xact_lock(\(Self.personLockSpace), hashtext(\(user)))")
                        }
                        let result = try body(tx)
                        try tx.execute("COMMIT")
                        return result
                    } catch {
                        if !c.isClosed { _ = try? tx.execute("ROLLBACK") }
                        throw error
                    }
                }
            } catch let error as PSQLError {
                if startOver, attempt < 4, Self.isRace(error) { continue }
                throw PostgresStoreError(error)
            }
        }
    }

    /// Whether a transaction failed for a race another transaction won: an event id inserted by
    /// another person's transaction meanwhile, a deadlock or a serialization failure.
    static func isRace(_ error: PSQLError) -> Bool {
        guard let info = error.serverInfo, let state = info[.sqlState] else { return false }
        if state == "40P01" || state == "40001" { return true }
        return state == "23505" && info[.constraintName] == "event_ids_pkey"
    }
}

/// A failure of the PostgreSQL store that is not bad input.
public enum PostgresStoreError: Error, Equatable, CustomStringConvertible {
    /// The server refused or failed a statement: its message, SQLSTATE and detail
    /// (``PostgresErrorText``; the statements' text holds no secret).
    case server(String, sqlState: String?)
    /// A person with an email was added to a store opened without an email key.
    case noEmailKey

    init(_ error: PSQLError) {
        self = .server(PostgresErrorText.describe(error), sqlState: error.serverInfo?[.sqlState])
    }

    /// The SQLSTATE of a server error (`23505`: a unique key), `nil` otherwise.
    public var sqlState: String? {
        if case let .server(_, state) = self { return state }
        return nil
    }

    public var description: String {
        switch self {
        case let .server(message, _): "PostgreSQL: \(message)"
        case .noEmailKey: "this PostgreSQL store was opened without an email key: an address cannot be hashed"
        }
    }
}
