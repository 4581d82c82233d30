import GRDB

/// A second connection to a file database that only runs WAL checkpoints, so a long-running
/// writer can leave them to another thread: by default SQLite checkpoints inside the commit that
/// grows the WAL past 1,000 pages, and that commit then also waits for the database file to
/// reach the disk.
///
/// ```swift
/// try store.configureWriteConnection(cacheKiB: 65536, autoCheckpoint: false)
/// let checkpointer = try WALCheckpointer(store: store)
/// let (log, copied) = try checkpointer.checkpoint(.passive)   // on a thread of its own
/// ```
public final class WALCheckpointer: Sendable {
    /// How a checkpoint treats the writer.
    public enum Mode: Sendable {
        /// Copies what it can without waiting for the writer or for readers.
        case passive
        /// Waits for the writer to be between transactions (new ones wait), copies everything,
        /// waits for readers to leave the log, so the next transaction writes the log from its start.
        case restart
        /// As ``restart``, then truncates the log file to nothing: no frame of what was deleted
        /// stays in any file of the database (after a forget).
        case truncate
    }

    private let queue: DatabaseQueue

    /// Opens a connection to the store's file, with the same `synchronous` setting as its writer.
    /// The store must be a file (``Store/path`` not `nil`: in-memory stores have no WAL).
    /// - Throws: database errors.
    public init(store: Store) throws {
        guard let path = store.path else { preconditionFailure("WALCheckpointer needs a database file") }
        let synchronous = try store.database.writeWithoutTransaction { db in
            try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? 2
        }
        var config = Configuration()
        // Short (5 ms, tried every 0.1 ms): a restart checkpoint holds new writes back while it waits
        // for readers to leave the log, and a busy checkpoint is simply tried again on the next
        // round. With a timeout of 1 s (meant as a millisecond) each restart held the committer back
        // for 85–180 ms in SQLite's growing busy sleeps: the load test's feedback p99.
        config.busyMode = .callback(Store.pollEvery(microseconds: 100, upTo: 0.005))
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
        }
        queue = try DatabaseQueue(path: path, configuration: config)
    }

    /// Runs one checkpoint.
    /// - Returns: the frames in the log and the frames now copied into the database file.
    /// - Throws: database errors (`SQLITE_BUSY` when another checkpoint is running).
    @discardableResult
    public func checkpoint(_ mode: Mode) throws -> (logFrames: Int, copiedFrames: Int) {
        try queue.writeWithoutTransaction { db in
            let r: (walFrameCount: Int, checkpointedFrameCount: Int)
            switch mode {
            case .passive: r = try db.checkpoint(.passive)
            case .restart: r = try db.checkpoint(.restart)
            case .truncate: r = try db.checkpoint(.truncate)
            }
            return (r.walFrameCount, r.checkpointedFrameCount)
        }
    }
}

extension Store {
    /// Tunes the write connection for a long-running service: its page cache, in KiB, and
    /// whether its commits checkpoint the WAL themselves (SQLite's default) or leave it to a
    /// ``WALCheckpointer``.
    public func configureWriteConnection(cacheKiB: Int, autoCheckpoint: Bool) throws {
        try database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA cache_size = -\(max(2000, cacheKiB))")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(autoCheckpoint ? 1000 : 0)")
        }
    }
}

extension Store {
    /// Copies the write-ahead log into the database file and empties it, so that the file alone
    /// holds the whole database (for copying it).
    public func checkpoint() throws {
        try database.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
    }
}

extension Store {
    /// Runs `body` with the writer's commits not waiting for the disk (`synchronous=NORMAL`) and
    /// not copying the WAL back into the database file each time it has grown (one checkpoint
    /// after `body` instead), with a page cache of 64 MiB at least, then restores the store's settings. For writes that only derive
    /// again what is durable already, such as a catch-up of users' states from their pending
    /// events: a crash can roll back the last of those commits, never tear one, and the events
    /// they covered are then still pending.
    /// - Throws: what `body` throws; database errors, including of restoring the settings (a
    ///   store that could not get its durability back is not used on silently).
    public func withoutWaitingForDisk<R>(_ body: () throws -> R) throws -> R {
        let before = try database.writeWithoutTransaction { db in
            let s = (
                synchronous: try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? 2,
                autoCheckpoint: try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") ?? 1000,
                cache: try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2000
            )
            // cache_size is in pages when positive, in KiB when negative.
            let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
            let kib = s.cache < 0 ? -s.cache : s.cache * pageSize / 1024
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            if kib < 65536 { try db.execute(sql: "PRAGMA cache_size = -65536") }
            return s
        }
        let result = Result { try body() }
        try database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = \(before.synchronous)")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(before.autoCheckpoint)")
            try db.execute(sql: "PRAGMA cache_size = \(before.cache)")
            // The WAL grew by all of it: copied back and emptied now (when nobody reads, as at
            // open), else at least copied back.
            if before.autoCheckpoint > 0, (try? db.checkpoint(.truncate)) == nil { _ = try db.checkpoint(.passive) }
        }
        return try result.get()
    }
}
