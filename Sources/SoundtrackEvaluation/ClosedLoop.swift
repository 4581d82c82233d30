import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

/// The state of ``OnlineEvaluator``'s closed loop while it plays the slots: the engine and the
/// people's states, the baselines, and what is counted for the report. ``play(_:)`` takes one slot:
/// the engine's pick and its answer, then each baseline's.
struct ClosedLoop {
    let population: Population
    let k: Int
    let kinds = BaselineKind.allCases
    let contexts = ContextLabel.allCases
    var engine: Recommender
    var states: [UserState]
    // The blend is learned again as `serve` learns it: every 500 new queries, promoted only if it wins.
    var examples: [BlendExample] = []
    var position: Int64 = 0, lastAttempt = 0
    var promoted = 0, splits = 0
    var base: [BaselineModel]
    var recent: [[[String]]]
    let window: Int
    var day = -1
    var relevance: Relevance
    var tally: Tally

    /// What is counted: likes and list gains (NDCG@k) per recommender (the engine first, then the
    /// baselines) by day and by context, the engine's bins against the true contexts, its sessions
    /// and bin switches, and its suggested volumes.
    struct Tally {
        var liked: [[Int]], heard: [Int]
        var likedIn: [[Int]], heardIn: [Int]
        var gain: [[Double]]
        var pairs: [[(Int, ContextLabel)]]
        var lastBin: [Int?], lastAt: [Date?], lastEpisode: [Int?]
        var switches = 0, sessions = 0
        var volumes = VolumeTally()

        init(recommenders: Int, days: Int, contexts: Int, users: Int) {
            liked = [[Int]](repeating: [Int](repeating: 0, count: days), count: recommenders)
            heard = [Int](repeating: 0, count: days)
            likedIn = [[Int]](repeating: [Int](repeating: 0, count: contexts), count: recommenders)
            heardIn = [Int](repeating: 0, count: contexts)
            gain = [[Double]](repeating: [Double](repeating: 0, count: days), count: recommenders)
            pairs = [[(Int, ContextLabel)]](repeating: [], count: users)
            lastBin = [Int?](repeating: nil, count: users)
            lastAt = [Date?](repeating: nil, count: users)
            lastEpisode = [Int?](repeating: nil, count: users)
        }

        /// A like of recommender `r` in a slot of `day` and context number `c`.
        mutating func like(_ r: Int, day: Int, context c: Int) {
            liked[r][day] += 1
            likedIn[r][c] += 1
        }
    }

    init(engine: Recommender, population: Population, k: Int) {
        self.engine = engine
        self.population = population
        self.k = k
        let users = population.users.count
        states = population.users.map { engine.newUser($0.id) }
        base = [BaselineModel](repeating: BaselineModel(catalog: population.catalog, seed: population.seed), count: kinds.count)
        recent = [[[String]]](repeating: [[String]](repeating: [], count: users), count: kinds.count)
        window = max(engine.config.repeatWindow, 1)
        relevance = Relevance(population: population, k: k)
        tally = Tally(recommenders: kinds.count + 1, days: population.days, contexts: contexts.count, users: users)
    }

    /// One slot: the engine's pick and answer, then each baseline's.
    mutating func play(_ slot: ListeningSlot) {
        if slot.day != day {
            day = slot.day
            for b in base.indices { base[b].refresh() }
        }
        let c = contexts.firstIndex(of: slot.context)!
        tally.heard[slot.day] += 1
        tally.heardIn[c] += 1
        let id = population.eventId(slot)
        engineTurn(slot, eventId: id, context: c)
        baselineTurns(slot, eventId: id, context: c)
    }

