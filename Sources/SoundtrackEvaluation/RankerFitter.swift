import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

/// `soundtrack fit`: fits the blend of the track ranker (`Models/ranker.v1.json`) on a labelled
/// feedback log, seeded, by the protocol of `soundtrack eval` (docs/evaluation.md, "Fitting the
/// blend").
///
/// The log is split as `eval` splits it (`protocol`, `folds`, `seed`). For every split the engine
/// learns the training events into fresh states and a fresh community; every liked test event is a
/// query: its candidates are what the engine would rank for the event's snapshot
/// (``Recommender/pick(_:state:top:pickId:)``'s candidates) plus the tracks the user liked in the
/// event's test session, which are the relevant ones; each candidate's signals come from
/// ``Recommender/rankTracks(_:binIndex:similarities:state:rows:)`` on a copy of the user's state.
/// ``PairwiseFit`` then fits the weights, the splits being its groups for choosing the L2 strength
/// (with one split, the chronological protocol, its queries are dealt by person into 5 groups).
/// At most `maxQueries` queries a split are used (every n-th, deterministic).
public struct RankerFitter: Sendable {
    /// The engine whose signals are blended.
    public let engine: Recommender
    /// The cut-off of the NDCG that chooses the L2 strength.
    public let k: Int
    /// Queries used per split at most.
    public let maxQueries: Int

    /// Creates a fitter.
    public init(engine: Recommender, k: Int = 10, maxQueries: Int = 3000) {
        self.engine = engine
        self.k = k
        self.maxQueries = maxQueries
    }

    /// What a fit found.
    public struct Result: Sendable {
        /// The fitted model.
        public var model: RankerModel
        /// The L2 strength chosen.
        public var lambda: Double
        /// Queries used (all splits).
        public var queries: Int
        /// NDCG@k of the fitted weights and of the starting model's on the same queries (in-sample).
        public var ndcg: (fitted: Double, start: Double)
    }

    /// Fits the blend on a log.
    /// - Throws: ``InputError`` from the engine for an event it cannot apply (with its line).
    public func fit(_ log: LabelledLog, protocol p: SplitProtocol, folds: Int, seed: UInt64, source: String) throws(InputError) -> Result {
        let index = engine.catalog.index()
        var groups: [[PairwiseFit.Query]] = []
        for split in Splitter.splits(log, protocol: p, folds: folds, seed: seed) {
            let engine = self.engine.with(community: SharedCommunity())
            var states: [String: UserState] = [:]
            for i in split.train {
                let e = log.entries[i].event
                do {
                    _ = try engine.feedback(e, pick: nil, state: &states[e.user, default: engine.newUser(e.user)])
                } catch {
                    throw error.at(line: log.entries[i].line)
                }
            }
            for user in states.keys { engine.prepare(&states[user]!) }
            // Liked tracks per test session of each user (sessions as eval groups them).
            let test = split.test
            var likedBySession: [Int: Set<Int>] = [:]
            var sessionOf: [Int: Int] = [:]
            var lastAt: [String: (Date, Int)] = [:]
            var sessionCount = 0
            for i in test {
                let e = log.entries[i].event
                let session: Int
                if let (t, s) = lastAt[e.user], e.at.date.timeIntervalSince(t) <= engine.config.sessionTimeout {
                    session = s
                } else {
                    session = sessionCount
                    sessionCount += 1
                }
                lastAt[e.user] = (e.at.date, session)
                sessionOf[i] = session
                if e.isLike, let row = index.row(of: e.track) { likedBySession[session, default: []].insert(row) }
            }
            let liked = test.filter { log.entries[$0].event.isLike }
            let stride = max(1, liked.count / max(1, maxQueries))
            var queries: [PairwiseFit.Query] = []
            for (n, i) in liked.enumerated() where n % stride == 0 {
                let e = log.entries[i].event
                guard let relevant = likedBySession[sessionOf[i]!], let snapshot = e.snapshot else { continue }
                var state = states[e.user] ?? engine.newUser(e.user)
                state.pickCounter = Int64(i)
                let (_, record) = engine.pick(snapshot, state: &state, top: 1)
                guard let bin = state.binIndex(number: record.binNumber) else { continue }
                var rng = SeededGenerator(seed: seed, user: e.user, counter: Int64(i))
                var rows = engine.candidateRows(binIndex: bin, state: &state, index: index, rng: &rng)
                let have = Set(rows)
                rows += relevant.filter { !have.contains($0) }.sorted()
                let similarities = engine.binSimilarities(record.features, state: &state)
                let ranked = engine.rankTracks(record.features, binIndex: bin, similarities: similarities, state: &state, rows: rows)
                queries.append(
                    PairwiseFit.Query(
                        user: e.user, features: ranked.map(\.signals), relevant: ranked.map { relevant.contains($0.row) }))
            }
            groups.append(queries)
        }
        if groups.count == 1, groups[0].count >= 10 {
            // One split (the chronological protocol): its queries are dealt by person into 5 groups
            // (a seeded shuffle of the people), so that λ is still chosen by cross-validation.
            var people = Array(Set(groups[0].map(\.user))).sorted()
            var rng = SeededGenerator(seed: seed, user: "fit-groups", counter: 0)
            people.shuffle(using: &rng)
            let groupOf = Dictionary(uniqueKeysWithValues: people.enumerated().map { ($1, $0 % 5) })
            var dealt = [[PairwiseFit.Query]](repeating: [], count: min(5, people.count))
            for q in groups[0] { dealt[groupOf[q.user]!].append(q) }
            groups = dealt.filter { !$0.isEmpty }
        }
        let (w, lambda) = PairwiseFit.fit(groups: groups, k: k)
        let all = groups.flatMap { $0 }
        let fitted = w.count == RankerModel.signals.count ? w : engine.ranker.weights
        return Result(
            model: RankerModel(weights: fitted, source: source), lambda: lambda, queries: all.count,
            ndcg: (PairwiseFit.ndcg(all, fitted.map(Double.init), k: k), PairwiseFit.ndcg(all, engine.ranker.weights.map(Double.init), k: k)))
    }
}
