import Foundation
import SoundtrackContext
import Testing

@testable import SoundtrackEvaluation

/// The evaluation report of a small committed log, compared with a committed golden file: a change
/// in the engine's or the evaluation's behaviour shows as a diff.
///
/// To accept a change on purpose, regenerate the golden file and review its diff:
/// `soundtrack eval Tests/SoundtrackEvaluationTests/Fixtures/small-log.jsonl --catalog datasets/catalog-small.csv --json > Tests/SoundtrackEvaluationTests/Fixtures/small-log.eval.json`
/// (the log itself: `soundtrack simulate --users 3 --days 7 --seed 3 --catalog datasets/catalog-small.csv --out DIR`, DIR/events.jsonl).
@Suite("Golden evaluation report")
struct GoldenTests {
    @Test func smallLogReportMatchesTheGoldenFile() throws {
        let data = try Data(contentsOf: Repo.smallLogURL)
        let log = try LabelledLog.parse(data, catalog: Repo.smallCatalog)
        let report = OfflineEvaluator(engine: Repo.engine(seed: 42), k: 10).evaluate(log, protocol: .chronological, folds: 4, seed: 42)
        let got = report.json().pretty() + "\n"
        let want = try String(contentsOf: Repo.goldenURL, encoding: .utf8)
        if got != want {
            let a = got.split(separator: "\n", omittingEmptySubsequences: false), b = want.split(separator: "\n", omittingEmptySubsequences: false)
            let diff = zip(a, b).enumerated().filter { $0.element.0 != $0.element.1 }.prefix(10)
                .map { "line \($0.offset + 1): got \($0.element.0) / golden \($0.element.1)" }
            Issue.record("report differs from \(Repo.goldenURL.lastPathComponent):\n\(diff.joined(separator: "\n"))")
        }
        // The report is the same from the same inputs.
        let again = OfflineEvaluator(engine: Repo.engine(seed: 42), k: 10).evaluate(log, protocol: .chronological, folds: 4, seed: 42)
        #expect(again.json() == report.json())
    }
}
