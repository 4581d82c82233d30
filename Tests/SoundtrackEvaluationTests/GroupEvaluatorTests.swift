import Foundation
import SoundtrackCatalog
import SoundtrackEngine
import Testing

@testable import SoundtrackEvaluation

/// `eval groups` (issue 43, item 1): groups drawn from a simulated population, every rule and both
/// baselines scored by each member's hidden taste.
@Suite("eval groups")
struct GroupEvaluatorTests {
    @Test("NDCG of a list against a relevant set, as the members judge a group's list (Metrics.ndcg)")
    func ndcg() {
        #expect(Metrics.ndcg(["a", "b"], relevant: ["a"], k: 10) == 1)
        #expect(abs(Metrics.ndcg(["b", "a"], relevant: ["a"], k: 10) - 1 / log2(3)) < 1e-12)
        #expect(Metrics.ndcg(["b", "a"], relevant: ["a"], k: 1) == 0)
        #expect(Metrics.ndcg(["a"], relevant: [], k: 10) == 0)
    }

    @Test("a seeded run is repeatable and scores every rule and both baselines; worst ≤ mean")
    func run() {
        let engine = Repo.engine()
        let population = Population(users: 12, days: 5, seed: 3, catalog: Repo.smallCatalog)
        let a = GroupEvaluator(engine: engine, population: population, groups: 6, size: 3, seed: 2).run()
        let b = GroupEvaluator(engine: engine, population: population, groups: 6, size: 3, seed: 2).run()
        #expect(a.methods.map(\.name) == GroupAggregation.allCases.map(\.rawValue) + ["most_popular", "one_member"])
        #expect(a.meetings > 0)
        #expect(a.methods.map(\.figures) == b.methods.map(\.figures))
        for (_, f) in a.methods {
            #expect(f.worstNDCG <= f.ndcg + 1e-12 && f.worstLikeRate <= f.likeRate + 1e-12)
            #expect((0...1).contains(f.ndcg) && (0...1).contains(f.likeRate))
        }
        #expect(a.table().last == "the product ranks groups by multiplicative")
    }
}
