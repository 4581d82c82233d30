import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

/// `soundtrack eval groups`: the engine's group picks for groups drawn from a simulated population
/// (docs/evaluation.md, "Groups").
///
/// The population's whole feedback log teaches the engine first, as `replay` of it would (each
/// person's bins, the community, the blend learned at the end and promoted when it wins). Then
/// ``groups`` groups of ``size`` distinct people are drawn with a seeded generator; each meets in
/// each context of ``contexts`` that all of them have, in the snapshot of the first member's last
/// slot of that context (the friends are where that member is). Every member ranks 100 tracks for
/// the shared snapshot (a read-only pick on that member's state); each rule of
/// ``GroupAggregation`` makes the group's list, and two baselines make theirs: `most_popular` (the
/// tracks most liked in the log) and `one_member` (the first member's own list).
///
/// Each member judges a list by their hidden taste in the context, without noise: a track is
/// relevant when the member would like it (``SimulatedUser/likes(_:in:noise:)`` with noise 0).
/// NDCG@k over the catalog's relevant tracks, and the like rate of the list's first track (the
/// group's pick), per member; `mean` averages over every member of every meeting, `worst` the least
/// member's figure of each meeting over meetings.
public struct GroupEvaluator: Sendable {
    /// The engine under test (its catalog is the population's).
    public let engine: Recommender
    /// The simulated people.
    public let population: Population
    /// Groups drawn.
    public let groups: Int
    /// People in a group.
    public let size: Int
    /// Seed of the draw.
    public let seed: UInt64
    /// The contexts groups meet in, when all members have them.
    public static let contexts: [ContextLabel] = [.social, .commute, .relax]

    /// Creates an evaluator.
    public init(engine: Recommender, population: Population, groups: Int = 100, size: Int = 3, seed: UInt64 = 1) {
        self.engine = engine
        self.population = population
        self.groups = groups
        self.size = size
        self.seed = seed
    }

    /// Mean and worst member's figures of one method.
    public struct Figures: Sendable, Equatable {
        public var ndcg = 0.0
        public var likeRate = 0.0
        public var worstNDCG = 0.0
        public var worstLikeRate = 0.0
    }

    /// What `eval groups` reports.
    public struct Report: Sendable {
        /// Groups, their size, the meetings scored and the seed.
        public var groups = 0, size = 0, meetings = 0
        public var seed: UInt64 = 0
        public var k = 10
        /// Whether the engine ranked with a blend learned from the log.
        public var learnedBlend = false
        /// Each method's figures, in the order printed: the rules of ``GroupAggregation``, then the baselines.
        public var methods: [(name: String, figures: Figures)] = []
    }

    /// Trains on the population's log, draws the groups and scores every method.
    public func run(k: Int = 10) -> Report {
        let (trained, states, popular, learned) = train()
        var sums = [String: (members: Figures, worst: Figures, n: Int, meetings: Int)]()
        var meetings = 0
        var rng = SeededGenerator(seed: seed, user: "groups", counter: 0)
        let catalog = population.catalog
        for _ in 0..<groups {
            let members = Array((0..<population.users.count).shuffled(using: &rng).prefix(size))
            guard members.count == size else { break }
            for context in Self.contexts where members.allSatisfy({ population.users[$0].tastes[context] != nil }) {
                guard let slot = population.slots(user: members[0]).last(where: { $0.context == context }) else { continue }
                meetings += 1
                let lists = members.map { m -> [String] in
                    let user = population.users[m].id
                    var snapshot = slot.snapshot
                    snapshot.user = user
                    var copy = states[user] ?? trained.newUser(user)
                    return trained.pick(snapshot, state: &copy, top: GroupPick.depth).pick.ranked.map(\.id)
                }
                var methods = GroupAggregation.allCases.map { ($0.rawValue, $0.rank(lists)) }
                methods.append(("most_popular", popular))
                methods.append(("one_member", lists[0]))
                let relevant = members.map { m in
                    Set(catalog.tracks.indices.filter { population.users[m].likes(catalog.tracks[$0], in: context, noise: 0) }.map { catalog.tracks[$0].id })
                }
                for (name, list) in methods {
                    let each = relevant.map { rel in (ndcg: Metrics.ndcg(list, relevant: rel, k: k), like: list.first.map(rel.contains) == true ? 1.0 : 0) }
                    var s = sums[name] ?? (Figures(), Figures(), 0, 0)
                    for e in each {
                        s.members.ndcg += e.ndcg
                        s.members.likeRate += e.like
                    }
                    s.worst.ndcg += each.map(\.ndcg).min() ?? 0
                    s.worst.likeRate += each.map(\.like).min() ?? 0
                    s.n += each.count
                    s.meetings += 1
                    sums[name] = s
                }
            }
        }
        var report = Report(groups: groups, size: size, meetings: meetings, seed: seed, k: k, learnedBlend: learned)
        for name in GroupAggregation.allCases.map(\.rawValue) + ["most_popular", "one_member"] {
            guard let s = sums[name], s.n > 0 else { continue }
            let n = Double(s.n), g = Double(s.meetings)
            report.methods.append(
                (name, Figures(ndcg: s.members.ndcg / n, likeRate: s.members.likeRate / n, worstNDCG: s.worst.ndcg / g, worstLikeRate: s.worst.likeRate / g)))
        }
        return report
    }

