import Foundation
import SoundtrackContext
import SoundtrackTestSupport
import Testing

/// The blend a database learns from its own feedback, through the commands a user runs: replay
/// learns it at its end, `models` shows, lists, refits and rolls back, picks name the version.
@Suite("soundtrack models")
struct ModelsTests {
    /// `users` people, `each` likes a person, of tracks of the small catalog (each person comes
    /// back to a few of them), in contexts of ``Logs/snapshot(user:minute:context:)``.
    static func likes(users: Int, each: Int) throws -> [String] {
        let csv = try String(contentsOf: CLI.root.appendingPathComponent("datasets/catalog-small.csv"), encoding: .utf8)
        let ids = csv.split(separator: "\n").dropFirst().map { String($0.prefix { $0 != "," }) }
        var lines: [String] = []
        for i in 0..<(users * each) {
            let u = i % users, n = i / users
            let user = "u-\(u)"
            let snap = Logs.snapshot(user: user, minute: n * 30, context: n % 5)
            let at = try JSONParser.parse(snap)["at"]!.serialized()
            let track = ids[(u * 7 + (n % 4) * 13 + (n / 4)) % ids.count]
            lines.append(#"{"id":"ev-\#(i)","user":"\#(user)","at":\#(at),"track":"\#(track)","signal":"like","snapshot":\#(snap)}"#)
        }
        return lines
    }

    static func json(_ text: String) throws -> JSONValue { try JSONParser.parse(Data(text.utf8)) }

    @Test("replay learns the blend at its end; models history lists it, models use picks a version (0: the models'), picks name it")
    func replayLearnsAndModelsRollBack() async throws {
        let (dir, db) = try await CLI.smallDatabase(user: "u-0")
        let log = dir.appendingPathComponent("likes.jsonl")
        try Logs.write(try Self.likes(users: 40, each: 15), log)
        let replay = try await CLI.run(["replay", log.path, "--create-users", "--db", db])
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(replay.stderr.contains("blend 1: "), "\(replay.stderr)")

        let history = try await CLI.run(["models", "history", "--json", "--db", db])
        #expect(history.status == 0, "\(history.stderr)")
        let rows = history.stdout.split(separator: "\n")
        #expect(rows.count == 1)
        let first = try Self.json(String(rows[0]))
        #expect(first["version"] == .number(1))
        #expect(first["training_queries"] == .number(480) && first["validation_queries"] == .number(120))
        guard case let .bool(promoted) = first["promoted"] else { Issue.record("no promoted field"); return }
        #expect(first["in_use"] == .bool(promoted))

        let snapshot = dir.appendingPathComponent("s.json")
        try Logs.snapshot(user: "u-3", minute: 9_000, context: 1).write(to: snapshot, atomically: true, encoding: .utf8)
        for version in [1, 0] {
            let use = try await CLI.run(["models", "use", "\(version)", "--db", db])
            #expect(use.status == 0, "\(use.stderr)")
            let show = try Self.json(try await CLI.run(["models", "show", "--json", "--db", db]).stdout)
            #expect(show["in_use"] == .number(Double(version)))
            let pick = try await CLI.run(["pick", "--read-only", snapshot.path, "--db", db])
            #expect(pick.status == 0, "\(pick.stderr)")
            #expect(try Self.json(pick.stdout)["blend"] == .number(Double(version)), "\(pick.stdout)")
        }
        let bad = try await CLI.run(["models", "use", "7", "--db", db])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("VERSION") && bad.stderr.contains("no blend version 7"), "\(bad.stderr)")

        // Nothing new since: a replay of the same log (all duplicates) does not fit again; models fit does.
        let again = try await CLI.run(["replay", log.path, "--db", db])
        #expect(again.status == 0 && !again.stderr.contains("blend "), "\(again.stderr)")
        let fit = try await CLI.run(["models", "fit", "--db", db])
        #expect(fit.status == 0 && fit.stdout.hasPrefix("blend 2: "), "\(fit.stdout) \(fit.stderr)")
    }

    @Test("replay --no-fit learns no blend; the queries wait for the next refit")
    func noFit() async throws {
        let (dir, db) = try await CLI.smallDatabase(user: "u-0")
        let log = dir.appendingPathComponent("likes.jsonl")
        try Logs.write(try Self.likes(users: 40, each: 15), log)
        let replay = try await CLI.run(["replay", log.path, "--create-users", "--no-fit", "--db", db])
        #expect(replay.status == 0 && !replay.stderr.contains("blend "), "\(replay.stderr)")
        #expect(try await CLI.run(["models", "history", "--json", "--db", db]).stdout.isEmpty)
        let show = try Self.json(try await CLI.run(["models", "show", "--json", "--db", db]).stdout)
        #expect(show["in_use"] == .number(0) && show["new_queries"] == .number(600) && show["refit_due"] == .bool(true))
    }
}
