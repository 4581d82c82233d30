import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

/// `soundtrack eval ratings`: the engine's track ranking on a data set of contextual ratings, with
/// the usual protocol of context-aware recommendation and strong baselines on the same folds
/// (docs/evaluation.md, "Contextual ratings").
///
/// Protocol: the rows are shuffled by a seeded generator and dealt into `folds` folds (position
/// `p` of the shuffle goes to fold `p mod folds`); each fold is the test set once. For every test
/// (user, context) pair — the context being the whole tuple of context values, `NA` included —
/// the relevant items are the pair's test ratings ≥ 4 (pairs without one are skipped), the
/// candidates are the items of the training part, less those the user rated in training in the
/// same context; the first `k` of each ranking are scored (precision, recall, NDCG, MAP, as in
/// ``Metrics``), averaged over a user's pairs, then over users.
///
/// The engine meets each fold as a deployment would (``RatingsFold``): the items as its catalog,
/// the training ratings as a log of `rate` events whose snapshots carry the rows' contexts as tags
/// (``RatingsContext``), and one read-only pick of ``top`` tracks for each test pair's context.
/// A ``RatingsEngineRun`` does that, in memory (``InProcessRatingsRun``) or through a database and
/// the commands a user runs (`--through-store`); either gives two rankings per pair: with the
/// models' blend, as a fresh deployment ranks, and with the blend the deployment learns from the
/// training log itself (``BlendLearner``, as `replay` does at its end). The engine's list is the
/// pick's, less the items outside the candidates; nothing is fitted on the test part.
public struct RatingsEvaluator: Sendable {
    /// Folds of the cross-validation.
    public let folds: Int
    /// Seed of the folds and of the seeded baselines.
    public let seed: UInt64
    /// The length of the scored lists.
    public let k: Int
    /// The order of a fold's training log.
    public let logOrder: LogOrder

    /// The order in which a fold's training rows reach the engine as a log.
    public enum LogOrder: String, Sendable, CaseIterable {
        /// The file's order (the data sets group each user's rows together).
        case file
        /// The order of the events' times (each user's `n`-th rating a week after the `n − 1`-th,
        /// all users from the same day): the users' rows interleaved, as a deployment's log meets
        /// them; ties in file order.
        case time
    }

    /// Creates an evaluator.
    public init(folds: Int = 5, seed: UInt64 = 1, k: Int = 10, logOrder: LogOrder = .file) {
        self.folds = folds
        self.seed = seed
        self.k = k
        self.logOrder = logOrder
    }

    /// The data set coded: items in order of first appearance, users, context tuples.
    struct Coded {
        var data: ContextualRatings
        var items: [String]
        var itemCode: [String: Int]
        var users: [String]
        var userCode: [String: Int]
        var contextCode: [Int]
        var tracks: [Track]
        var mapping: RatingsContext
    }

    func code(_ data: ContextualRatings, itemCategories: [String: [String]]) -> Coded {
        var items: [String] = [], itemCode: [String: Int] = [:]
        var users: [String] = [], userCode: [String: Int] = [:]
        var contexts: [String: Int] = [:]
        var contextCode: [Int] = []
        for r in data.rows {
            if itemCode[r.item] == nil { itemCode[r.item] = items.count; items.append(r.item) }
            if userCode[r.user] == nil { userCode[r.user] = users.count; users.append(r.user) }
            let key = r.context.map { $0 ?? "\u{1}NA" }.joined(separator: "\u{0}")
            if contexts[key] == nil { contexts[key] = contexts.count }
            contextCode.append(contexts[key]!)
        }
        let tracks = items.map { Track(id: $0, title: $0, artist: "unknown", genres: itemCategories[$0] ?? []) }
        return Coded(
            data: data, items: items, itemCode: itemCode, users: users, userCode: userCode, contextCode: contextCode,
            tracks: tracks, mapping: RatingsContext(columns: data.columns))
    }

