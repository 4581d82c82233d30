import Foundation
import GRDB
import SoundtrackTestSupport
import Testing

@testable import SoundtrackStore

/// The catalog's index kept in the database (issue 40): written with the catalog, dropped by any
/// other change of the songs, and ranking exactly as the index built from the songs.
@Suite struct StoredCatalogIndexTests {
    @Test func picksWithTheStoredIndexAreThoseOfTheBuiltOne() async throws {
        let users = CommunityStoreTests.users
        let (dir, db) = try await CLI.smallDatabase(user: users[0])
        #expect(try Store(path: db).hasStoredCatalogIndex(), "catalog import stores the index")
        let log = dir.appendingPathComponent("log.jsonl")
        try Logs.write(try CrashTests.multiUserLog(400, users: users), log)
        var r = try await CLI.run(["replay", log.path, "--create-users", "--no-fit", "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Store(path: db).hasStoredCatalogIndex(), "feedback leaves the catalog's index alone")

        func picks() async throws -> [String] {
            var out: [String] = []
            for user in users {
                let snapshot = #"{"user": "\#(user)", "at": "2026-04-02T08:30:00+02:00", "motion": {"activity": "walking"}, "tags": {"mood": "happy"}}"#
                let r = try await CLI.run(["pick", "--read-only", "--top", "20", "--db", db, "-"], stdin: snapshot)
                #expect(r.status == 0, "\(r.stderr)")
                out.append(r.stdout)
            }
            return out
        }
        let stored = try await picks()
        try await DatabaseQueue(path: db).write { try $0.execute(sql: "DELETE FROM catalog_index") }
        #expect(try !Store(path: db).hasStoredCatalogIndex())
        let built = try await picks()
        #expect(stored == built)
        #expect(stored.allSatisfy { $0.contains("\"ranked\"") })

        // Importing again stores it; a change of the songs the store did not make drops it.
        r = try await CLI.run(["catalog", "import", CLI.root.appendingPathComponent("datasets/catalog-small.csv").path, "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Store(path: db).hasStoredCatalogIndex())
        #expect(try await picks() == stored)
        try await DatabaseQueue(path: db).write { try $0.execute(sql: "UPDATE songs SET popularity = 99 WHERE rowid = 3") }
        #expect(try !Store(path: db).hasStoredCatalogIndex())
    }

    @Test func aDatabaseOfTheSchemaBeforeGetsItsIndexOnceMigrated() async throws {
        let (_, db) = try await CLI.smallDatabase()
        // As a database of v16 was: no table, no triggers, no migration record of v17.
        try await DatabaseQueue(path: db).writeWithoutTransaction { d in
            try d.execute(
                sql: """
                    DROP TRIGGER songs_insert_drops_index; DROP TRIGGER songs_update_drops_index; DROP TRIGGER songs_delete_drops_index;
                    DROP TABLE catalog_index; DELETE FROM grdb_migrations WHERE identifier = 'v17';
                    """)
        }
        #expect(try Store(path: db).hasStoredCatalogIndex())
    }
}
