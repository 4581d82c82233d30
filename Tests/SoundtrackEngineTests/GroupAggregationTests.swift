import Foundation
import SoundtrackContext
import Testing

@testable import SoundtrackEngine

/// Listening together (docs/scoring.md, "Listening together"; issue 43, item 1): the rules that
/// make a group's ranking from its members' rankings, and the group pick made of them.
@Suite("Group picks: members' rankings aggregated")
struct GroupAggregationTests {
    /// Two members who agree on nothing at the top: `a` loves x, `b` loves y; both rank z second.
    let lists = [["x", "z", "w", "y"], ["y", "z", "v", "x"]]

    @Test("the multiplicative rule (the shipped one) prefers the track both rank well to each one's favourite")
    func multiplicativeFavoursAgreement() {
        // z: (1/log2 3)² = 0.398; x: 1 · 1/log2 5 = 0.431 — x first; with x and y further down it is z.
        #expect(GroupAggregation.multiplicative.rank([["x", "z", "w", "u", "y"], ["y", "z", "v", "t", "x"]]).first == "z")
        #expect(GroupAggregation.shipped == .multiplicative)
    }

    @Test("average ranks by the mean gain; ties keep the order the lists first name the tracks")
    func averageByMean() {
        // x: (1 + 1/log2 5)/2 = 0.715, y the same, z: 1/log2 3 = 0.631.
        #expect(GroupAggregation.average.rank(lists).prefix(3) == ["x", "y", "z"])
    }

    @Test("least misery ranks by the least gain: a track one member lacks comes last")
    func leastMisery() {
        let ranked = GroupAggregation.leastMisery.rank(lists)
        #expect(ranked.first == "z")
        #expect(Set(ranked.suffix(2)) == ["w", "v"])
    }

    @Test("average without misery puts the tracks every member ranks high first")
    func withoutMisery() {
        let long = (0..<30).map { "t\($0)" }
        // m is in a's top 20 and b's 25th: miserable for b; n is 10th for both.
        var a = long, b = long.reversed() as [String]
        a.insert("m", at: 0)
        b.insert("m", at: 25)
        a.insert("n", at: 10)
        b.insert("n", at: 10)
        #expect(GroupAggregation.averageWithoutMisery.rank([a, b]).first == "n")
        #expect(GroupAggregation.average.rank([a, b]).first == "m")
    }

    func pick(_ user: String, _ ids: [String]) -> Pick {
        let t = ids.map { Pick.TrackSummary(id: $0, title: $0.uppercased(), artist: "A") }
        return Pick(
            pickId: "p-\(user)", user: user, at: Timestamp(date: Date(timeIntervalSince1970: 0), offsetSeconds: 0),
            bin: Pick.BinSummary(id: "b-1", label: "", score: 1, created: false), track: t[0], ranked: t, alternatives: [], why: [], source: "bin")
    }

    @Test("a group pick leaves out what the group heard, says where the track stood for each member")
    func groupPick() throws {
        let picks = [pick("a", lists[0]), pick("b", lists[1])]
        let first = try #require(GroupPick(members: ["a", "b"], picks: picks, top: 2))
        let second = try #require(GroupPick(members: ["a", "b"], picks: picks, top: 2, exclude: [first.track.id]))
        #expect(second.track.id != first.track.id)
        #expect(second.ranked.count == 2 && second.ranked[0] == second.track)
        #expect(second.memberRanks == [lists[0].firstIndex(of: second.track.id), lists[1].firstIndex(of: second.track.id)])
        #expect(GroupPick(members: ["a", "b"], picks: picks, exclude: Set(lists.joined())) == nil)
        let json = first.json(includeRanked: true).serialized()
        #expect(json.contains("\"member_ranks\":{\"a\":") && json.contains("\"aggregation\":\"multiplicative\""))
    }
}
