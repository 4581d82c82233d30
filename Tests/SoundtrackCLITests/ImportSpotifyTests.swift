import Foundation
import GRDB
import SoundtrackApp
import SoundtrackContext
import SoundtrackTestSupport
import Testing

@testable import SoundtrackStore

@Suite("Import Spotify")
struct ImportSpotifyTests {
    static let dir = CLI.root.appendingPathComponent("datasets/spotify")
    static func file(_ name: String) -> String { dir.appendingPathComponent(name).path }

    static func rows(_ db: String, _ sql: String) throws -> [Row] {
        try DatabaseQueue(path: db).read { try Row.fetchAll($0, sql: sql) }
    }

    @Test("Both formats: skips, completes, podcasts and neutral plays; missing tracks join the catalog")
    func bothFormats() async throws {
        let (_, db) = try await CLI.smallDatabase(user: "ana")
        let tracksBefore = try Store(path: db).trackCount()
        let r = try await CLI.run([
            "import", "spotify", "--db", db, "--user", "ana",
            Self.file("StreamingHistory0.json"), Self.file("Streaming_History_Audio_2024.json")
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("2 files, 9 plays: 8 applied, 0 duplicates skipped, 0 rejected; 1 neutral plays"), "\(r.stderr)")
        #expect(r.stderr.contains("1 podcast rows skipped"), "\(r.stderr)")
        let signals = try Self.rows(db, "SELECT track_id, signal, played_ms FROM feedback ORDER BY at")
        let got = signals.map { "\($0["track_id"] as String) \($0["signal"] as String) \($0["played_ms"] as Int)" }
        let basic = { (title: String, artist: String) in SpotifyHistory.stableTrackId(title: title, artist: artist) }
        #expect(
            got == [
                "\(basic("thank u, next", "Ariana Grande")) complete 207320",
                "\(basic("You Say", "Lauren Daigle")) skip 12000",  // < 30 s
                "\(basic("In My Feelings", "Drake")) complete 217925",
                "\(basic("A Song Not In Any Catalog", "Unknown Band")) complete 185000",
                "spotify:track:3e9HZxeyfWwjeyPAMmWSSQ complete 207320",  // trackdone
                "spotify:track:6Up545NUflOiXo8cEraH49 skip 45000",  // fwdbtn
                "spotify:track:2G7V7zsVDxg1yRsu7Ew9RJ skip 150000",  // skipped: true
                "spotify:track:0000000000000000000001 complete 201000"  // not in the catalog before
            ])  // the podcast row and the `logout` play (neither skipped nor played to the end) are not events
        let added = try Self.rows(db, "SELECT id, title, artist, tempo FROM songs WHERE id = 'spotify:track:0000000000000000000001'")
        #expect(added.count == 1)
        #expect((added.first?["title"] as String?) == "Brand New Song")
        #expect((added.first?["artist"] as String?) == "Nobody Yet")
        #expect((added.first?["tempo"] as Double?) == nil)
        #expect(try Store(path: db).trackCount() == tracksBefore + 5)  // 4 from the account data, 1 URI
        // The platform reaches the context as a tag (the snapshot is kept only when the user allows; the
        // bins show it through their observed features).
        let bins = try CrashTests.state(db, user: "ana").bins
        #expect(!bins.isEmpty)
    }

    @Test("Importing the same export twice changes nothing")
    func idempotent() async throws {
        let (_, db) = try await CLI.smallDatabase(user: "ana")
        let files = [Self.file("StreamingHistory0.json"), Self.file("Streaming_History_Audio_2024.json")]
        #expect(try await CLI.run(["import", "spotify", "--db", db, "--user", "ana"] + files).status == 0)
        let once = try CrashTests.dump(db)
        let again = try await CLI.run(["import", "spotify", "--db", db, "--user", "ana"] + files)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("0 applied, 8 duplicates skipped"), "\(again.stderr)")
        #expect(again.stderr.contains("0 tracks added"), "\(again.stderr)")
        #expect(try CrashTests.dump(db) == once)
    }

    @Test("Missing and malformed fields are reported with file, record index and field; exit 2")
    func missingFields() async throws {
        let (dir, db) = try await CLI.smallDatabase(user: "ana")
        let errors = dir.appendingPathComponent("errors.jsonl")
        let r = try await CLI.run(["import", "spotify", "--db", db, "--user", "ana", Self.file("endsong_broken.json"), "--errors", errors.path])
        #expect(r.status == 2)
        let report = Logs.jsonLines(try String(contentsOf: errors, encoding: .utf8))
        #expect(report.map { $0["record"] } == [.number(1), .number(2), .number(3)])
        #expect(report.map { $0["field"] } == [.string("ms_played"), .string("ts"), .string("master_metadata_track_name")])
        #expect(report.allSatisfy { $0["file"] == .string(Self.file("endsong_broken.json")) })
        #expect(r.stderr.contains("1 applied"), "\(r.stderr)")  // the good record still counts
        let plain = try await CLI.run(["import", "spotify", "--db", db, "--user", "ana", Self.file("endsong_broken.json")])
        #expect(plain.stderr.contains("endsong_broken.json: record 1: ms_played: expected a number of milliseconds, got nothing (missing field)"), "\(plain.stderr)")
    }

    @Test("An unknown user is an error unless --create-user")
    func unknownUser() async throws {
        let (_, db) = try await CLI.smallDatabase(user: "ana")
        let r = try await CLI.run(["import", "spotify", "--db", db, "--user", "bo", Self.file("StreamingHistory0.json")])
        #expect(r.status == 2)
        #expect(r.stderr.contains("user: expected a known user"), "\(r.stderr)")
        let c = try await CLI.run(["import", "spotify", "--db", db, "--user", "bo", "--create-user", Self.file("StreamingHistory0.json")])
        #expect(c.status == 0, "\(c.stderr)")
        #expect(try Store(path: db).feedbackCount(user: "bo") == 4)
    }
}