    /// The engine picks (learning, as in production), the person answers, the engine learns the
    /// answer and, every ``BlendLearner/every`` new queries, its blend.
    mutating func engineTurn(_ slot: ListeningSlot, eventId id: String, context c: Int) {
        let u = slot.user
        let (pick, record) = engine.pick(slot.snapshot, state: &states[u], top: k)
        tally.volumes.add(slot: slot, suggested: pick.volume, starts: tally.lastEpisode[u] != slot.episode)
        tally.lastEpisode[u] = slot.episode
        let catalog = population.catalog
        tally.gain[0][slot.day] += relevance.ndcg(pick.ranked.compactMap { catalog.row(of: $0.id) }, user: u, context: slot.context)
        if let row = catalog.row(of: pick.track.id) {
            let event = population.answer(slot: slot, track: row, eventId: id, pickId: pick.pickId)
            if event.isLike { tally.like(0, day: slot.day, context: c) }
            position += 1
            if let example = engine.feedback(event, pick: record, state: &states[u], position: position).example {
                examples.append(example)
            }
            learnBlendWhenDue()
        }
        countSession(slot, bin: record.binNumber)
    }

    /// Fits a blend on the newest queries once ``BlendLearner/every`` came since the last attempt,
    /// and ranks with it from then on when it wins.
    mutating func learnBlendWhenDue() {
        guard examples.count - lastAttempt >= BlendLearner.every else { return }
        lastAttempt = examples.count
        let decision = BlendLearner().learn(Array(examples.suffix(BlendLearner.keep)), current: engine.ranker)
        if decision.promoted, let model = decision.candidate {
            engine = engine.with(ranker: model)
            promoted += 1
        }
        splits += 1
    }

    /// Counts the engine's bin for the slot's true context, and a session or a switch of bins in one.
    mutating func countSession(_ slot: ListeningSlot, bin: Int) {
        let u = slot.user
        tally.pairs[u].append((bin, slot.context))
        let at = slot.snapshot.at.date
        if let prev = tally.lastAt[u], at.timeIntervalSince(prev) <= engine.config.sessionTimeout {
            if tally.lastBin[u] != bin { tally.switches += 1 }
        } else {
            tally.sessions += 1
        }
        tally.lastAt[u] = at.addingTimeInterval(180)
        tally.lastBin[u] = bin
    }

    /// Each baseline lists `k` tracks and plays the first (or, on the same exploration draw for all,
    /// a random one); the person answers and the baseline learns.
    mutating func baselineTurns(_ slot: ListeningSlot, eventId id: String, context c: Int) {
        let u = slot.user
        let catalog = population.catalog
        let user = population.users[u].id
        var draw = SeededGenerator(seed: population.seed ^ 0x6578_706c, user: user, counter: Int64(slot.number))
        let explore = draw.unit() < OnlineEvaluator.exploration
        let context = BaselineModel.attributes(of: slot.snapshot)
        for (b, kind) in kinds.enumerated() {
            let list = base[b].rank(kind, user: user, k: k, excluding: Set(recent[b][u]), salt: UInt64(slot.number), context: context)
            tally.gain[b + 1][slot.day] += relevance.ndcg(list.compactMap { catalog.row(of: $0) }, user: u, context: slot.context)
            let played = explore ? base[b].rank(.random, user: user, k: 1, excluding: Set(recent[b][u]), salt: UInt64(slot.number)).first : list.first
            guard let track = played, let row = catalog.row(of: track) else { continue }
            let event = population.answer(slot: slot, track: row, eventId: id)
            if event.isLike { tally.like(b + 1, day: slot.day, context: c) }
            base[b].learn(user: user, track: track, positive: event.isLike, context: context)
            recent[b][u].append(track)
            if recent[b][u].count > window { recent[b][u].removeFirst() }
        }
    }