    /// A test (user, context) pair of a fold.
    struct TestPair {
        var user: Int
        var context: Int
        /// A row of the pair (its context values).
        var row: Int
        var relevant: Set<Int>
        var excluded: Set<Int>
    }

    /// The rows of each fold's test part: the seeded shuffle dealt round-robin.
    func foldRows(_ n: Int) -> [[Int]] {
        var order = Array(0..<n)
        var rng = SeededGenerator(seed: seed, user: "ratings-folds", counter: 0)
        order.shuffle(using: &rng)
        var out = [[Int]](repeating: [], count: folds)
        for (p, row) in order.enumerated() { out[p % folds].append(row) }
        return out.map { $0.sorted() }
    }

    func pairs(_ c: Coded, train: [Int], test: [Int]) -> [TestPair] {
        var seen: [Int: [Int: Set<Int>]] = [:]
        for r in train {
            seen[c.userCode[c.data.rows[r].user]!, default: [:]][c.contextCode[r], default: []].insert(c.itemCode[c.data.rows[r].item]!)
        }
        var grouped: [[Int]: (row: Int, relevant: Set<Int>)] = [:]
        var order: [[Int]] = []
        for r in test {
            let u = c.userCode[c.data.rows[r].user]!, ctx = c.contextCode[r]
            let key = [u, ctx]
            if grouped[key] == nil { grouped[key] = (r, []); order.append(key) }
            if c.data.rows[r].rating >= 4 { grouped[key]!.relevant.insert(c.itemCode[c.data.rows[r].item]!) }
        }
        return order.compactMap { key in
            let g = grouped[key]!
            guard !g.relevant.isEmpty else { return nil }
            return TestPair(user: key[0], context: key[1], row: g.row, relevant: g.relevant, excluded: seen[key[0]]?[key[1]] ?? [])
        }
    }

    /// What the engine meets in one fold: the catalog, the training log and a snapshot a test pair.
    func fold(_ c: Coded, train: [Int], pairs: [TestPair]) -> RatingsFold {
        var ordinal: [String: Int] = [:]
        var events: [FeedbackEvent] = []
        events.reserveCapacity(train.count)
        for r in train {
            let row = c.data.rows[r]
            let n = ordinal[row.user, default: 0]
            ordinal[row.user] = n + 1
            let snapshot = c.mapping.snapshot(row.context, user: row.user, ordinal: n)
            events.append(
                FeedbackEvent(
                    id: "r\(row.line)", user: row.user, at: snapshot.at, track: row.item, signal: .rate,
                    rating: min(5, max(1, Int(row.rating.rounded()))), snapshot: snapshot))
        }
        if logOrder == .time {
            events = events.indices.sorted { (events[$0].at.date, $0) < (events[$1].at.date, $1) }.map { events[$0] }
        }
        let queries = pairs.map { pair in
            let row = c.data.rows[pair.row]
            return c.mapping.snapshot(row.context, user: row.user, ordinal: ordinal[row.user, default: 0])
        }
        return RatingsFold(tracks: c.tracks, events: events, queries: queries, users: c.users)
    }

    /// The whole data set as one log (every row, in file order), with its catalog: what
    /// `soundtrack fit --ratings` learns.
    public func log(_ data: ContextualRatings, itemCategories: [String: [String]] = [:]) -> RatingsFold {
        let c = code(data, itemCategories: itemCategories)
        return fold(c, train: Array(data.rows.indices), pairs: [])
    }

