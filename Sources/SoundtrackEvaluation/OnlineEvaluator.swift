import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

/// `soundtrack eval --online`: the simulated population answers the engine's picks.
///
/// Every listening slot of every person, in time order, gets one pick from the engine
/// (``Recommender/pick(_:state:top:)``, learning as in production) and one from each baseline; the
/// person's hidden taste answers each (``Population/answer(slot:track:eventId:pickId:)``, the same
/// noise for every recommender), and each recommender learns from its own answers. The engine
/// learns through ``Recommender/feedback(_:pick:state:position:)`` with the pick's record, and its
/// blend as `serve` learns it (every 500 new queries, promoted when it wins); the baselines
/// count likes (the most-popular list is recomputed at the start of each day), explore like the
/// engine (``exploration``) and, like the engine, never repeat one of the user's last
/// `repeatWindow` tracks.
public struct OnlineEvaluator: Sendable {
    /// The engine under test.
    public let engine: Recommender
    /// The simulated people.
    public let population: Population

    /// The share of picks where the most-popular and user's-most-liked baselines explore: they play
    /// the random baseline's track instead (the engine's own exploration draw has the same rate).
    /// Without it they would cycle through the `repeatWindow + 1` most popular tracks forever.
    public static let exploration = 0.15

    /// Creates an evaluator.
    public init(engine: Recommender, population: Population) {
        self.engine = engine
        self.population = population
    }

