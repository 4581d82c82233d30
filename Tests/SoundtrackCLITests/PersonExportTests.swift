import Foundation
import GRDB
import SoundtrackContext
import SoundtrackTestSupport
import Testing

@testable import SoundtrackStore

/// `users export` and `users import` (issue 42, item 6): a person restored into another database
/// gets the same picks; a malformed, changed or conflicting document is refused naming its field,
/// and nothing is half-imported.
@Suite(.serialized) struct PersonExportTests {
    /// A simulated person's log (at least 200 events) replayed into a database, then a few
    /// learning picks and feedback naming them, a setting and a named place.
    static func source() async throws -> (dir: URL, db: String, user: String, snapshots: URL) {
        let dir = CLI.tempDir()
        let db = dir.appendingPathComponent("src.sqlite").path
        let sim = dir.appendingPathComponent("sim")
        var r = try await CLI.run(["simulate", "--users", "1", "--days", "14", "--seed", "3", "--out", sim.path])
        #expect(r.status == 0, "\(r.stderr)")
        let log = sim.appendingPathComponent("events.jsonl")
        let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.count >= 200)
        r = try await CLI.run(["replay", log.path, "--create-users", "--no-fit", "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        let user = "sim-0001"
        // Snapshots of the log, for the picks compared.
        var snapshots = ""
        for (i, line) in lines.enumerated() where i % 9 == 0 {
            if let s = (try JSONParser.parse(String(line)))["snapshot"] { snapshots += s.serialized() + "\n" }
        }
        let file = dir.appendingPathComponent("snapshots.jsonl")
        try Data(snapshots.utf8).write(to: file)
        // Learning picks with feedback naming them, a setting, a named place.
        for (i, line) in snapshots.split(separator: "\n").prefix(3).enumerated() {
            var s = try JSONParser.parse(String(line))
            if case var .object(pairs) = s, let at = pairs.firstIndex(where: { $0.0 == "at" }) {
                pairs[at].1 = .string("2026-04-0\(i + 1)T08:00:00+09:00")
                s = .object(pairs)
            }
            r = try await CLI.run(["pick", "--db", db, "-"], stdin: s.serialized())
            #expect(r.status == 0, "\(r.stderr)")
            let pick = try JSONParser.parse(r.stdout)
            let event = JSONValue.object([
                ("id", .string("ev-pick-\(i)")), ("user", .string(user)), ("at", .string("2026-04-0\(i + 1)T08:03:00+09:00")),
                ("track", pick["track"]!["id"]!), ("signal", .string(i == 1 ? "dislike" : "like")), ("pick_id", pick["pick_id"]!)
            ])
            r = try await CLI.run(["feedback", "--db", db, "-"], stdin: event.serialized())
            #expect(r.status == 0, "\(r.stderr)")
        }
        #expect(try await CLI.run(["settings", "set", user, "keep_raw_snapshots", "on", "--db", db]).status == 0)
        r = try await CLI.run(["places", "name", user, "pl-1", "home", "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        // A quiz round answered (its row and the best score are the person's too).
        r = try await CLI.run(["quiz", user, "--json", "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        guard case let .string(quiz)? = try JSONParser.parse(r.stdout)["quiz"] else { throw ExportHasNoTables() }
        r = try await CLI.run(["quiz", user, "--answers", "\(quiz):1,2,3,4,1", "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        return (dir, db, user, file)
    }

    struct ExportHasNoTables: Error {}

    static func count(_ v: JSONValue?) -> Int {
        if case let .array(items)? = v { return items.count }
        return 0
    }

    static func picks(_ db: String, _ snapshots: URL) async throws -> String {
        let r = try await CLI.run(["batch", snapshots.path, "--read-only", "--top", "10", "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout
    }

    @Test func theImportedPersonGetsTheSamePicks() async throws {
        let (dir, db, user, snapshots) = try await Self.source()
        var r = try await CLI.run(["users", "export", user, "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        let document = r.stdout
        let exported = try JSONParser.parse(document)
        #expect(exported["format"] == .string("soundtrack-person"))
        #expect(Self.count(exported["tables"]?["feedback"]) >= 203)
        #expect(Self.count(exported["tables"]?["picks"]) == 3)
        #expect(!document.contains("\"hash\""), "no key secret's hash")
        // Every table that keeps a person's rows is in the export.
        let personal = try await DatabaseQueue(path: db).read { d in
            try String.fetchAll(d, sql: "SELECT name FROM sqlite_master WHERE type = 'table'").filter { table in
                try Row.fetchAll(d, sql: "PRAGMA table_info(\(table))").contains { ($0["name"] as String) == "user_id" }
            }
        }
        guard case let .object(tables)? = exported["tables"] else { throw ExportHasNoTables() }
        #expect(Set(tables.map(\.0)) == Set(personal + ["users"]))

        let target = dir.appendingPathComponent("dst.sqlite").path
        r = try await CLI.run(["users", "import", "-", "--db", target], stdin: document)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("imported user \(user)"), "\(r.stdout)")
        let before = try await Self.picks(db, snapshots), after = try await Self.picks(target, snapshots)
        #expect(before.split(separator: "\n").count >= 20)
        #expect(before == after)
        // Learning on: the next picks of both are the same too.
        let next = #"{"user": "\#(user)", "at": "2026-04-09T18:00:00+09:00", "motion": {"activity": "running"}}"#
        for _ in 0..<2 {
            let a = try await CLI.run(["pick", "--top", "5", "--db", db, "-"], stdin: next)
            let b = try await CLI.run(["pick", "--top", "5", "--db", target, "-"], stdin: next)
            #expect(a.status == 0 && a.stdout == b.stdout, "\(a.stdout)\n\(b.stdout)")
        }
        // What was imported is exported again the same (but for what an import leaves out).
        let again = try JSONParser.parse(try await CLI.run(["users", "export", user, "--db", target]).stdout)
        #expect(Self.count(exported["tables"]?["quizzes"]) == 1 && Self.count(exported["tables"]?["quiz_players"]) == 1)
        for table in ["user_settings", "weights", "places", "feedback", "blend_examples", "community_people", "quizzes", "quiz_players"] {
            #expect(again["tables"]?[table] == exported["tables"]?[table], "\(table)")
        }
    }

    @Test("A document of schema v17 (before the session's style run, v18) still imports, the run NULL")
    func anExportOfTheSchemaBeforeImports() async throws {
        let (dir, db, user, _) = try await Self.source()
        let exported = try JSONParser.parse(try await CLI.run(["users", "export", user, "--db", db]).stdout)
        #expect(exported["schema"] == .string("v22"))
        // The document as v17 wrote it: sessions without `style` and `style_since`, its checksum made again.
        guard case .object(var tables)? = exported["tables"], let s = tables.firstIndex(where: { $0.0 == "sessions" }),
            case .array(let rows) = tables[s].1
        else { throw ExportHasNoTables() }
        tables[s].1 = .array(
            rows.map { row in
                guard case .object(let columns) = row else { return row }
                return .object(columns.filter { $0.0 != "style" && $0.0 != "style_since" })
            })
        let v17: JSONValue = .object([
            ("format", exported["format"]!), ("version", exported["version"]!), ("schema", .string("v17")), ("user", .string(user)),
            ("exported_at", exported["exported_at"]!), ("tables", .object(tables)), ("sha256", .string(PersonExport.checksum(.object(tables))))
        ])
        #expect(!v17.serialized().contains("style_since"))
        let target = dir.appendingPathComponent("dst.sqlite").path
        let r = try await CLI.run(["users", "import", "-", "--db", target], stdin: v17.serialized())
        #expect(r.status == 0, "\(r.stderr)")
        let styles = try await DatabaseQueue(path: target).read { d in
            try Row.fetchAll(d, sql: "SELECT style, style_since FROM sessions WHERE user_id = ?", arguments: [user])
        }
        #expect(styles.count == 1 && styles.allSatisfy { $0["style"] as Int64? == nil && $0["style_since"] as Double? == nil })
    }

    @Test func aChangedTruncatedOrConflictingDocumentIsRefusedAndLeavesNothing() async throws {
        let (dir, db, user, _) = try await Self.source()
        let document = try await CLI.run(["users", "export", user, "--db", db]).stdout
        let target = dir.appendingPathComponent("dst.sqlite").path
        func importing(_ text: String) async throws -> CLI.Result {
            try await CLI.run(["users", "import", "-", "--db", target], stdin: text)
        }
        func nobody() async throws {
            #expect(try await CLI.run(["users", "show", user, "--db", target]).status == 2, "nothing half-imported")
        }
        // Changed by hand: the checksum no longer matches.
        var r = try await importing(document.replacingOccurrences(of: #""count":"#, with: #""count":1"#))
        #expect(r.status == 2)
        #expect(r.stderr.contains("sha256"), "\(r.stderr)")
        try await nobody()
        // Cut short.
        r = try await importing(String(document.prefix(document.count / 2)))
        #expect(r.status == 2, "\(r.stderr)")
        try await nobody()
        // Another schema.
        r = try await importing(document.replacingOccurrences(of: #""schema":"v"#, with: #""schema":"x"#))
        #expect(r.status == 2 && r.stderr.contains("schema"), "\(r.stderr)")
        // An event id another person of the target has: refused naming the row, nothing written.
        let other =
            #"{"id": "ev-sim-0001-00001", "user": "x-1", "at": "2026-03-01T08:00:00+09:00", "track": "spotify:track:1zusIxNqJu8i4g6P6hJ2Qa", "signal": "like", "snapshot": {"user": "x-1", "at": "2026-03-01T07:58:00+09:00"}}"#
        #expect(try await CLI.run(["users", "add", "x-1", "--db", target]).status == 0)
        r = try await CLI.run(["feedback", "--db", target, "-"], stdin: other)
        #expect(r.status == 0, "\(r.stderr)")
        r = try await importing(document)
        #expect(r.status == 2)
        #expect(r.stderr.contains("tables.feedback[0]"), "\(r.stderr)")
        try await nobody()
        // Into the database that has the person: refused as a user already there.
        r = try await CLI.run(["users", "import", "-", "--db", db], stdin: document)
        #expect(r.status == 2 && r.stderr.contains(user), "\(r.stderr)")
        // An unknown user cannot be exported.
        #expect(try await CLI.run(["users", "export", "nobody", "--db", db]).status == 2)
    }
}
