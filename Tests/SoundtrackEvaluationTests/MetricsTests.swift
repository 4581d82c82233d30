import Foundation
import Testing

@testable import SoundtrackEvaluation

@Suite("Metrics on hand-computed cases")
struct MetricsTests {
    let ranked = ["a", "b", "c", "d"]
    let relevant: Set<String> = ["b", "d", "e"]

    @Test func precisionAndRecall() {
        #expect(Metrics.precision(ranked, relevant: relevant, k: 4) == 0.5)
        #expect(abs(Metrics.recall(ranked, relevant: relevant, k: 4) - 2.0 / 3) < 1e-12)
        #expect(Metrics.precision(ranked, relevant: relevant, k: 2) == 0.5)
        #expect(abs(Metrics.recall(ranked, relevant: relevant, k: 2) - 1.0 / 3) < 1e-12)
        // A list shorter than k still divides by k.
        #expect(Metrics.precision(["b"], relevant: relevant, k: 4) == 0.25)
        #expect(Metrics.recall(ranked, relevant: [], k: 4) == 0)
    }

    @Test func ndcg() {
        // DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3) + 1/log2(4).
        let dcg = 1 / log2(3.0) + 1 / log2(5.0)
        let idcg = 1 + 1 / log2(3.0) + 0.5
        #expect(abs(Metrics.ndcg(ranked, relevant: relevant, k: 4) - dcg / idcg) < 1e-12)
        #expect(abs(Metrics.ndcg(ranked, relevant: relevant, k: 4) - 0.498189) < 1e-6)
        // k = 2: DCG = 1/log2(3), IDCG = 1 + 1/log2(3).
        #expect(abs(Metrics.ndcg(ranked, relevant: relevant, k: 2) - 0.386853) < 1e-6)
        #expect(Metrics.ndcg(["b", "d"], relevant: ["b", "d"], k: 10) == 1)
        #expect(Metrics.ndcg(["x"], relevant: ["b"], k: 1) == 0)
    }

    @Test func averagePrecision() {
        // Hits at ranks 2 (P = 1/2) and 4 (P = 2/4), divided by min(k, |R|) = 3.
        #expect(abs(Metrics.averagePrecision(ranked, relevant: relevant, k: 4) - 1.0 / 3) < 1e-12)
        // k = 2: one hit at rank 2 (P = 1/2), divided by 2.
        #expect(Metrics.averagePrecision(ranked, relevant: relevant, k: 2) == 0.25)
        #expect(Metrics.averagePrecision(["b", "x"], relevant: ["b"], k: 2) == 1)
    }

    @Test func auc() {
        // Pairs: 0.9>0.5, 0.9>0.1, 0.5=0.5 (½), 0.5>0.1 → 3.5 / 4.
        #expect(Metrics.auc(positives: [0.9, 0.5], negatives: [0.5, 0.1]) == 0.875)
        #expect(Metrics.auc(positives: [0.1], negatives: [0.9]) == 0)
        #expect(Metrics.auc(positives: [0.3], negatives: []) == nil)
    }

    @Test func purityAndNMI() {
        #expect(Metrics.purity([(1, "a"), (1, "a"), (1, "b"), (2, "b")]) == 0.75)
        #expect(abs(Metrics.nmi([(1, "a"), (2, "b"), (1, "a"), (2, "b")]) - 1) < 1e-12)
        #expect(abs(Metrics.nmi([(1, "a"), (1, "b"), (2, "a"), (2, "b")])) < 1e-12)
        // One bin for two contexts: nothing explained.
        #expect(Metrics.nmi([(1, "a"), (1, "b")]) == 0)
    }
}
