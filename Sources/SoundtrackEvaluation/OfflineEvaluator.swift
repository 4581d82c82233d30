import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

/// `soundtrack eval` on a labelled log: split, train by replay, rank for every test event, score.
///
/// For each split, every user starts from a fresh in-memory ``UserState``; the training events are
/// replayed in log order through ``Recommender/feedback(_:pick:state:position:)`` (no picks: each
/// event's embedded snapshot is its context; the liked ones teach the blend its queries), and the
/// baselines count them. The engine is measured with the models' blend and with the blend it
/// learns from the training part as `replay` would (``EvaluationReport/engineLearned``). Then, for each test event, the
/// engine picks `k` tracks for the event's snapshot on a copy of the user's state, so test events
/// never change what the engine knows; the baselines rank from their counts.
///
/// ```swift
/// let report = OfflineEvaluator(engine: engine, k: 10).evaluate(log, protocol: .chronological, folds: 4, seed: 42)
/// print(report.table().joined(separator: "\n"))
/// ```
public struct OfflineEvaluator: Sendable {
    /// The engine under test (its catalog is also the baselines').
    public let engine: Recommender
    /// The length of every ranking.
    public let k: Int

    /// Creates an evaluator.
    public init(engine: Recommender, k: Int) {
        self.engine = engine
        self.k = k
    }

    /// Sums of per-query and per-session values of one recommender.
    struct Accumulator {
        var binHits = 0.0, precision = 0.0, recall = 0.0, ndcg = 0.0, map = 0.0, queries = 0
        var auc = 0.0, aucSessions = 0
        var liked = 0.0, asked = 0
        var switches = 0.0, sessions = 0

        func metrics(bins: Bool) -> MetricSet {
            var m = MetricSet()
            let q = Double(max(queries, 1))
            if bins { m.binHitRate = queries > 0 ? binHits / q : nil }
            if queries > 0 {
                m.precision = precision / q
                m.recall = recall / q
                m.ndcg = ndcg / q
                m.map = map / q
            }
            m.auc = aucSessions > 0 ? auc / Double(aucSessions) : nil
            m.likeRate = asked > 0 ? liked / Double(asked) : nil
            if bins { m.binSwitchesPerSession = sessions > 0 ? switches / Double(sessions) : nil }
            return m
        }
    }

    /// What one recommender answered for one test event.
    struct Answer {
        var ranked: [String]
        var score: Double
        var bin: Int?
        var binHit = false
    }

    /// Evaluates the engine and the baselines on a log.
    /// - Parameters:
    ///   - log: the labelled log (its tracks in the engine's catalog).
    ///   - protocol: how to split it.
    ///   - folds: folds (random) or inverse test share (chronological); ≥ 2.
    ///   - seed: the split's seed, also the random baseline's.
    public func evaluate(_ log: LabelledLog, protocol p: SplitProtocol, folds: Int, seed: UInt64) -> EvaluationReport {
        var report = EvaluationReport(split: p.rawValue, folds: folds, seed: seed, k: k)
        report.counts.users = log.users.count
        report.counts.events = log.entries.count
        let index = engine.catalog.index()
        var engineAcc = Accumulator()
        var learnedAcc = Accumulator()
        var promoted = 0
        var baseAcc = [Accumulator](repeating: Accumulator(), count: BaselineKind.allCases.count)
        let splits = Splitter.splits(log, protocol: p, folds: folds, seed: seed)
        var binsTotal = 0.0
        for split in splits {
            report.counts.trainEvents += split.train.count
            report.counts.testEvents += split.test.count
            // Train: fresh states and a fresh community per split.
            let engine = self.engine.with(community: SharedCommunity())
            var states: [String: UserState] = [:]
            var base = BaselineModel(catalog: index, seed: seed)
            var examples: [BlendExample] = []
            for (position, i) in split.train.enumerated() {
                let entry = log.entries[i]
                let e = entry.event
                // A parsed log's events have a snapshot and a track of the catalog (LabelledLog.parse).
                let taught = engine.feedback(e, pick: nil, state: &states[e.user, default: engine.newUser(e.user)], position: Int64(position + 1))
                if let example = taught.example { examples.append(example) }
                base.learn(user: e.user, track: e.track, positive: e.isLike, context: BaselineModel.attributes(of: e.snapshot!))
            }
            base.refresh()
            for user in states.keys { engine.prepare(&states[user]!) }
            // The blend the deployment would learn from the training part, as replay does at its end.
            let learned = ReplayEndBlend.learn(engine, examples: examples)
            let learnedPromoted = learned.decision?.promoted == true
            if learnedPromoted { promoted += 1 }
            binsTotal += Double(states.values.reduce(0) { $0 + $1.bins.count })

            // Test, session by session.
            for session in testSessions(log, split.test) {
                report.counts.sessions += 1
                let liked = Set(session.filter { log.entries[$0].event.isLike }.map { log.entries[$0].event.track })
                var engineAnswers: [Answer] = []
                var learnedAnswers: [Answer] = []
                var baseAnswers = [[Answer]](repeating: [], count: BaselineKind.allCases.count)
                for i in session {
                    let entry = log.entries[i]
                    let e = entry.event
                    let answer = engineAnswer(e, query: i, engine: engine, state: states[e.user] ?? engine.newUser(e.user))
                    engineAnswers.append(answer)
                    learnedAnswers.append(
                        learnedPromoted ? engineAnswer(e, query: i, engine: learned.engine, state: states[e.user] ?? engine.newUser(e.user)) : answer)
                    let context = BaselineModel.attributes(of: e.snapshot!)
                    for (b, kind) in BaselineKind.allCases.enumerated() {
                        let salt = UInt64(i)
                        baseAnswers[b].append(
                            Answer(
                                ranked: base.rank(kind, user: e.user, k: k, salt: salt, context: context),
                                score: base.scores(kind, user: e.user, tracks: [e.track], salt: salt, context: context)[0]))
                    }
                }
                score(session, answers: engineAnswers, liked: liked, log: log, into: &engineAcc)
                score(session, answers: learnedAnswers, liked: liked, log: log, into: &learnedAcc)
                for b in baseAcc.indices { score(session, answers: baseAnswers[b], liked: liked, log: log, into: &baseAcc[b]) }
            }
        }
        report.counts.queries = engineAcc.queries
        report.counts.bins = splits.isEmpty ? 0 : binsTotal / Double(splits.count)
        report.engine = engineAcc.metrics(bins: true)
        report.engineLearned = learnedAcc.metrics(bins: true)
        report.blendsPromoted = (promoted, splits.count)
        report.baselines = BaselineKind.allCases.enumerated().map { ($1, baseAcc[$0].metrics(bins: false)) }
        return report
    }