    /// Writes what was counted into the report.
    func fill(_ report: inout EvaluationReport) {
        let t = tally, days = population.days
        report.blendsPromoted.promoted += promoted
        report.blendsPromoted.splits += splits
        report.counts.sessions = t.sessions
        report.counts.bins = Double(states.reduce(0) { $0 + $1.bins.count })
        let total = Double(max(t.heard.reduce(0, +), 1))  // every slot played
        func rate(_ p: Int) -> Double { Double(t.liked[p].reduce(0, +)) / total }
        report.engine.likeRate = rate(0)
        report.engine.ndcg = t.gain[0].reduce(0, +) / total
        report.engine.binSwitchesPerSession = t.sessions > 0 ? Double(t.switches) / Double(t.sessions) : nil
        report.baselines = kinds.enumerated().map { b, kind in
            var m = MetricSet()
            m.likeRate = rate(b + 1)
            m.ndcg = t.gain[b + 1].reduce(0, +) / total
            return (kind, m)
        }
        let byDay = (0...kinds.count).map { p in (0..<days).map { d in t.heard[d] > 0 ? Double(t.liked[p][d]) / Double(t.heard[d]) : 0 } }
        let names = ["engine"] + kinds.map(\.rawValue)
        let byContext = names.enumerated().map { p, name in
            (name, contexts.indices.filter { t.heardIn[$0] > 0 }.map { (contexts[$0].rawValue, Double(t.likedIn[p][$0]) / Double(t.heardIn[$0])) })
        }
        let withPicks = t.pairs.filter { !$0.isEmpty }
        let purity = withPicks.map { Metrics.purity($0) }.reduce(0, +) / Double(max(withPicks.count, 1))
        let nmi = withPicks.map { Metrics.nmi($0) }.reduce(0, +) / Double(max(withPicks.count, 1))
        report.online = .init(
            days: days, likeRateByDay: [("engine", byDay[0])] + kinds.enumerated().map { ($1.rawValue, byDay[$0 + 1]) },
            ndcgByDay: names.enumerated().map { p, name in (name, (0..<days).map { d in t.heard[d] > 0 ? t.gain[p][d] / Double(t.heard[d]) : 0 }) },
            likeRateByContext: byContext, purity: purity, nmi: nmi, volumeError: t.volumes.error)
    }
}

/// NDCG@k of a list of tracks for a person in a context; relevant: a track the person likes there
/// without the answer's noise. How many the catalog holds (the ideal list) is counted once per
/// person and context.
struct Relevance {
    let population: Population
    let k: Int
    private var likedInCatalog: [[ContextLabel: Int]]

    init(population: Population, k: Int) {
        self.population = population
        self.k = k
        likedInCatalog = Array(repeating: [:], count: population.users.count)
    }

    mutating func ndcg(_ list: [Int], user u: Int, context: ContextLabel) -> Double {
        let person = population.users[u], catalog = population.catalog
        if likedInCatalog[u][context] == nil {
            var n = 0
            for t in catalog.tracks where person.likes(t, in: context, noise: 0) {
                n += 1
                if n >= k { break }
            }
            likedInCatalog[u][context] = n
        }
        let ideal = min(k, likedInCatalog[u][context]!)
        guard ideal > 0 else { return 0 }
        var dcg = 0.0, idcg = 0.0
        for (i, row) in list.prefix(k).enumerated() where person.likes(catalog.tracks[row], in: context, noise: 0) {
            dcg += 1 / log2(Double(i + 2))
        }
        for i in 0..<ideal { idcg += 1 / log2(Double(i + 2)) }
        return dcg / idcg
    }
}

/// The sums behind ``EvaluationReport/Online/volumeError``.
struct VolumeTally {
    private var sum = (engine: 0.0, last: 0.0), n = 0
    private var atStart = (engine: 0.0, last: 0.0), starts = 0

    /// Counts a slot: the pick's suggestion (none counts as ½) and the phone's reported volume
    /// against the person's.
    mutating func add(slot: ListeningSlot, suggested: Float?, starts start: Bool) {
        let engine = abs(Double(suggested ?? 0.5) - slot.volume)
        let last = abs((slot.snapshot.audio?.volume ?? 0.5) - slot.volume)
        sum.engine += engine
        sum.last += last
        n += 1
        if start {
            atStart.engine += engine
            atStart.last += last
            starts += 1
        }
    }

    var error: EvaluationReport.Online.VolumeError {
        var e = EvaluationReport.Online.VolumeError()
        e.engine = sum.engine / Double(max(n, 1))
        e.lastVolume = sum.last / Double(max(n, 1))
        e.engineAtStart = atStart.engine / Double(max(starts, 1))
        e.lastVolumeAtStart = atStart.last / Double(max(starts, 1))
        return e
    }
}
