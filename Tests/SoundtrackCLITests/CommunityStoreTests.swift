import Foundation
import GRDB
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackTestSupport
import Testing

@testable import SoundtrackStore

/// The community model kept in the database: what a process loads equals the model rebuilt from
/// the whole log; events written without the model are counted again; a forget rebuilds it; loading
/// reads no row of what grows with the log.
@Suite("The community model in the database")
struct CommunityStoreTests {
    static let users = ["c-1", "c-2", "c-3", "c-4"]

    static func same(_ a: Community, _ b: Community, rows: Range<Int>, _ comment: Comment? = nil) {
        #expect(a.header.stats == b.header.stats, comment)
        #expect(a.mostLiked(25) == b.mostLiked(25), comment)
        #expect(a.maxLikes == b.maxLikes && a.maxRaters == b.maxRaters && a.version == b.version, comment)
        for row in rows {
            #expect(a.neighbourScores(of: [row], liked: true) == b.neighbourScores(of: [row], liked: true), comment)
            #expect(a.neighbourScores(of: [row], liked: false) == b.neighbourScores(of: [row], liked: false), comment)
        }
    }

    @Test("After replay the stored model is what the log rebuilds; feedback stored without it is counted again; forget rebuilds")
    func storedModelIsTheLogs() async throws {
        let (dir, db) = try await CLI.smallDatabase(user: Self.users[0])
        let log = dir.appendingPathComponent("log.jsonl")
        try Logs.write(try CrashTests.multiUserLog(400, users: Self.users), log)
        let r = try await CLI.run(["replay", log.path, "--create-users", "--no-fit", "--db", db])
        #expect(r.status == 0, "\(r.stderr)")

        let store = try Store(path: db)
        let loaded = try store.loadCommunity(write: false)
        #expect(!loaded.rebuilt && loaded.tail == 0)
        #expect(loaded.seq == (try store.feedbackLogSize()))
        let rebuilt = try store.rebuildCommunity()
        Self.same(loaded.model, rebuilt, rows: 0..<500, "after replay")
        // Contexts: the attributes each event kept, counted the same way.
        let withContext = try await DatabaseQueue(path: db).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM feedback WHERE context IS NOT NULL") }
        #expect(withContext == 400)

        // More events by a command that writes the model (feedback), then rows written without it: a tail.
        let more = try CrashTests.multiUserLog(460, users: Self.users).suffix(60)
        let extra = dir.appendingPathComponent("more.jsonl")
        try Logs.write(Array(more.prefix(30)), extra)
        #expect(try await CLI.run(["feedback", extra.path, "--quiet", "--db", db]).status == 0)
        #expect(try Store(path: db).loadCommunity(write: false).tail == 0, "feedback writes what it counted")
        // A stored model behind its log, as a process killed before it wrote the model leaves it: the
        // model as it was before the next 30 events, put back after they were applied.
        let copy = dir.appendingPathComponent("before.sqlite").path
        try await DatabaseQueue(path: db).writeWithoutTransaction { try $0.execute(sql: "VACUUM INTO ?", arguments: [copy]) }
        try Logs.write(Array(more.suffix(30)), extra)
        #expect(try await CLI.run(["replay", extra.path, "--db", db]).status == 0)
        try await DatabaseQueue(path: db).writeWithoutTransaction { d in
            try d.execute(sql: "ATTACH DATABASE ? AS old", arguments: [copy])
            try d.inTransaction {
                for table in ["community", "community_co_liked", "community_co_rated", "community_contexts", "community_tops", "community_people"] {
                    try d.execute(sql: "DELETE FROM \(table); INSERT INTO \(table) SELECT * FROM old.\(table)")
                }
                return .commit
            }
            try d.execute(sql: "DETACH DATABASE old")
        }
        let behind = try Store(path: db)
        let withTail = try behind.loadCommunity(write: false)
        #expect(withTail.tail == 30 && !withTail.rebuilt)
        Self.same(withTail.model, try behind.rebuildCommunity(), rows: 0..<500, "with a tail of 30 events")

        // Forget: nothing counted from the person's events stays in the file: no header, no
        // attribute's most liked, no row of a track they reacted to (a track only they liked would
        // keep its co-occurrences and contexts through any rebuild, which writes only the rows
        // of tracks that still have events); the model is rebuilt from the feedback that remains.
        let theirs = try await DatabaseQueue(path: db).read { d in
            let index = try Store.loadCatalogIndex(d)
            return try String.fetchAll(d, sql: "SELECT DISTINCT track_id FROM feedback WHERE user_id = ?", arguments: [Self.users[1]])
                .compactMap { index.row(of: $0) }
        }
        #expect(theirs.count > 10)
        #expect(try Store(path: db).forgottenCount() == 0)
        #expect(try await CLI.run(["users", "forget", Self.users[1], "--db", db]).status == 0)
        #expect(try Store(path: db).forgottenCount() == 1, "a running service learns of the forget")
        let left = try await DatabaseQueue(path: db).read { d in
            let rows = theirs.map(String.init).joined(separator: ",")
            return try [
                "community", "community_tops", "community_co_liked WHERE row IN (\(rows))", "community_co_rated WHERE row IN (\(rows))",
                "community_contexts WHERE row IN (\(rows))"
            ].map { try Int.fetchOne(d, sql: "SELECT count(*) FROM \($0)") ?? -1 }
        }
        #expect(left == [0, 0, 0, 0, 0], "rows of the community model counting the forgotten person: \(left)")
        let after = try Store(path: db)
        let reloaded = try after.loadCommunity(write: true)
        #expect(reloaded.rebuilt)
        Self.same(reloaded.model, try after.rebuildCommunity(), rows: 0..<500, "after forget")
        let stored = try after.loadCommunity(write: false)
        #expect(stored.rebuilt == false, "written once")
        Self.same(stored.model, try after.rebuildCommunity(), rows: 0..<500, "the stored model after forget")
        #expect(stored.forgotten == 1)

        // What a running service counts again after the forget, a slice of rows at a time: the same
        // model, and the ids of the events after the row it names.
        let newest = try after.feedbackLogSize()
        let (recounted, ids) = try #require(try after.recountCommunity(idsAfter: newest - 25, slice: 37))
        let fromLog = try after.rebuildCommunity()
        #expect(recounted == fromLog && recounted.version == fromLog.version)
        let expectedIds = try await DatabaseQueue(path: db).read { d in
            try String.fetchAll(d, sql: "SELECT id FROM feedback WHERE rowid > ?", arguments: [newest - 25])
        }
        #expect(ids == Set(expectedIds) && !ids.isEmpty)
        var slices = 0
        let stopped = try after.recountCommunity(idsAfter: newest, slice: 37) {
            slices += 1
            return slices > 2
        }
        #expect(stopped == nil && slices == 3, "stopped between slices")
    }

    @Test("Loading the model reads one row, whatever the log's length; a pick then reads only the rows it ranks")
    func loadingReadsNoLog() async throws {
        var reads: [Int] = []
        for events in [120, 1_200] {
            let (dir, db) = try await CLI.smallDatabase(user: Self.users[0])
            let log = dir.appendingPathComponent("log.jsonl")
            try Logs.write(try CrashTests.multiUserLog(events, users: Self.users), log)
            #expect(try await CLI.run(["replay", log.path, "--create-users", "--no-fit", "--db", db]).status == 0)
            let store = try Store(path: db)
            let loaded = try store.loadCommunity(write: false)
            #expect(loaded.tail == 0 && !loaded.rebuilt)
            // Nothing of the rows that grow with the log has been read yet.
            #expect(loaded.model.changed.events == 0)
            reads.append(loaded.model.header.stats.count)
        }
        // The header holds a track's counts, not the log's events: bounded by the catalog (500 tracks).
        #expect(reads.allSatisfy { $0 <= 500 })
    }
}
