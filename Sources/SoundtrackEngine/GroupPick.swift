import Foundation
import SoundtrackContext

/// A pick for several people in one shared context (docs/scoring.md, "Listening together"): each
/// member's read-only pick of ``depth`` tracks for the shared snapshot, aggregated by
/// ``GroupAggregation/shipped``. A group pick learns nothing by itself; each member's feedback on
/// it teaches that member's bins only.
///
/// ```swift
/// let group = GroupPick(members: ["ana", "ben"], picks: [anaPick, benPick], top: 5)
/// group.track.id   // the track the group plays
/// ```
public struct GroupPick: Sendable, Equatable {
    /// The tracks each member's pick ranks.
    public static let depth = 100

    /// The members, in the order given.
    public var members: [String]
    /// The track to play: the first of ``ranked``.
    public var track: Pick.TrackSummary
    /// The group's first tracks, in order (at least the one played).
    public var ranked: [Pick.TrackSummary]
    /// Where the played track stands in each member's own ranking (0 first; `nil`: not among the member's ``depth``).
    public var memberRanks: [Int?]
    /// The rule that aggregated the members' rankings.
    public var aggregation: GroupAggregation

    /// The group's pick from its members' picks (one per member, in `members` order, each ranking
    /// up to ``depth`` tracks), less the tracks of `exclude` (what the group heard lately).
    /// - Returns: `nil` when no member's pick ranks a track outside `exclude`.
    public init?(
        members: [String], picks: [Pick], top: Int = 1, exclude: Set<String> = [], aggregation: GroupAggregation = .shipped
    ) {
        precondition(members.count == picks.count, "one pick a member")
        let lists = picks.map { $0.ranked.map(\.id) }
        var summaries: [String: Pick.TrackSummary] = [:]
        for pick in picks { for t in pick.ranked where summaries[t.id] == nil { summaries[t.id] = t } }
        let order = aggregation.rank(lists).filter { !exclude.contains($0) }
        guard let first = order.first else { return nil }
        self.members = members
        self.ranked = order.prefix(max(1, top)).map { summaries[$0]! }
        self.track = summaries[first]!
        self.memberRanks = lists.map { $0.firstIndex(of: first) }
        self.aggregation = aggregation
    }

    /// The group pick as JSON (docs/formats.md, "Group picks").
    public func json(includeRanked: Bool = false) -> JSONValue {
        func trackJSON(_ t: Pick.TrackSummary) -> JSONValue {
            .object([("id", .string(t.id)), ("title", .string(t.title)), ("artist", .string(t.artist))])
        }
        var pairs: [(String, JSONValue)] = [
            ("members", .array(members.map { .string($0) })),
            ("track", trackJSON(track))
        ]
        if includeRanked { pairs.append(("ranked", .array(ranked.map(trackJSON)))) }
        pairs.append(
            ("member_ranks", .object(zip(members, memberRanks).map { ($0, $1.map { .number(Double($0)) } ?? .null) })))
        pairs.append(("aggregation", .string(aggregation.rawValue)))
        return .object(pairs)
    }
}
