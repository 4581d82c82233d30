import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import Testing

@testable import SoundtrackEvaluation

/// `eval bins` and `eval ratings` on tiny files whose answers are worked out by hand.
@Suite("eval bins and eval ratings")
struct BinAndRatingsEvalTests {
    @Test("Purity, NMI and AMI match hand and scikit-learn values")
    func clusteringMetrics() {
        // Classes 0,0,0 | 1,1,1 | 2,2,2,2 against clusters 0,0 | 1,1,1 | 2,2,2 | 3,3.
        let truth = [0, 0, 0, 1, 1, 1, 2, 2, 2, 2], clusters = [0, 0, 1, 1, 1, 2, 2, 2, 3, 3]
        let pairs = Array(zip(clusters, truth))
        // Majorities: cluster 0 → 2 of class 0, 1 → 2 of class 1, 2 → 2 of class 2, 3 → 2: 8 / 10.
        #expect(abs(Metrics.purity(pairs) - 0.8) < 1e-12)
        // sklearn.metrics.normalized_mutual_info_score / adjusted_mutual_info_score (arithmetic).
        #expect(abs(Metrics.nmiArithmetic(pairs) - 0.5759466679735675) < 1e-9)
        #expect(abs(Metrics.ami(pairs) - 0.3393713656092221) < 1e-9)
        // Identical partitions, relabelled: 1; one cluster against two classes: 0.
        #expect(abs(Metrics.ami(Array(zip(["x", "x", "y", "y"], [1, 1, 2, 2]))) - 1) < 1e-12)
        #expect(Metrics.ami(Array(zip([0, 0, 0, 0], [1, 1, 2, 2]))) == 0)
    }

    @Test("eval bins on two contexts of one person: the engine finds both, one bin is half right")
    func binsGolden() throws {
        let snapshots = try BinEvaluator.readSnapshots(Data(contentsOf: Repo.url("Tests/SoundtrackEvaluationTests/Fixtures/two-contexts.snapshots.jsonl")))
        let truth = try ContextTruth.parse(String(contentsOf: Repo.url("Tests/SoundtrackEvaluationTests/Fixtures/two-contexts.truth.csv"), encoding: .utf8))
        let evaluator = BinEvaluator(engine: Repo.engine(), seed: 1)
        let rows = try evaluator.learningPass(snapshots, truth: truth)
        #expect(rows.map(\.user) == ["p-1"])
        #expect(rows[0].contexts == [String](repeating: "exercise", count: 4) + [String](repeating: "sleeping", count: 4))
        let report = evaluator.evaluate(rows)
        let engine = try #require(report.summary["engine"])
        // Two bins, one per context: every snapshot in a bin of its own context.
        #expect(engine.binsPerUser == 2)
        #expect(engine.purity == 1 && abs(engine.ami - 1) < 1e-12 && abs(engine.nmi - 1) < 1e-12)
        #expect(report.dominated["engine"]!.map(\.1) == [1, 1])
        // One bin: 4 of 8 in the majority (ties go to the first context by name), no information.
        let one = try #require(report.summary["one_bin"])
        #expect(one.purity == 0.5 && one.ami == 0 && one.binsPerUser == 1)
        #expect(report.dominated["one_bin"]!.map(\.0) == ["exercise", "sleeping"])
        // k-means with the engine's k = 2 separates the two as well.
        #expect(report.summary["kmeans_features"]!.purity == 1)
        // The JSON carries the same figures.
        let json = report.json().serialized()
        #expect(json.contains("\"engine\""))
    }

    /// Seven ratings; rows 0-4 train, 5-6 test (user u2 in the context `sad`).
    static let ratings = """
        userid,itemid,rating,mood
        u1,i1,5,happy
        u1,i2,1,happy
        u1,i3,4,sad
        u2,i1,4,happy
        u3,i2,5,sad
        u2,i3,2,sad
        u2,i2,5,sad
        """

    @Test("eval ratings, the protocol by hand: test pairs, candidates, and every metric of three baselines")
    func ratingsByHand() throws {
        let data = try ContextualRatings.parse(Self.ratings)
        let evaluator = RatingsEvaluator(folds: 2, seed: 1, k: 10)
        let c = evaluator.code(data, itemCategories: [:])
        let train = [0, 1, 2, 3, 4], test = [5, 6]
        // One test pair: (u2, sad), relevant {i2} (rated 5; i3 rated 2 is not relevant), nothing
        // excluded (u2 rated nothing in `sad` in training).
        let pairs = evaluator.pairs(c, train: train, test: test)
        #expect(pairs.count == 1)
        let pair = try #require(pairs.first)
        #expect(c.users[pair.user] == "u2" && pair.relevant == [c.itemCode["i2"]!] && pair.excluded.isEmpty)
        let training = RatingsTraining(
            users: c.users.count, items: c.items.count,
            rows: train.map { r in (c.userCode[data.rows[r].user]!, c.itemCode[data.rows[r].item]!, data.rows[r].rating, c.contextCode[r]) })
        let candidates = [0, 1, 2]  // i1, i2, i3: every item of the training part
        func metrics(_ b: any RatingsBaseline) -> [Double] {
            let s = b.scores(user: pair.user, context: pair.context)
            var acc: [String: [Int: [Double]]] = [:]
            evaluator.add(&acc, "m", pair, evaluator.ranking(candidates, candidates.map { s[$0] }))
            return Array(acc["m"]![pair.user]!.prefix(4))
        }
        // Popularity (likes in training): i1 2, i2 1, i3 1, ties by rating count (i2 2, i3 1):
        // i1, i2, i3. The relevant i2 at rank 2: P@10 = 1/10, R@10 = 1, NDCG = 1/log2(3), MAP = 1/2.
        let atTwo = [0.1, 1, 1 / log2(3.0), 0.5]
        // Own most liked: u2's i1 (rated 4) first, then the unrated by popularity: i1, i2, i3.
        // Context popularity in `sad`: i3 1 like, i2 1 like, global popularity breaks the tie: i2, i3, i1.
        let atOne = [0.1, 1, 1, 1]
        for (got, want) in [
            (metrics(PopularityBaseline(training)), atTwo), (metrics(OwnMostLikedBaseline(training)), atTwo),
            (metrics(ContextPopularityBaseline(training)), atOne)
        ] {
            #expect(zip(got, want).allSatisfy { abs($0 - $1) < 1e-12 }, "\(got) vs \(want)")
        }
    }