    /// The engine taught the whole log (with the blend it learns, as `replay` does at its end), the
    /// people's states and the tracks most liked in the log.
    func train() -> (engine: Recommender, states: [String: UserState], popular: [String], learned: Bool) {
        let engine = self.engine.with(community: SharedCommunity())
        var states: [String: UserState] = [:]
        var likes: [String: Int] = [:]
        var examples: [BlendExample] = []
        for (position, e) in population.feedbackLog().events.enumerated() {
            let taught = engine.feedback(e, pick: nil, state: &states[e.user, default: engine.newUser(e.user)], position: Int64(position + 1))
            if let example = taught.example { examples.append(example) }
            if e.isLike { likes[e.track, default: 0] += 1 }
        }
        for user in states.keys { engine.prepare(&states[user]!) }
        let popular = likes.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(GroupPick.depth).map(\.key)
        let learned = ReplayEndBlend.learn(engine, examples: examples)
        return (learned.engine, states, popular, learned.decision?.promoted == true)
    }

}

extension GroupEvaluator.Report {
    /// The report as a table.
    public func table() -> [String] {
        var out = [
            "soundtrack eval groups — \(groups) groups of \(size), \(meetings) meetings, seed \(seed), k = \(k)"
                + (learnedBlend ? ", the blend learned from the log" : ", the models' blend"),
            "",
            "ranking".padding(toLength: 24, withPad: " ", startingAt: 0) + "   NDCG@\(k)   like rate   worst NDCG   worst like rate"
        ]
        for (name, f) in methods {
            out.append(
                name.padding(toLength: 24, withPad: " ", startingAt: 0)
                    + String(format: " %9.4f %11.4f %12.4f %17.4f", f.ndcg, f.likeRate, f.worstNDCG, f.worstLikeRate))
        }
        out.append("")
        out.append("the product ranks groups by \(GroupAggregation.shipped.rawValue)")
        return out
    }

    /// The report as JSON.
    public func json() -> JSONValue {
        func figures(_ f: GroupEvaluator.Figures) -> JSONValue {
            .object([
                ("ndcg_at_k", .number(f.ndcg)), ("like_rate", .number(f.likeRate)), ("worst_ndcg_at_k", .number(f.worstNDCG)),
                ("worst_like_rate", .number(f.worstLikeRate))
            ])
        }
        return .object([
            ("protocol", .object([("groups", .number(Double(groups))), ("size", .number(Double(size))), ("seed", .number(Double(seed))), ("k", .number(Double(k)))])),
            ("meetings", .number(Double(meetings))), ("learned_blend", .bool(learnedBlend)),
            ("shipped", .string(GroupAggregation.shipped.rawValue)),
            ("methods", .object(methods.map { ($0.name, figures($0.figures)) }))
        ])
    }
}