    /// The engine's answer to a test event, on a copy of the user's state (read-only).
    func engineAnswer(_ e: FeedbackEvent, query: Int, engine: Recommender, state: UserState) -> Answer {
        var copy = state
        copy.pickCounter = Int64(query)
        let (pick, record) = engine.pick(e.snapshot!, state: &copy, top: k)
        // The score of the event's own track: the ranker's blended score in this context.
        var best = -Double.infinity
        if let row = engine.catalog.index().row(of: e.track) {
            let similarities = engine.binSimilarities(record.features, state: &copy)
            let scored = engine.rankTracks(
                record.features, binIndex: copy.binIndex(number: record.binNumber), similarities: similarities, state: &copy, rows: [row])
            best = Double(scored.first?.score ?? 0)
        }
        let chosen = copy.binIndex(number: record.binNumber).map { copy.bins[$0] }
        return Answer(
            ranked: pick.ranked.map(\.id), score: best, bin: record.binNumber,
            binHit: chosen?.songIndex(e.track) != nil)
    }

    /// Adds one session's answers to the sums.
    func score(_ session: [Int], answers: [Answer], liked: Set<String>, log: LabelledLog, into acc: inout Accumulator) {
        var pos: [Double] = [], neg: [Double] = []
        for (j, i) in session.enumerated() {
            let e = log.entries[i].event
            let a = answers[j]
            acc.asked += 1
            if let first = a.ranked.first, liked.contains(first) { acc.liked += 1 }
            if e.isLike {
                acc.queries += 1
                acc.precision += Metrics.precision(a.ranked, relevant: liked, k: k)
                acc.recall += Metrics.recall(a.ranked, relevant: liked, k: k)
                acc.ndcg += Metrics.ndcg(a.ranked, relevant: liked, k: k)
                acc.map += Metrics.averagePrecision(a.ranked, relevant: liked, k: k)
                if a.binHit { acc.binHits += 1 }
                pos.append(a.score)
            } else {
                neg.append(a.score)
            }
        }
        if let auc = Metrics.auc(positives: pos, negatives: neg) {
            acc.auc += auc
            acc.aucSessions += 1
        }
        acc.sessions += 1
        for j in answers.indices.dropFirst() where answers[j].bin != answers[j - 1].bin { acc.switches += 1 }
    }

    /// Test events grouped into sessions: consecutive test events of one user whose gaps are within
    /// the engine's session timeout. Sessions in order of their first event.
    func testSessions(_ log: LabelledLog, _ test: [Int]) -> [[Int]] {
        var open: [String: Int] = [:]
        var sessions: [[Int]] = []
        for i in test {
            let e = log.entries[i].event
            if let s = open[e.user], let last = sessions[s].last,
                e.at.date.timeIntervalSince(log.entries[last].event.at.date) <= engine.config.sessionTimeout
            {
                sessions[s].append(i)
            } else {
                open[e.user] = sessions.count
                sessions.append([i])
            }
        }
        return sessions
    }
}