    @Test("eval ratings end to end: every fold scored, figures in range, the same report from the same seed")
    func ratingsEndToEnd() throws {
        let data = try ContextualRatings.parse(Self.ratings)
        let evaluator = RatingsEvaluator(folds: 2, seed: 1, k: 10)
        let run = InProcessRatingsRun(engine: Repo.engine())
        let a = try evaluator.evaluate(data, run: run), b = try evaluator.evaluate(data, run: run)
        #expect(a.json() == b.json())
        #expect(a.counts.ratings == 7 && a.counts.users == 3 && a.counts.items == 3 && a.counts.columns == ["mood"])
        for m in RatingsReport.engineNames + RatingsReport.baselineNames {
            let v = try #require(a.metrics[m], "\(m)")
            #expect(v.count == 4 && v.allSatisfy { $0 >= 0 && $0 <= 1 }, "\(m): \(v)")
        }
        // Seven ratings teach far fewer queries than a refit needs: both engine rows are the models' blend.
        #expect(a.decisions.count == 2 && a.decisions.allSatisfy { $0 == nil })
        #expect(a.metrics["engine_shipped"] == a.metrics["engine_learned"])
    }

    @Test("eval ratings: a fold as the engine meets it: the training rows as a log of rate events with tags, a week apart per user, then one snapshot a test pair")
    func foldAsALog() throws {
        let data = try ContextualRatings.parse(Self.ratings)
        let evaluator = RatingsEvaluator(folds: 2, seed: 1, k: 10)
        let c = evaluator.code(data, itemCategories: [:])
        let pairs = evaluator.pairs(c, train: [0, 1, 2, 3, 4], test: [5, 6])
        let fold = evaluator.fold(c, train: [0, 1, 2, 3, 4], pairs: pairs)
        #expect(fold.events.map(\.id) == data.rows.prefix(5).map { "r\($0.line)" })
        #expect(fold.events.allSatisfy { $0.signal == .rate && $0.snapshot != nil })
        #expect(fold.events.map(\.rating) == data.rows.prefix(5).map { Int($0.rating) })
        // Each user's events one week apart, from Wednesday 3 January 2024 at noon (UTC).
        for user in Set(fold.events.map(\.user)) {
            let times = fold.events.filter { $0.user == user }.map { $0.at.date.timeIntervalSince1970 }
            #expect(times.first == 1_704_283_200)
            #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 == 7 * 86_400 })
        }
        #expect(fold.events[0].snapshot?.tags == data.rows[0].context[0].map { ["mood": $0.lowercased()] })
        #expect(fold.queries.count == 1 && fold.queries[0].user == "u2" && fold.queries[0].tags == ["mood": "sad"])
        #expect(fold.tracks.map(\.id) == c.items)
    }

    @Test("eval ratings --log-order time: the users' rows interleaved by their times, each user's in file order, ties in file order")
    func foldInTimeOrder() throws {
        let data = try ContextualRatings.parse(Self.ratings)
        let evaluator = RatingsEvaluator(folds: 2, seed: 1, k: 10, logOrder: .time)
        let c = evaluator.code(data, itemCategories: [:])
        let fold = evaluator.fold(c, train: [0, 1, 2, 3, 4, 5, 6], pairs: [])
        // Rows (user, n-th rating): 0 (u1, 1), 1 (u1, 2), 2 (u1, 3), 3 (u2, 1), 4 (u3, 1), 5 (u2, 2),
        // 6 (u2, 3). Every user's first rating, then every second, then every third.
        #expect(fold.events.map(\.id) == [0, 3, 4, 1, 5, 2, 6].map { "r\(data.rows[$0].line)" })
        #expect(zip(fold.events, fold.events.dropFirst()).allSatisfy { $0.at.date <= $1.at.date })
        let inFileOrder = RatingsEvaluator(folds: 2, seed: 1, k: 10).fold(c, train: [0, 1, 2, 3, 4, 5, 6], pairs: [])
        #expect(inFileOrder.events.map(\.id) == data.rows.map { "r\($0.line)" })
        let report = try evaluator.evaluate(data, run: InProcessRatingsRun(engine: Repo.engine()))
        #expect(report.logOrder == "time" && report.json().serialized().contains("\"log_order\":\"time\""))
    }
}