    /// Runs the closed loop.
    /// - Parameter k: recorded in the report (picks are single tracks).
    /// - Throws: ``InputError`` if the engine rejects an answer (a track outside the catalog).
    public func run(k: Int) throws(InputError) -> EvaluationReport {
        let catalog = population.catalog
        var report = EvaluationReport(split: "online", folds: 1, seed: population.seed, k: k)
        let users = population.users
        report.counts.users = users.count
        var slots: [ListeningSlot] = []
        for u in users.indices { slots += population.slots(user: u) }
        slots.sort { ($0.snapshot.at.date, $0.user, $0.number) < ($1.snapshot.at.date, $1.user, $1.number) }
        report.counts.events = slots.count
        report.counts.testEvents = slots.count

        let kinds = BaselineKind.allCases
        var engine = self.engine.with(community: SharedCommunity())
        var states = users.map { engine.newUser($0.id) }
        // The blend is learned again as `serve` learns it: every 500 new queries, promoted only if it wins.
        var examples: [BlendExample] = []
        var position: Int64 = 0, lastAttempt = 0
        var base = [BaselineModel](repeating: BaselineModel(catalog: catalog, seed: population.seed), count: kinds.count)
        var recent = [[[String]]](repeating: [[String]](repeating: [], count: users.count), count: kinds.count)
        let days = population.days
        var liked = [[Int]](repeating: [Int](repeating: 0, count: days), count: kinds.count + 1)
        var heard = [Int](repeating: 0, count: days)
        let contexts = ContextLabel.allCases
        var likedIn = [[Int]](repeating: [Int](repeating: 0, count: contexts.count), count: kinds.count + 1)
        var heardIn = [Int](repeating: 0, count: contexts.count)
        var pairs = [[(Int, ContextLabel)]](repeating: [], count: users.count)
        var lastBin = [Int?](repeating: nil, count: users.count)
        var lastAt = [Date?](repeating: nil, count: users.count)
        var lastEpisode = [Int?](repeating: nil, count: users.count)
        var volumes = VolumeTally()
        var switches = 0, sessions = 0
        var day = -1
        let window = max(engine.config.repeatWindow, 1)
        // NDCG@k of each recommender's list of k tracks per slot, by day; relevance: the person likes
        // the track in the slot's context without the answer's noise.
        var gain = [[Double]](repeating: [Double](repeating: 0, count: days), count: kinds.count + 1)
        var likedInCatalog: [[ContextLabel: Int]] = Array(repeating: [:], count: users.count)
        func ndcg(_ list: [Int], user u: Int, context: ContextLabel) -> Double {
            let person = users[u]
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

        for slot in slots {
            if slot.day != day {
                day = slot.day
                for b in base.indices { base[b].refresh() }
            }
            heard[slot.day] += 1
            let ci = contexts.firstIndex(of: slot.context)!
            heardIn[ci] += 1
            let u = slot.user
            let id = population.eventId(slot)
            // The engine.
            let (pick, record) = engine.pick(slot.snapshot, state: &states[u], top: k)
            volumes.add(slot: slot, suggested: pick.volume, starts: lastEpisode[u] != slot.episode)
            lastEpisode[u] = slot.episode
            gain[0][slot.day] += ndcg(pick.ranked.compactMap { catalog.row(of: $0.id) }, user: u, context: slot.context)
            if let row = catalog.row(of: pick.track.id) {
                let event = population.answer(slot: slot, track: row, eventId: id, pickId: pick.pickId)
                if event.isLike {
                    liked[0][slot.day] += 1
                    likedIn[0][ci] += 1
                }
                position += 1
                if let example = try engine.feedback(event, pick: record, state: &states[u], position: position).example {
                    examples.append(example)
                }
                if examples.count - lastAttempt >= BlendLearner.every {
                    lastAttempt = examples.count
                    let decision = BlendLearner().learn(Array(examples.suffix(BlendLearner.keep)), current: engine.ranker)
                    if decision.promoted, let model = decision.candidate {
                        engine = engine.with(ranker: model)
                        report.blendsPromoted.promoted += 1
                    }
                    report.blendsPromoted.splits += 1
                }
            }
            pairs[u].append((record.binNumber, slot.context))
            let at = slot.snapshot.at.date
            if let prev = lastAt[u], at.timeIntervalSince(prev) <= engine.config.sessionTimeout {
                if lastBin[u] != record.binNumber { switches += 1 }
            } else {
                sessions += 1
            }
            lastAt[u] = at.addingTimeInterval(180)
            lastBin[u] = record.binNumber
            // The baselines.
            var draw = SeededGenerator(seed: population.seed ^ 0x6578_706c, user: users[u].id, counter: Int64(slot.number))
            let explore = draw.unit() < Self.exploration
            let context = BaselineModel.attributes(of: slot.snapshot)
            for (b, kind) in kinds.enumerated() {
                let user = users[u].id
                let list = base[b].rank(kind, user: user, k: k, excluding: Set(recent[b][u]), salt: UInt64(slot.number), context: context)
                gain[b + 1][slot.day] += ndcg(list.compactMap { catalog.row(of: $0) }, user: u, context: slot.context)
                let played = explore ? base[b].rank(.random, user: user, k: 1, excluding: Set(recent[b][u]), salt: UInt64(slot.number)).first : list.first
                guard let track = played, let row = catalog.row(of: track) else { continue }
                let event = population.answer(slot: slot, track: row, eventId: id)
                if event.isLike {
                    liked[b + 1][slot.day] += 1
                    likedIn[b + 1][ci] += 1
                }
                base[b].learn(user: user, track: track, positive: event.isLike, context: context)
                recent[b][u].append(track)
                if recent[b][u].count > window { recent[b][u].removeFirst() }
            }
        }
        report.counts.sessions = sessions
        report.counts.bins = Double(states.reduce(0) { $0 + $1.bins.count })
        let total = Double(max(slots.count, 1))
        func rate(_ p: Int) -> Double { Double(liked[p].reduce(0, +)) / total }
        report.engine.likeRate = rate(0)
        report.engine.ndcg = gain[0].reduce(0, +) / total
        report.engine.binSwitchesPerSession = sessions > 0 ? Double(switches) / Double(sessions) : nil
        report.baselines = kinds.enumerated().map { b, kind in
            var m = MetricSet()
            m.likeRate = rate(b + 1)
            m.ndcg = gain[b + 1].reduce(0, +) / total
            return (kind, m)
        }
        let byDay = (0...kinds.count).map { p in (0..<days).map { d in heard[d] > 0 ? Double(liked[p][d]) / Double(heard[d]) : 0 } }
        let names = ["engine"] + kinds.map(\.rawValue)
        let byContext = names.enumerated().map { p, name in
            (name, contexts.indices.filter { heardIn[$0] > 0 }.map { (contexts[$0].rawValue, Double(likedIn[p][$0]) / Double(heardIn[$0])) })
        }
        let withPicks = pairs.filter { !$0.isEmpty }
        let purity = withPicks.map { Metrics.purity($0) }.reduce(0, +) / Double(max(withPicks.count, 1))
        let nmi = withPicks.map { Metrics.nmi($0) }.reduce(0, +) / Double(max(withPicks.count, 1))
        report.online = .init(
            days: days, likeRateByDay: [("engine", byDay[0])] + kinds.enumerated().map { ($1.rawValue, byDay[$0 + 1]) },
            ndcgByDay: names.enumerated().map { p, name in (name, (0..<days).map { d in heard[d] > 0 ? gain[p][d] / Double(heard[d]) : 0 }) },
            likeRateByContext: byContext, purity: purity, nmi: nmi, volumeError: volumes.error)
        return report
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
