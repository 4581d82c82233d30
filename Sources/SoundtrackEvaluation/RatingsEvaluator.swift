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
/// The engine learns the training ratings as `rate` feedback events whose snapshots come from the
/// rows' contexts (``RatingsContext``), in file order, into fresh per-user states and a fresh
/// ``Community``; a test pair is asked as a snapshot of its context, and the engine ranks the
/// candidates (``Recommender/rankTracks(_:binIndex:similarities:state:rows:)``) on a copy of the
/// user's state. With `fit` (the default) the blend's weights are fitted on the training part alone:
/// its rows are dealt into 5 inner folds, the engine learns four and is asked the fifth's pairs, and
/// ``PairwiseFit`` fits the weights on those queries.
public struct RatingsEvaluator: Sendable {
    /// The engine: its configuration, priors and (unless fitting) ranker.
    public let engine: Recommender
    /// Folds of the cross-validation.
    public let folds: Int
    /// Seed of the folds and of the seeded baselines.
    public let seed: UInt64
    /// The length of the scored lists.
    public let k: Int
    /// Whether the blend is fitted per fold on the training part (else the engine's ranker is used).
    public let fit: Bool

    /// Creates an evaluator.
    public init(engine: Recommender, folds: Int = 5, seed: UInt64 = 1, k: Int = 10, fit: Bool = true) {
        self.engine = engine
        self.folds = folds
        self.seed = seed
        self.k = k
        self.fit = fit
    }

    /// The data set coded: items in order of first appearance (their catalog rows), users, context tuples.
    struct Coded {
        var data: ContextualRatings
        var items: [String]
        var itemCode: [String: Int]
        var users: [String]
        var userCode: [String: Int]
        var contextCode: [Int]
        var catalog: CatalogIndex
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
        let tracks = items.map { Track(id: $0, title: $0, artist: "", genres: itemCategories[$0] ?? []) }
        return Coded(
            data: data, items: items, itemCode: itemCode, users: users, userCode: userCode, contextCode: contextCode,
            catalog: CatalogIndex(tracks: tracks), mapping: RatingsContext(columns: data.columns))
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

    /// The engine after learning `rows` of the data set: per-user states and the community.
    func learn(_ c: Coded, rows: [Int], ranker: RankerModel) throws(InputError) -> (Recommender, [Int: UserState]) {
        let engine = self.engine.with(catalog: IndexCatalog(c.catalog)).with(community: SharedCommunity()).with(ranker: ranker)
        var states: [Int: UserState] = [:]
        for r in rows {
            let row = c.data.rows[r]
            let u = c.userCode[row.user]!
            let snapshot = c.mapping.snapshot(row.context, user: row.user, ordinal: r)
            let event = FeedbackEvent(
                id: "r\(row.line)", user: row.user, at: snapshot.at, track: row.item, signal: .rate,
                rating: Int(row.rating.rounded()), snapshot: snapshot)
            do {
                _ = try engine.feedback(event, pick: nil, state: &states[u, default: engine.newUser(row.user)])
            } catch {
                throw error.at(line: row.line)
            }
            states[u]!.changes = UserState.Changes()
        }
        return (engine, states)
    }

    /// The engine's signals for every candidate of a pair (on a copy of the user's state).
    func signals(_ c: Coded, engine: Recommender, states: [Int: UserState], pair: TestPair, candidates: [Int]) -> [Int: [Float]] {
        let row = c.data.rows[pair.row]
        var state = states[pair.user] ?? engine.newUser(row.user)
        let snapshot = c.mapping.snapshot(row.context, user: row.user, ordinal: pair.row)
        let x = engine.features(of: snapshot, state: &state)
        let similarities = engine.binSimilarities(x, state: &state)
        let best = similarities.indices.max { (similarities[$0], $1) < (similarities[$1], $0) }
        let ranked = engine.rankTracks(x, binIndex: best, similarities: similarities, state: &state, rows: candidates)
        var out: [Int: [Float]] = [:]
        for t in ranked { out[t.row] = t.signals }
        return out
    }

    /// Fits the blend on a training part by inner cross-validation.
    func fitBlend(_ c: Coded, train: [Int]) throws(InputError) -> RankerModel {
        let inner = 5
        var order = train
        var rng = SeededGenerator(seed: seed, user: "ratings-inner", counter: Int64(train.count))
        order.shuffle(using: &rng)
        var parts = [[Int]](repeating: [], count: inner)
        for (p, r) in order.enumerated() { parts[p % inner].append(r) }
        var groups: [[PairwiseFit.Query]] = []
        for p in 0..<inner {
            let held = parts[p].sorted()
            let rest = parts.indices.filter { $0 != p }.flatMap { parts[$0] }.sorted()
            let (engine, states) = try learn(c, rows: rest, ranker: self.engine.ranker)
            let candidates = Array(Set(rest.map { c.itemCode[c.data.rows[$0].item]! })).sorted()
            var queries: [PairwiseFit.Query] = []
            for pair in pairs(c, train: rest, test: held) {
                let allowed = candidates.filter { !pair.excluded.contains($0) }
                let s = signals(c, engine: engine, states: states, pair: pair, candidates: allowed)
                queries.append(
                    PairwiseFit.Query(
                        user: c.users[pair.user], features: allowed.map { s[$0]! }, relevant: allowed.map { pair.relevant.contains($0) }))
            }
            groups.append(queries)
        }
        let (w, lambda) = PairwiseFit.fit(groups: groups, k: k)
        guard w.count == RankerModel.signals.count else { return engine.ranker }
        return RankerModel(weights: w, source: "fitted on the training part, inner 5-fold, λ \(lambda)")
    }

