import Foundation
import GRDB
import SoundtrackTestSupport
import Testing

@testable import SoundtrackApp
@testable import SoundtrackStore

@Suite struct LogCheckpointsTests {
    /// A file store with a table of 4 KB rows: each transaction below writes `rows` pages or more.
    static func store() throws -> (Store, String) {
        let dir = Scratch.directory("ckpt")
        let path = dir.appendingPathComponent("db.sqlite").path
        let store = try Store(path: path)
        try store.configureWriteConnection(cacheKiB: 4096, autoCheckpoint: false)
        try store.database.write { db in try db.execute(sql: "CREATE TABLE t (x BLOB NOT NULL)") }
        // The log starts empty: what the tests measure is the commits' log, not the migrations'.
        try store.checkpoint()
        return (store, path)
    }

    static func commit(_ store: Store, rows: Int) throws {
        try store.database.write { db in
            for _ in 0..<rows { try db.execute(sql: "INSERT INTO t (x) VALUES (randomblob(4000))") }
        }
    }

    static func logBytes(_ path: String) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
    }

    @Test("Past the limit, a commit waits for a whole checkpoint, so the next transaction writes the log from its start")
    func theLogStaysBounded() throws {
        let (store, path) = try Self.store()
        let checkpoints = LogCheckpoints(checkpointer: try WALCheckpointer(store: store), limitPages: 1)
        let rows = 100, commits = 12
        for _ in 0..<commits {
            try Self.commit(store, rows: rows)
            checkpoints.afterCommit()
        }
        checkpoints.stop()
        // Without the wait every transaction would begin while the checkpoint of the one before
        // still runs, and the log would hold all twelve (about 4.8 MB).
        let perCommit = rows * 4096
        #expect(try Self.logBytes(path) < 3 * perCommit)
        #expect(try store.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") } == rows * commits)
        // A last checkpoint copies the whole log, and the database is sound.
        let r = try WALCheckpointer(store: store).checkpoint(.passive)
        #expect(r.copiedFrames == r.logFrames)
        #expect(try store.database.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") } == "ok")
    }

    @Test("Below the limit, commits do not wait for checkpoints, and nothing committed is lost")
    func belowTheLimitNothingIsLost() throws {
        let (store, _) = try Self.store()
        let checkpoints = LogCheckpoints(checkpointer: try WALCheckpointer(store: store), limitPages: 1 << 30)
        for _ in 0..<8 {
            try Self.commit(store, rows: 50)
            checkpoints.afterCommit()
        }
        checkpoints.stop()
        #expect(try store.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") } == 400)
        let r = try WALCheckpointer(store: store).checkpoint(.passive)
        #expect(r.copiedFrames == r.logFrames)
    }
}
