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
            counts.values.reduce(0) { acc, k in
                let p = Double(k) / n; return acc - p * log(p)
            }
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

extension Metrics {
    /// The contingency counts of a clustering `B` against true classes `C`, their marginals and `N`.
    struct Contingency {
        var table: [[Int]]
        var rows: [Int]
        var columns: [Int]
        var n: Int

        init<B: Hashable, C: Hashable>(_ pairs: [(B, C)]) {
            var bi: [B: Int] = [:], ci: [C: Int] = [:]
            var cells: [Int: [Int: Int]] = [:]
            for (b, c) in pairs {
                let r =
                    bi[b]
                    ?? {
                        let k = bi.count; bi[b] = k; return k
                    }()
                let s =
                    ci[c]
                    ?? {
                        let k = ci.count; ci[c] = k; return k
                    }()
                cells[r, default: [:]][s, default: 0] += 1
            }
            let t = (0..<bi.count).map { r in (0..<ci.count).map { cells[r]?[$0] ?? 0 } }
            table = t
            rows = t.map { $0.reduce(0, +) }
            columns = (0..<ci.count).map { c in t.reduce(0) { $0 + $1[c] } }
            n = pairs.count
        }

        static func entropy(_ counts: [Int], _ n: Int) -> Double {
            counts.reduce(0.0) { acc, k in
                guard k > 0 else { return acc }
                let p = Double(k) / Double(n)
                return acc - p * log(p)
            }
        }

        var mutualInformation: Double {
            let nn = Double(n)
            var mi = 0.0
            for (r, row) in table.enumerated() {
                for (c, k) in row.enumerated() where k > 0 {
                    mi += Double(k) / nn * log(nn * Double(k) / (Double(rows[r]) * Double(columns[c])))
                }
            }
            return max(0, mi)
        }

        /// The mutual information expected of two random clusterings with these marginals
        /// (the hypergeometric model of Vinh, Epps and Bailey, 2010).
        var expectedMutualInformation: Double {
            let nn = Double(n)
            let lgN = logFactorial(nn)
            var emi = 0.0
            for a in rows {
                for b in columns {
                    let lo = max(1, a + b - n), hi = min(a, b)
                    guard lo <= hi else { continue }
                    let da = Double(a), db = Double(b)
                    var fixed = logFactorial(da) + logFactorial(db)
                    fixed += logFactorial(nn - da) + logFactorial(nn - db) - lgN
                    for k in lo...hi {
                        let kk = Double(k)
                        let term: Double = kk / nn * log(nn * kk / (da * db))
                        var logP: Double = fixed - logFactorial(kk) - logFactorial(da - kk)
                        logP -= logFactorial(db - kk) + logFactorial(nn - da - db + kk)
                        emi += term * exp(logP)
                    }
                }
            }
            return emi
        }
    }

    /// `log(x!)` through the log-gamma function.
    static func logFactorial(_ x: Double) -> Double {
        Foundation.lgamma(x + 1)
    }

    /// Normalised mutual information with the arithmetic mean of the entropies,
    /// `I(B; C) / ((H(B) + H(C)) / 2)` (natural logarithms; scikit-learn's default): 1 when both
    /// partitions are one block or determine each other, 0 when independent.
    public static func nmiArithmetic<B: Hashable, C: Hashable>(_ pairs: [(B, C)]) -> Double {
        let t = Contingency(pairs)
        guard t.n > 0 else { return 0 }
        let hb = Contingency.entropy(t.rows, t.n), hc = Contingency.entropy(t.columns, t.n)
        if hb == 0 && hc == 0 { return 1 }
        guard hb + hc > 0 else { return 0 }
        return t.mutualInformation / ((hb + hc) / 2)
    }

    /// Adjusted mutual information: `(I − E[I]) / ((H(B) + H(C)) / 2 − E[I])`, where `E[I]` is the
    /// mutual information expected by chance for clusterings with the same sizes (arithmetic
    /// normalisation, scikit-learn's default). 0 for chance-level agreement (and when one of the
    /// partitions is a single block while the other is not), 1 for identical partitions.
    public static func ami<B: Hashable, C: Hashable>(_ pairs: [(B, C)]) -> Double {
        let t = Contingency(pairs)
        guard t.n > 0 else { return 0 }
        if t.rows.count == t.columns.count && (t.rows.count <= 1) { return 1 }
        let hb = Contingency.entropy(t.rows, t.n), hc = Contingency.entropy(t.columns, t.n)
        let mi = t.mutualInformation
        let emi = t.expectedMutualInformation
        let denominator = (hb + hc) / 2 - emi
        guard abs(denominator) > 1e-12 else { return 0 }
        return (mi - emi) / denominator
    }
}