    /// Runs the protocol for the engine and every baseline.
    /// - Parameter itemCategories: each item's categories (genres), if the data set has them.
    /// - Throws: ``InputError`` from the engine for a row it cannot learn (with its line).
    public func evaluate(_ data: ContextualRatings, itemCategories: [String: [String]] = [:]) throws(InputError) -> RatingsReport {
        let c = code(data, itemCategories: itemCategories)
        let methods = ["engine"] + RatingsReport.baselineNames
        var perUser = [String: [Int: [Double]]]()  // method → user → summed metrics (4) + count
        var fitted: [RankerModel] = []
        for testRows in foldRows(data.rows.count) {
            let testSet = Set(testRows)
            let train = (0..<data.rows.count).filter { !testSet.contains($0) }
            let training = RatingsTraining(
                users: c.users.count, items: c.items.count,
                rows: train.map { r in
                    (c.userCode[data.rows[r].user]!, c.itemCode[data.rows[r].item]!, data.rows[r].rating, c.contextCode[r])
                })
            let ranker = fit ? try fitBlend(c, train: train) : engine.ranker
            fitted.append(ranker)
            let (engine, states) = try learn(c, rows: train, ranker: ranker)
            let candidates = Array(Set(training.rows.map(\.item))).sorted()
            var baselines: [(String, any RatingsBaseline)] = [
                ("popularity", PopularityBaseline(training)),
                ("own_most_liked", OwnMostLikedBaseline(training)),
                ("context_popularity", ContextPopularityBaseline(training))
            ]
            baselines.append(("item_knn", ItemKNNBaseline(training, tuneKNN(c, train: train))))
            baselines.append(("als", ALSBaseline(training, tuneALS(c, train: train), seed: seed)))
            for pair in pairs(c, train: train, test: testRows) {
                let allowed = candidates.filter { !pair.excluded.contains($0) }
                let s = signals(c, engine: engine, states: states, pair: pair, candidates: allowed)
                let engineScores = allowed.map { row in zip(ranker.weights, s[row]!).reduce(0.0) { $0 + Double($1.0 * $1.1) } }
                add(&perUser, "engine", pair, ranking(allowed, engineScores))
                for (name, b) in baselines {
                    let all = b.scores(user: pair.user, context: pair.context)
                    add(&perUser, name, pair, ranking(allowed, allowed.map { all[$0] }))
                }
            }
        }
        var report = RatingsReport(folds: folds, seed: seed, k: k)
        report.counts = (data.rows.count, c.users.count, c.items.count, data.columns)
        for m in methods {
            let users = perUser[m] ?? [:]
            var sums = [Double](repeating: 0, count: 4)
            for (_, v) in users { for i in 0..<4 { sums[i] += v[i] / v[4] } }
            let n = Double(max(users.count, 1))
            report.metrics[m] = sums.map { $0 / n }
            report.usersScored = users.count
        }
        report.fitted = fitted
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
    /// The blend used in each fold.
    public var fitted: [RankerModel] = []

    /// Creates an empty report.
    public init(folds: Int, seed: UInt64, k: Int) {
        self.folds = folds
        self.seed = seed
        self.k = k
    }

    /// The baseline of the highest NDCG, and the engine's lead over it (absolute, relative).
    public var lead: (baseline: String, absolute: Double, relative: Double)? {
        guard let e = metrics["engine"]?[2],
            let best = Self.baselineNames.compactMap({ n in metrics[n].map { (n, $0[2]) } }).max(by: { $0.1 < $1.1 })
        else { return nil }
        return (best.0, e - best.1, best.1 > 0 ? (e - best.1) / best.1 : 0)
    }

    /// The report as a table.
    public func table() -> [String] {
        func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
        func lpad(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }
        var out = [
            "soundtrack eval ratings — \(folds)-fold cross-validation, seed \(seed), k = \(k)",
            "ratings \(counts.ratings) · users \(counts.users) (\(usersScored) scored) · items \(counts.items) · context columns \(counts.columns.joined(separator: ", "))",
            "",
            pad("ranking", 22) + ["P@\(k)", "R@\(k)", "NDCG@\(k)", "MAP@\(k)"].map { lpad($0, 10) }.joined()
        ]
        for m in ["engine"] + Self.baselineNames {
            guard let v = metrics[m] else { continue }
            out.append(pad(m, 22) + v.map { lpad(String(format: "%.4f", $0), 10) }.joined())
        }
        if let lead {
            out.append("")
            out.append(String(format: "engine vs the best baseline (%@) on NDCG@%d: %+.4f (%+.1f%%)", lead.baseline, k, lead.absolute, lead.relative * 100))
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
            ("protocol", .object([("folds", .number(Double(folds))), ("seed", .number(Double(seed))), ("k", .number(Double(k)))])),
            (
                "counts",
                .object([
                    ("ratings", .number(Double(counts.ratings))), ("users", .number(Double(counts.users))),
                    ("users_scored", .number(Double(usersScored))), ("items", .number(Double(counts.items))),
                    ("context_columns", .array(counts.columns.map { .string($0) }))
                ])
            ),
            ("engine", metrics["engine"].map(m) ?? .null),
            ("baselines", .object(Self.baselineNames.compactMap { n in metrics[n].map { (n, m($0)) } }))
        ]
        if let lead {
            pairs.append(
                (
                    "lead",
                    .object([
                        ("baseline", .string(lead.baseline)), ("absolute", r(lead.absolute)), ("relative", r(lead.relative))
                    ])
                ))
        }
        pairs.append(
            (
                "fitted_weights",
                .array(
                    fitted.map { f in
                        .object(zip(RankerModel.signals, f.weights).map { ($0, r(Double($1))) })
                    })
            ))
        return .object(pairs)
    }
}