    /// Runs the protocol for the engine (through `run`) and every baseline.
    /// - Parameter itemCategories: each item's categories (genres), if the data set has them.
    /// - Throws: what `run` throws.
    public func evaluate(_ data: ContextualRatings, itemCategories: [String: [String]] = [:], run: any RatingsEngineRun) throws -> RatingsReport {
        let c = code(data, itemCategories: itemCategories)
        var perUser = [String: [Int: [Double]]]()  // method → user → summed metrics (4) + count
        var decisions: [BlendLearner.Decision?] = []
        var coverage = (found: 0, relevant: 0)
        for testRows in foldRows(data.rows.count) {
            let testSet = Set(testRows)
            let train = (0..<data.rows.count).filter { !testSet.contains($0) }
            let training = RatingsTraining(
                users: c.users.count, items: c.items.count,
                rows: train.map { r in
                    (c.userCode[data.rows[r].user]!, c.itemCode[data.rows[r].item]!, data.rows[r].rating, c.contextCode[r])
                })
            let testPairs = pairs(c, train: train, test: testRows)
            let rankings = try run.rank(fold(c, train: train, pairs: testPairs))
            decisions.append(rankings.decision)
            let candidates = Set(training.rows.map(\.item))
            let baselines: [(String, any RatingsBaseline)] = [
                ("popularity", PopularityBaseline(training)),
                ("own_most_liked", OwnMostLikedBaseline(training)),
                ("context_popularity", ContextPopularityBaseline(training)),
                ("item_knn", ItemKNNBaseline(training, tuneKNN(c, train: train))),
                ("als", ALSBaseline(training, tuneALS(c, train: train), seed: seed))
            ]
            let allowedOrder = candidates.sorted()
            for (p, pair) in testPairs.enumerated() {
                func engineList(_ ids: [String]) -> [Int] {
                    ids.compactMap { c.itemCode[$0] }.filter { candidates.contains($0) && !pair.excluded.contains($0) }
                }
                let learnedList = engineList(rankings.learned[p])
                add(&perUser, "engine_shipped", pair, engineList(rankings.shipped[p]))
                add(&perUser, "engine_learned", pair, learnedList)
                coverage.found += pair.relevant.filter(Set(learnedList).contains).count
                coverage.relevant += pair.relevant.count
                let allowed = allowedOrder.filter { !pair.excluded.contains($0) }
                for (name, b) in baselines {
                    let all = b.scores(user: pair.user, context: pair.context)
                    add(&perUser, name, pair, ranking(allowed, allowed.map { all[$0] }))
                }
            }
        }
        var report = RatingsReport(folds: folds, seed: seed, k: k)
        report.logOrder = logOrder.rawValue
        report.counts = (data.rows.count, c.users.count, c.items.count, data.columns)
        for m in RatingsReport.engineNames + RatingsReport.baselineNames {
            let users = perUser[m] ?? [:]
            var sums = [Double](repeating: 0, count: 4)
            for (_, v) in users { for i in 0..<4 { sums[i] += v[i] / v[4] } }
            let n = Double(max(users.count, 1))
            report.metrics[m] = sums.map { $0 / n }
            report.usersScored = max(report.usersScored, users.count)
        }
        report.decisions = decisions
        report.candidateRecall = Double(coverage.found) / Double(max(1, coverage.relevant))
        return report
    }

    /// Candidates in score order (ties: the earlier item).
    func ranking(_ candidates: [Int], _ scores: [Double]) -> [Int] {
        candidates.indices.sorted { (scores[$0], candidates[$1]) > (scores[$1], candidates[$0]) }.map { candidates[$0] }
    }

    func add(_ acc: inout [String: [Int: [Double]]], _ method: String, _ pair: TestPair, _ ranked: [Int]) {
        let relevant = Set(pair.relevant.map { String($0) })
        let list = ranked.prefix(k).map { String($0) }
        let m = [
            Metrics.precision(list, relevant: relevant, k: k), Metrics.recall(list, relevant: relevant, k: k),
            Metrics.ndcg(list, relevant: relevant, k: k), Metrics.averagePrecision(list, relevant: relevant, k: k), 1
        ]
        var v = acc[method, default: [:]][pair.user] ?? [Double](repeating: 0, count: 5)
        for i in 0..<5 { v[i] += m[i] }
        acc[method, default: [:]][pair.user] = v
    }

    /// The item-kNN settings of best NDCG on one inner split of the training part.
    func tuneKNN(_ c: Coded, train: [Int]) -> ItemKNNBaseline.Settings {
        tune(c, train: train, grid: ItemKNNBaseline.grid) { ItemKNNBaseline($0, $1) }
    }

