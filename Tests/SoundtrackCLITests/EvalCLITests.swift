import Foundation
import SoundtrackContext
import SoundtrackTestSupport
import Testing

@Suite("CLI: simulate and eval")
struct EvalCLITests {
    static let smallCatalog = CLI.root.appendingPathComponent("datasets/catalog-small.csv").path
    static let smallLog = CLI.root.appendingPathComponent("Tests/SoundtrackEvaluationTests/Fixtures/small-log.jsonl").path

    @Test func simulateIsDeterministicAndWritesItsFiles() async throws {
        let dir = CLI.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in ["a", "b"] {
            let r = try await CLI.run(["simulate", "--users", "2", "--days", "2", "--seed", "5", "--catalog", Self.smallCatalog, "--out", dir.appendingPathComponent(name).path])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("simulated 2 users × 2 days"))
        }
        for file in ["events.jsonl", "truth.jsonl", "users.jsonl"] {
            let a = try Data(contentsOf: dir.appendingPathComponent("a/\(file)"))
            let b = try Data(contentsOf: dir.appendingPathComponent("b/\(file)"))
            #expect(!a.isEmpty && a == b, "\(file)")
        }
        let events = try String(contentsOf: dir.appendingPathComponent("a/events.jsonl"), encoding: .utf8).split(separator: "\n")
        let truth = try String(contentsOf: dir.appendingPathComponent("a/truth.jsonl"), encoding: .utf8).split(separator: "\n")
        #expect(events.count == truth.count)
        let meta = try JSONParser.parse(Data(contentsOf: dir.appendingPathComponent("a/population.json")))
        #expect(meta["events"] == .number(Double(events.count)))
    }

    @Test func evalPrintsATableAndJSON() async throws {
        var r = try await CLI.run(["eval", Self.smallLog, "--catalog", Self.smallCatalog])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("protocol chronological"))
        #expect(r.stdout.contains("NDCG@10"))
        #expect(r.stdout.contains("user_most_liked"))
        r = try await CLI.run(["eval", Self.smallLog, "--catalog", Self.smallCatalog, "--json", "--protocol", "random", "--folds", "3", "--k", "5"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try JSONParser.parse(r.stdout)
        #expect(json["protocol"]?["split"] == .string("random"))
        #expect(json["protocol"]?["k"] == .number(5))
        #expect(json["metrics"]?["ndcg_at_k"] != nil)
        #expect(json["baselines"]?["most_popular"]?["precision_at_k"] != nil)
    }

    @Test func evalOnlineReportsTheLearningCurve() async throws {
        let r = try await CLI.run(["eval", "--online", "--users", "2", "--days", "3", "--catalog", Self.smallCatalog, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try JSONParser.parse(r.stdout)
        guard case let .array(days)? = json["online"]?["like_rate_by_day"]?["engine"] else {
            Issue.record("no learning curve: \(r.stdout)")
            return
        }
        #expect(days.count == 3)
        #expect(json["online"]?["bin_purity"] != nil)
    }

    func writeLog(_ lines: [String]) -> String {
        let dir = CLI.tempDir()
        let path = dir.appendingPathComponent("log.jsonl").path
        FileManager.default.createFile(atPath: path, contents: Data(lines.joined(separator: "\n").utf8))
        return path
    }

    func smallLogLines() throws -> [String] {
        try String(contentsOfFile: Self.smallLog, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    @Test func malformedLineIsBadInputWithLineAndField() async throws {
        var lines = Array(try smallLogLines().prefix(5))
        lines[2] = lines[2].replacingOccurrences(of: "\"signal\":\"", with: "\"signal\":\"x")
        let r = try await CLI.run(["eval", writeLog(lines), "--catalog", Self.smallCatalog])
        #expect(r.status == 2)
        #expect(r.stderr.contains("line 3: signal"), "\(r.stderr)")
    }

    @Test func logOutOfTimeOrderIsBadInput() async throws {
        let lines = Array(try smallLogLines().prefix(40))
        // The same user's events, the later one first.
        let user = try JSONParser.parse(lines[0])["user"]!
        let mine = lines.filter { (try? JSONParser.parse($0)["user"]) == user }
        let r = try await CLI.run(["eval", writeLog([mine[1], mine[0]]), "--catalog", Self.smallCatalog])
        #expect(r.status == 2)
        #expect(r.stderr.contains("line 2: at:"), "\(r.stderr)")
        #expect(r.stderr.contains("time order"))
    }

    @Test func unknownProtocolAndBadKAreUsageErrors() async throws {
        var r = try await CLI.run(["eval", Self.smallLog, "--protocol", "sideways"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("protocol"), "\(r.stderr)")
        r = try await CLI.run(["eval", Self.smallLog, "--k", "0"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("--k"), "\(r.stderr)")
        r = try await CLI.run(["eval", Self.smallLog, "--k", "-3"])
        #expect(r.status == 2)
        r = try await CLI.run(["eval"])
        #expect(r.status == 2)
    }
}
