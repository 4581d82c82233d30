import Foundation
import SoundtrackTestSupport
import Testing

@Suite("config check and the provider imports", .serialized)
struct ProviderCLITests {
    @Test("config check prints the example with secrets redacted; a bad file exits 2 naming the key path")
    func configCheck() async throws {
        let ok = try await CLI.run(["config", "check", "soundtrack.example.json"])
        #expect(ok.status == 0)
        #expect(ok.stdout.contains(#""order":["openweather","open-meteo"]"#))
        #expect(ok.stdout.contains(#""client_secret":"#))
        let dir = Scratch.directory("st-config")
        let bad = dir.appendingPathComponent("bad.json")
        try Data(#"{"server":{"port":"eighty"}}"#.utf8).write(to: bad)
        let r = try await CLI.run(["config", "check", bad.path])
        #expect(r.status == 2)
        #expect(r.stderr.contains("server.port: expected an integer in 0...65535, got a string"))
        try Data(#"{"providers":{"spotify":{"client_secret":"do-not-echo"}}}"#.utf8).write(to: bad)
        let s = try await CLI.run(["config", "check", bad.path])
        #expect(s.status == 2 && s.stderr.contains("SOUNDTRACK_SPOTIFY_CLIENT_SECRET") && !s.stderr.contains("do-not-echo"))
        #expect(try await CLI.run(["config", "check", dir.appendingPathComponent("missing.json").path]).status == 2)
        // Every command reading the file stops on it before touching the database.
        #expect(try await CLI.run(["users", "list", "--config", bad.path, "--db", dir.appendingPathComponent("x.sqlite").path]).status == 2)
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("x.sqlite").path))
    }

    @Test("import ics stores the calendar and reports the unreadable event; spotify-library without a token is a usage error")
    func importICS() async throws {
        let (_, db) = try await CLI.smallDatabase()
        let ics = CLI.root.appendingPathComponent("Tests/SoundtrackProvidersTests/Fixtures/calendar.ics").path
        let r = try await CLI.run(["import", "ics", ics, "--user", "u-1", "--db", db, "--from", "2026-03-01T00:00:00+01:00", "--days", "45", "--time-zone", "Europe/Berlin"])
        #expect(r.status == 2)
        #expect(r.stdout.contains("imported 11 occurrences of 3 events for u-1"))
        #expect(r.stderr.contains("line 34: VEVENT.DTSTART: expected a date-time"))
        #expect(try await CLI.run(["import", "ics", ics, "--user", "nobody", "--db", db]).status == 2)
        let s = try await CLI.run(["import", "spotify-library", "--user", "u-1", "--db", db])
        #expect(s.status == 2 && s.stderr.contains("SOUNDTRACK_SPOTIFY_REFRESH_TOKEN"))
    }

    @Test("the configuration file sets the database path and serve's address and port")
    func configuredDatabaseAndServe() async throws {
        let (dir, db) = try await CLI.smallDatabase()
        let cfg = dir.appendingPathComponent("soundtrack.json")
        try Data(#"{"database":{"path":"\#(db)"},"server":{"host":"127.0.0.1","port":0,"rate":5}}"#.utf8).write(to: cfg)
        let list = try await CLI.run(["users", "list", "--config", cfg.path])
        #expect(list.status == 0 && list.stdout.contains("u-1"))
        let serve = try CLI.start(["serve", "--config", cfg.path, "--log-level", "notice"])
        defer { if serve.child.isRunning { serve.child.terminate() } }
        var seen = ""
        let deadline = Date().addingTimeInterval(60)
        while !seen.contains("listening on"), Date() < deadline {
            let chunk = serve.child.standardError!.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        #expect(seen.contains("listening on http://127.0.0.1:"))
        #expect(seen.contains("database \(db)"))
        #expect(!seen.contains("127.0.0.1:8080"))
        serve.child.terminate()
        await offPool { [serve] in serve.child.waitUntilExit() }
        #expect(serve.child.terminationStatus == 0)
    }
}