    /// The ALS settings of best NDCG on one inner split of the training part.
    func tuneALS(_ c: Coded, train: [Int]) -> ALSBaseline.Settings {
        tune(c, train: train, grid: ALSBaseline.grid) { ALSBaseline($0, $1, seed: seed) }
    }

    func tune<S>(_ c: Coded, train: [Int], grid: [S], make: (RatingsTraining, S) -> any RatingsBaseline) -> S {
        var order = train
        var rng = SeededGenerator(seed: seed, user: "ratings-tune", counter: Int64(train.count))
        order.shuffle(using: &rng)
        let held = Set(order.enumerated().filter { $0.offset % 5 == 0 }.map(\.element))
        let rest = train.filter { !held.contains($0) }
        let t = RatingsTraining(
            users: c.users.count, items: c.items.count,
            rows: rest.map { r in (c.userCode[c.data.rows[r].user]!, c.itemCode[c.data.rows[r].item]!, c.data.rows[r].rating, c.contextCode[r]) })
        let candidates = Array(Set(t.rows.map(\.item))).sorted()
        let queries = pairs(c, train: rest, test: held.sorted())
        var best: (score: Double, settings: S)?
        for settings in grid {
            let b = make(t, settings)
            var acc: [String: [Int: [Double]]] = [:]
            for pair in queries {
                let allowed = candidates.filter { !pair.excluded.contains($0) }
                let all = b.scores(user: pair.user, context: pair.context)
                add(&acc, "b", pair, ranking(allowed, allowed.map { all[$0] }))
            }
            let users = acc["b"] ?? [:]
            let score = users.values.reduce(0.0) { $0 + $1[2] / $1[4] } / Double(max(1, users.count))
            if best == nil || score > best!.score + 1e-12 { best = (score, settings) }
        }
        return best!.settings
    }
}

/// What `soundtrack eval ratings` reports.
public struct RatingsReport: Sendable {
    /// The engine's rows: with the models' blend, and with the blend learned from the training log.
    public static let engineNames = ["engine_shipped", "engine_learned"]
    /// The baselines, in report order.
    public static let baselineNames = ["popularity", "own_most_liked", "context_popularity", "item_knn", "als"]
    /// Folds, seed and list length.
    public var folds: Int
    public var seed: UInt64
    public var k: Int
    /// Ratings, users, items and context columns of the data set.
    public var counts: (ratings: Int, users: Int, items: Int, columns: [String]) = (0, 0, 0, [])
    /// Per method: precision, recall, NDCG and MAP at k.
    public var metrics: [String: [Double]] = [:]
    /// Users with at least one scored pair.
    public var usersScored = 0
    /// What learning the blend found in each fold (`nil`: too few queries for a refit to be due).
    public var decisions: [BlendLearner.Decision?] = []
    /// How the engine ran: `in memory` or `through a database`.
    public var path = "in memory"
    /// The order of the training logs (``RatingsEvaluator/LogOrder``).
    public var logOrder = "file"
    /// The share of the test pairs' relevant items that the engine's picks with the learned blend
    /// list at all (the ``InProcessRatingsRun/top`` tracks of the pick, among the candidates).
    public var candidateRecall = 0.0

    /// Creates an empty report.
    public init(folds: Int, seed: UInt64, k: Int) {
        self.folds = folds
        self.seed = seed
        self.k = k
    }

    /// The baseline of the highest NDCG among `names`, and the lead of engine row `engine` over
    /// it (absolute, relative).
    public func lead(of engine: String, over names: [String] = baselineNames) -> (baseline: String, absolute: Double, relative: Double)? {
        guard let e = metrics[engine]?[2],
            let best = names.compactMap({ n in metrics[n].map { (n, $0[2]) } }).max(by: { $0.1 < $1.1 })
        else { return nil }
        return (best.0, e - best.1, best.1 > 0 ? (e - best.1) / best.1 : 0)
    }

