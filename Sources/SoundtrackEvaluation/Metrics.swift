import Foundation

/// The ranking metrics of `soundtrack eval`, for one query; their definitions are in
/// `docs/evaluation.md`.
///
/// A query has a ranked list `L` (best first, cut at `k`) and a set `R` of relevant tracks.
public enum Metrics {
    /// `|L@k ∩ R| / k`.
    public static func precision(_ ranked: [String], relevant: Set<String>, k: Int) -> Double {
        guard k > 0 else { return 0 }
        return Double(ranked.prefix(k).filter(relevant.contains).count) / Double(k)
    }

    /// `|L@k ∩ R| / |R|` (0 when `R` is empty).
    public static func recall(_ ranked: [String], relevant: Set<String>, k: Int) -> Double {
        guard !relevant.isEmpty else { return 0 }
        return Double(ranked.prefix(k).filter(relevant.contains).count) / Double(relevant.count)
    }

    /// `DCG@k / IDCG@k` with binary gains: `DCG = Σᵢ [Lᵢ ∈ R] / log₂(i + 1)` for positions
    /// i = 1…k, `IDCG = Σ_{i ≤ min(k, |R|)} 1 / log₂(i + 1)`.
    public static func ndcg(_ ranked: [String], relevant: Set<String>, k: Int) -> Double {
        guard !relevant.isEmpty, k > 0 else { return 0 }
        var dcg = 0.0
        for (i, t) in ranked.prefix(k).enumerated() where relevant.contains(t) { dcg += 1 / log2(Double(i + 2)) }
        var idcg = 0.0
        for i in 0..<min(k, relevant.count) { idcg += 1 / log2(Double(i + 2)) }
        return dcg / idcg
    }

    /// Average precision at k: `Σ_{i ≤ k, Lᵢ ∈ R} P@i / min(k, |R|)`.
    public static func averagePrecision(_ ranked: [String], relevant: Set<String>, k: Int) -> Double {
        guard !relevant.isEmpty, k > 0 else { return 0 }
        var hits = 0
        var sum = 0.0
        for (i, t) in ranked.prefix(k).enumerated() where relevant.contains(t) {
            hits += 1
            sum += Double(hits) / Double(i + 1)
        }
        return sum / Double(min(k, relevant.count))
    }

    /// The area under the ROC curve of scores: the share of (positive, negative) pairs where the
    /// positive scores higher, ties counting one half. `nil` without a positive or a negative.
    public static func auc(positives: [Double], negatives: [Double]) -> Double? {
        guard !positives.isEmpty, !negatives.isEmpty else { return nil }
        var wins = 0.0
        for p in positives {
            for q in negatives {
                if p > q { wins += 1 } else if p == q { wins += 0.5 }
            }
        }
        return wins / Double(positives.count * negatives.count)
    }

    /// Cluster purity: `Σ_b max_c n(b, c) / N` over clusters `b` and true classes `c`.
    public static func purity<B: Hashable, C: Hashable>(_ pairs: [(B, C)]) -> Double {
        guard !pairs.isEmpty else { return 0 }
        var table: [B: [C: Int]] = [:]
        for (b, c) in pairs { table[b, default: [:]][c, default: 0] += 1 }
        let best = table.values.reduce(0) { $0 + ($1.values.max() ?? 0) }
        return Double(best) / Double(pairs.count)
    }

    /// Normalised mutual information `I(B; C) / sqrt(H(B) · H(C))` (natural logarithms); 1 when both
    /// partitions are a single block, 0 when one of them is and the other is not.
    public static func nmi<B: Hashable, C: Hashable>(_ pairs: [(B, C)]) -> Double {
        let n = Double(pairs.count)
        guard n > 0 else { return 0 }
        var joint: [B: [C: Int]] = [:]
        var nb: [B: Int] = [:]
        var nc: [C: Int] = [:]
        for (b, c) in pairs {
            joint[b, default: [:]][c, default: 0] += 1
            nb[b, default: 0] += 1
            nc[c, default: 0] += 1
        }
        func entropy<K>(_ counts: [K: Int]) -> Double {
            counts.values.reduce(0) { acc, k in let p = Double(k) / n; return acc - p * log(p) }
        }
        let hb = entropy(nb), hc = entropy(nc)
        if hb == 0 && hc == 0 { return 1 }
        guard hb > 0, hc > 0 else { return 0 }
        var mi = 0.0
        for (b, row) in joint {
            for (c, k) in row {
                let pbc = Double(k) / n
                mi += pbc * log(pbc / (Double(nb[b]!) / n * Double(nc[c]!) / n))
            }
        }
        return mi / (hb * hc).squareRoot()
    }
}
