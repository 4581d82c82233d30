import Foundation

/// How a group's ranking is made from its members' rankings for one shared context: the rules of
/// the group-recommendation literature (Masthoff, "Group recommender systems", 2015), over each
/// member's **utility** of a track, the gain NDCG gives its rank, `u_m(j) = 1 / log2(r + 2)` for a
/// track at rank `r` (0 first) of the member's list, and 0 for a track the member's list does not
/// hold (docs/scoring.md, "Listening together").
///
/// The shipped rule is ``shipped``, chosen by `soundtrack eval groups` on the simulated population
/// (docs/evaluation.md, "Groups").
///
/// ```swift
/// let ranked = GroupAggregation.shipped.rank([aliceIds, bobIds, carolIds])
/// ```
public enum GroupAggregation: String, CaseIterable, Sendable {
    /// The mean of the members' utilities.
    case average
    /// The least utility of any member (ties: the mean): nobody is left out, at the cost of the rest.
    case leastMisery = "least_misery"
    /// The mean of the members' utilities over the tracks every member ranks above ``miseryRank``;
    /// the others after them, by their mean.
    case averageWithoutMisery = "average_without_misery"
    /// The product of the members' utilities, each floored at 0.01 (a track one member lacks weighs
    /// a hundredth, not nothing: with three or more members, two members' shared favourite can
    /// still come before a track all rank low).
    case multiplicative

    /// The rule the product uses (`pick --group`, the session API).
    public static let shipped = GroupAggregation.multiplicative
    /// The rank from which a member counts as miserable (``averageWithoutMisery``): a track the
    /// member's list holds below it, or not at all.
    public static let miseryRank = 20

    /// The group's ranking: every track of any member's list, by the rule's score, highest first
    /// (ties: in the order the lists first name the track, the first member's list first).
    /// - Parameter lists: each member's ranked track ids, best first.
    public func rank(_ lists: [[String]]) -> [String] {
        var ranks: [String: [Int?]] = [:]
        var order: [String] = []
        for (m, list) in lists.enumerated() {
            for (r, id) in list.enumerated() {
                if ranks[id] == nil {
                    ranks[id] = [Int?](repeating: nil, count: lists.count)
                    order.append(id)
                }
                if ranks[id]![m] == nil { ranks[id]![m] = r }
            }
        }
        let scored = order.enumerated().map { (position, id) in (id: id, position: position, score: score(ranks[id]!)) }
        return scored.sorted { a, b in
            a.score != b.score ? a.score > b.score : a.position < b.position
        }.map(\.id)
    }

    /// A member's utility of a track at rank `r` of their list (0 first): the gain NDCG gives it,
    /// `1 / log2(r + 2)`; 0 for a track the list does not hold.
    static func utility(_ r: Int?) -> Double {
        r.map { 1 / log2(Double($0) + 2) } ?? 0
    }

    /// The rule's score of a track from its ranks in the members' lists, compared first by its first part.
    func score(_ ranks: [Int?]) -> Score {
        let u = ranks.map(Self.utility)
        let mean = u.reduce(0, +) / Double(max(1, u.count))
        switch self {
        case .average: return Score(first: mean, second: 0)
        case .leastMisery: return Score(first: u.min() ?? 0, second: mean)
        case .averageWithoutMisery:
            let content = ranks.allSatisfy { $0.map { $0 < Self.miseryRank } ?? false }
            return Score(first: content ? 1 : 0, second: mean)
        case .multiplicative: return Score(first: u.reduce(1) { $0 * max(0.01, $1) }, second: mean)
        }
    }

    /// A score compared in order of its parts.
    struct Score: Equatable {
        var first: Double
        var second: Double

        static func > (a: Score, b: Score) -> Bool { a.first != b.first ? a.first > b.first : a.second > b.second }
    }
}
