import Foundation
import GRDB
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

/// Soundtrack's SQLite database: the one place that writes SQL.
///
/// A file database runs in WAL mode with foreign keys on; every method owns its transaction (a
/// caller never sees a connection). Open one with ``init(path:durable:)`` or ``inMemory()`` for tests.
public final class Store: Sendable {
    /// The database connections (a `DatabasePool` for files, a `DatabaseQueue` in memory): only
    /// the store's own methods use them, each in a transaction of its own.
    let database: any DatabaseWriter
    /// The file path, or `nil` for an in-memory database.
    public let path: String?
    /// The catalog's similarity index for ``updateUser(_:defaults:_:)``, kept until the catalog changes.
    let catalogIndex = IndexCache()
    /// The key of the users' email hashes.
    let emailKeys: EmailKeyring
    /// Counts the statements of every connection the store opens (`nil`: none counted).
    let statementCounter: StatementCounter?

    /// Opens (creating if needed) and migrates the database at `path`.
    /// - Parameters:
    ///   - durable: `synchronous=FULL` (every commit reaches the disk) when true, `NORMAL` otherwise.
    ///   - emailKey: the key of the users' email hashes; by default the key file beside the database
    ///     (``EmailKey/defaultFile(forDatabase:)``), created when an address is first hashed.
    ///   - statementCounter: counts what every statement on the store's connections costs (tests
    ///     of what a start-up reads); `nil` by default.
    public init(path: String, durable: Bool = true, emailKey: EmailKeySource? = nil, statementCounter: StatementCounter? = nil) throws {
        emailKeys = EmailKeyring(emailKey ?? .file(EmailKey.defaultFile(forDatabase: path)))
        self.statementCounter = statementCounter
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.busyMode = .callback(Self.pollEvery(microseconds: 200, upTo: 10))
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(durable ? "FULL" : "NORMAL")")
            // Deleted rows are overwritten with zeros, whatever SQLite was compiled with: a forget
            // leaves nothing in the database file's free pages.
            try db.execute(sql: "PRAGMA secure_delete = ON")
            // Reads through a memory map, as large as SQLite allows (its build caps it, at 2 GB on
            // Linux): what a one-shot process reads first, the catalog's stored index, is
            // megabytes of overflow pages, a `pread` each otherwise (issue 40).
            try db.execute(sql: "PRAGMA mmap_size = 1099511627776")
            statementCounter?.install(on: db)
        }
        let pool = try Self.openPool(path: path, configuration: config)
        try Self.migrate(pool)
        database = pool
        self.path = path
    }

    /// Opens the connection pool, also when other processes create the same new file at this
    /// moment: switching a new file to WAL (`PRAGMA journal_mode = WAL`, run by GRDB as the pool
    /// opens) needs the file to itself and fails with `SQLITE_BUSY` without calling the busy
    /// handler, so that step is tried again, every 2 ms for up to 10 s.
    static func openPool(path: String, configuration: Configuration) throws -> DatabasePool {
        var tries = 0
        while true {
            do {
                return try DatabasePool(path: path, configuration: configuration)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && tries < 5_000 {
                tries += 1
                usleep(2_000)
            }
        }
    }

    /// Brings the file's schema up to date, also when other processes open it at the same time.
    /// GRDB reads which migrations a file has, then runs each missing one in a transaction of its
    /// own: a second process that read the list before the first committed one runs that one
    /// again, which fails (`UNIQUE constraint failed: grdb_migrations.identifier`, `duplicate
    /// column name`) and rolls back. So a failure after which the list has grown (another process
    /// migrated meanwhile) is tried again from the new list; any other failure is thrown.
    static func migrate(_ pool: DatabasePool) throws {
        let migrator = Schema.migrator
        var applied = try pool.read { try migrator.appliedIdentifiers($0) }
        while true {
            do {
                return try migrator.migrate(pool)
            } catch {
                let now = try pool.read { try migrator.appliedIdentifiers($0) }
                guard now != applied else { throw error }
                applied = now
            }
        }
    }

    /// A busy handler that tries again every `microseconds` until `seconds` have passed. SQLite's own
    /// (`sqlite3_busy_timeout`) sleeps 1, 2, 5, 10, 15, 20, 25, … up to 100 ms between tries, so a
    /// writer that met a lock held for 30 ms (a checkpoint letting the WAL start over) went on after
    /// 53 ms; the HTTP service's feedback waited that long behind it.
    static func pollEvery(microseconds: UInt32, upTo seconds: Double) -> Database.BusyCallback {
        let tries = max(1, Int(seconds * 1e6 / Double(max(1, microseconds))))
        return { n in
            guard n < tries else { return false }
            usleep(microseconds)
            return true
        }
    }

    private init(queue: DatabaseQueue, emailKey: EmailKey) throws {
        emailKeys = EmailKeyring(.key(emailKey))
        statementCounter = nil
        try Schema.migrator.migrate(queue)
        database = queue
        path = nil
    }

    /// A fresh in-memory database, for tests and evaluation.
    /// - Parameter emailKey: the key of the users' email hashes (default: a new random key).
    public static func inMemory(emailKey: EmailKey = .random()) throws -> Store {
        var config = Configuration()
        config.foreignKeysEnabled = true
        return try Store(queue: DatabaseQueue(configuration: config), emailKey: emailKey)
    }

    // MARK: - Users

    /// A user as listed by `users list` and `users show`.
    public struct UserSummary: Sendable, Equatable {
        public var id: String
        /// The email's hash in hex (`nil` without an email), made as ``emailHashScheme`` says.
        public var emailHash: String?
        /// How ``emailHash`` was made (`nil` without an email).
        public var emailHashScheme: EmailHashScheme?
        public var age: Int?
        public var region: String?
        public var createdAt: Date
        public var bins: Int
        public var feedback: Int
        public var picks: Int

        /// Creates a summary (a store reading its rows).
        public init(
            id: String, emailHash: String?, emailHashScheme: EmailHashScheme?, age: Int?, region: String?, createdAt: Date, bins: Int,
            feedback: Int, picks: Int
        ) {
            self.id = id
            self.emailHash = emailHash
            self.emailHashScheme = emailHashScheme
            self.age = age
            self.region = region
            self.createdAt = createdAt
            self.bins = bins
            self.feedback = feedback
            self.picks = picks
        }
    }

    /// Adds a user. The email is stored only as a keyed hash of its normalised form
    /// (``EmailHashScheme/hmacSHA256``).
    /// - Throws: ``RuleError/userExists(_:)`` for an id in use; ``EmailKeyError`` when the email
    ///   key cannot be had.
    public func addUser(_ user: NewUser, at: Date) throws {
        try database.write { db in
            if try Self.userExists(db, user.id) { throw RuleError.userExists(user.id) }
            let hash = try user.email.map { try emailKey(db).hash($0) }
            try db.execute(
                sql: "INSERT INTO users (id, email_hash, email_hash_scheme, age, region, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [
                    user.id, hash, hash == nil ? nil : EmailHashScheme.hmacSHA256.rawValue, user.age, user.region,
                    Timestamp(date: at, offsetSeconds: 0).rfc3339
                ])
            try db.execute(sql: "INSERT INTO user_settings (user_id) VALUES (?)", arguments: [user.id])
        }
    }

    /// Whether a user exists.
    public func userExists(_ id: String) throws -> Bool {
        try database.read { db in try Self.userExists(db, id) }
    }

    static func userExists(_ db: Database, _ id: String) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT 1 FROM users WHERE id = ?", arguments: [id]) ?? false
    }

    /// All users, by id.
    public func users() throws -> [UserSummary] {
        try database.read { db in try Self.summaries(db, whereId: nil) }
    }

    /// One user, or `nil`.
    public func user(_ id: String) throws -> UserSummary? {
        try database.read { db in try Self.summaries(db, whereId: id).first }
    }

    private static func summaries(_ db: Database, whereId: String?) throws -> [UserSummary] {
        let sql = """
            SELECT u.id, u.email_hash, u.email_hash_scheme, u.age, u.region, u.created_at,
                   (SELECT count(*) FROM bins b WHERE b.user_id = u.id) AS bins,
                   (SELECT count(*) FROM feedback f WHERE f.user_id = u.id) AS feedback,
                   (SELECT count(*) FROM picks p WHERE p.user_id = u.id) AS picks
            FROM users u \(whereId == nil ? "" : "WHERE u.id = ?") ORDER BY u.id
            """
        let args: StatementArguments = whereId.map { [$0] } ?? []
        return try Row.fetchAll(db, sql: sql, arguments: args).map { r in
            UserSummary(
                id: r["id"], emailHash: r["email_hash"],
                emailHashScheme: (r["email_hash"] as String?).map { _ in EmailHashScheme.of(r["email_hash_scheme"]) },
                age: r["age"], region: r["region"],
                createdAt: Timestamp(rfc3339: r["created_at"])?.date ?? Date(timeIntervalSince1970: 0),
                bins: r["bins"], feedback: r["feedback"], picks: r["picks"])
        }
    }

    /// Deletes every row of a user (bins, memberships, weights, places, session, picks, feedback,
    /// quiz rounds and best score: every table keyed by the user cascades from `users`).
    /// - Returns: false when there was no such user.
    @discardableResult
    public func forget(user id: String) throws -> Bool {
        try database.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM users WHERE id = ?)", arguments: [id]) == true else { return false }
            try Self.dropCommunity(db, forgetting: id, index: try catalogIndex.get { try Self.loadCatalogIndex(db) })
            try db.execute(sql: "DELETE FROM users WHERE id = ?", arguments: [id])
            return true
        }
    }

    /// Row counts of every table that holds a user's data, for checks that `forget` removed all.
    func rowCounts(user id: String) throws -> [String: Int] {
        try database.read { db in
            var out: [String: Int] = [:]
            for t in [
                "users:id", "user_settings:user_id", "bins:user_id", "weights:user_id", "places:user_id",
                "sessions:user_id", "picks:user_id", "feedback:user_id", "pending_events:user_id",
                "calendar_events:user_id", "library_tracks:user_id", "group_members:user_id", "quiz_players:user_id", "quizzes:user_id"
            ] {
                let parts = t.split(separator: ":")
                out[String(parts[0])] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(parts[0]) WHERE \(parts[1]) = ?", arguments: [id]) ?? 0
            }
            out["bin_songs"] = try Int.fetchOne(db, sql: "SELECT count(*) FROM bin_songs WHERE bin_id IN (SELECT id FROM bins WHERE user_id = ?)", arguments: [id]) ?? 0
            return out
        }
    }

    /// Runs SQLite's integrity and foreign-key checks and checks every bin's song list; returns the
    /// problems found (empty when sound).
    public func check() throws -> [String] {
        try database.read { db in
            var problems = try String.fetchAll(db, sql: "PRAGMA integrity_check").filter { $0 != "ok" }
            let fk = try Row.fetchAll(db, sql: "PRAGMA foreign_key_check")
            problems += fk.map { "foreign key: \($0)" }
            problems += try Self.checkSongLists(db)
            return problems
        }
    }

    /// What a foreign key and CHECKs guarded before memberships moved into `bins.songs`: each list
    /// reads, holds each track once, and only tracks of the catalog.
    static func checkSongLists(_ db: Database) throws -> [String] {
        var catalog = Set<String>()
        let tracks = try RawStatement(db, "SELECT id FROM songs")
        while try tracks.step() { catalog.insert(tracks.text(0)) }
        var problems: [String] = []
        let bins = try RawStatement(db, "SELECT id, songs FROM bins ORDER BY id")
        while try bins.step() {
            let row = bins.int64(0)
            var seen = Set<String>()
            var repeated: [String] = [], unknown: [String] = []
            let ok = SongListCoding.decode(bins.bytes(1)) { raw, _, _, _ in
                let id = String(decoding: raw, as: UTF8.self)
                if !seen.insert(id).inserted { repeated.append(id) }
                if !catalog.contains(id) { unknown.append(id) }
            }
            if !ok { problems.append(SongListCoding.unreadable(bin: row).description) }
            problems += repeated.map { "bins.songs of row \(row): track '\($0)' more than once" }
            problems += unknown.map { "bins.songs of row \(row): track '\($0)' is not in the catalog" }
        }
        return problems
    }
}
