import Foundation
import GRDB
import SoundtrackContext
import SoundtrackTestSupport
import Testing

@testable import SoundtrackStore

/// Learned place centres are stored at 0.001° (issue 42, item 3); a database that stored them at
/// full precision has them coarsened in place by migration v14.
@Suite struct PlacePrecisionTests {
    @Test func migrationCoarsensStoredCentres() throws {
        let path = Scratch.directory("places").appendingPathComponent("p.sqlite").path
        let store = try Store(path: path, durable: false)
        try store.addUser(NewUser(id: "u-1"), at: Date(timeIntervalSince1970: 0))
        // A centre as an earlier version stored it, and the migration not yet applied.
        try store.database.write { db in
            try db.execute(sql: "INSERT INTO places (user_id, id, lat, lon, count) VALUES ('u-1', 'pl-1', 52.5186226333, 13.3932189667, 7)")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v14'")
        }
        let reopened = try Store(path: path, durable: false)
        let row = try #require(try reopened.database.read { try Row.fetchOne($0, sql: "SELECT lat, lon, count FROM places") })
        #expect(row[0] as Double == 52.519 && row[1] as Double == 13.393 && row[2] as Int == 7)
        #expect(try reopened.database.read { try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations") }.contains("v14"))
    }
}