    /// The report as a table.
    public func table() -> [String] {
        func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
        func lpad(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }
        var out = [
            "soundtrack eval ratings — \(folds)-fold cross-validation, seed \(seed), k = \(k), the engine run \(path), logs in \(logOrder) order",
            "ratings \(counts.ratings) · users \(counts.users) (\(usersScored) scored) · items \(counts.items) · context columns \(counts.columns.joined(separator: ", "))",
            "",
            pad("ranking", 22) + ["P@\(k)", "R@\(k)", "NDCG@\(k)", "MAP@\(k)"].map { lpad($0, 10) }.joined()
        ]
        for m in Self.engineNames + Self.baselineNames {
            guard let v = metrics[m] else { continue }
            out.append(pad(m, 22) + v.map { lpad(String(format: "%.4f", $0), 10) }.joined())
        }
        out.append("")
        out.append("engine_shipped: the models' blend, as a fresh database ranks; engine_learned: the blend the database learned from the")
        out.append("training log (replay's refit), where one was due and beat the models' on the log's newest queries, else the same")
        out.append(String(format: "relevant items in engine_learned's lists at all (its first 100 candidates): %.1f%%", candidateRecall * 100))
        let promoted = decisions.filter { $0?.promoted == true }.count
        out.append("blend learned and promoted in \(promoted) of \(decisions.count) folds")
        for (name, against) in [("engine_learned", Self.baselineNames), ("engine_shipped", ["popularity", "own_most_liked"])] {
            if let lead = lead(of: name, over: against) {
                out.append(
                    String(
                        format: "%@ vs the best of %@ (%@) on NDCG@%d: %+.4f (%+.1f%%)", name, against == Self.baselineNames ? "the baselines" : "popularity and own history",
                        lead.baseline, k, lead.absolute, lead.relative * 100))
            }
        }
        return out
    }

    /// The report as JSON (numbers rounded to 4 decimals).
    public func json() -> JSONValue {
        func r(_ x: Double) -> JSONValue { .number((x * 10_000).rounded() / 10_000) }
        func m(_ v: [Double]) -> JSONValue {
            .object([("precision_at_k", r(v[0])), ("recall_at_k", r(v[1])), ("ndcg_at_k", r(v[2])), ("map_at_k", r(v[3]))])
        }
        var pairs: [(String, JSONValue)] = [
            (
                "protocol",
                .object([
                    ("folds", .number(Double(folds))), ("seed", .number(Double(seed))), ("k", .number(Double(k))), ("path", .string(path)),
                    ("log_order", .string(logOrder))
                ])
            ),
            (
                "counts",
                .object([
                    ("ratings", .number(Double(counts.ratings))), ("users", .number(Double(counts.users))),
                    ("users_scored", .number(Double(usersScored))), ("items", .number(Double(counts.items))),
                    ("context_columns", .array(counts.columns.map { .string($0) }))
                ])
            )
        ]
        for name in Self.engineNames { pairs.append((name, metrics[name].map(m) ?? .null)) }
        pairs.append(("candidate_recall", r(candidateRecall)))
        pairs.append(("baselines", .object(Self.baselineNames.compactMap { n in metrics[n].map { (n, m($0)) } })))
        for name in Self.engineNames {
            if let lead = lead(of: name) {
                pairs.append(
                    (
                        "lead_\(name)",
                        .object([("baseline", .string(lead.baseline)), ("absolute", r(lead.absolute)), ("relative", r(lead.relative))])
                    ))
            }
        }
        pairs.append(
            (
                "blend_per_fold",
                .array(
                    decisions.map { d in
                        guard let d else { return .null }
                        var o: [(String, JSONValue)] = [
                            ("promoted", .bool(d.promoted)), ("training_queries", .number(Double(d.training))),
                            ("validation_queries", .number(Double(d.validation))), ("ndcg", r(d.ndcg)), ("current_ndcg", r(d.currentNDCG))
                        ]
                        if let c = d.candidate { o.append(("weights", .object(zip(RankerModel.signals, c.weights).map { ($0, r(Double($1))) }))) }
                        return .object(o)
                    })
            ))
        return .object(pairs)
    }
}
