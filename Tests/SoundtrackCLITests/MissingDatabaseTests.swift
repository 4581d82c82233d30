import Foundation
import SoundtrackTestSupport
import Testing

/// A command that needs what a database holds refuses a database that does not exist (issue 45),
/// instead of making a new one and then saying "unknown user".
@Suite struct MissingDatabaseTests {
    @Test func aTypoInDbIsRefusedAndCreatesNothing() async throws {
        let dir = CLI.tempDir()
        let typo = dir.appendingPathComponent("sountrack.sqlite").path
        let snapshot = #"{"user": "u-1", "at": "2026-03-11T09:40:00+01:00"}"#
        for args in [
            ["pick", "--db", typo, "-"], ["bins", "--user", "u-1", "--db", typo], ["history", "u-1", "--db", typo],
            ["users", "show", "u-1", "--db", typo], ["settings", "show", "u-1", "--db", typo], ["feedback", "--db", typo, "-"]
        ] {
            let r = try await CLI.run(args, stdin: snapshot)
            #expect(r.status == 2, "\(args): \(r.stderr)")
            #expect(r.stderr.contains("db: expected an existing database"), "\(args): \(r.stderr)")
            #expect(r.stderr.contains("which does not exist"), "\(args): \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: typo), "\(args) made the file")
        }
        // Commands that make a database still do.
        #expect(try await CLI.run(["users", "add", "u-1", "--db", typo]).status == 0)
        let r = try await CLI.run(["pick", "--db", typo, "-"], stdin: snapshot)
        #expect(r.status == 0, "\(r.stderr)")
    }
}
