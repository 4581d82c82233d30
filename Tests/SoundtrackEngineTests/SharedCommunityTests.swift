import Foundation
import SoundtrackContext
import Testing

@testable import SoundtrackEngine

/// A shared community model replaced by one counted again (after a forget): the events recorded
/// meanwhile are kept once, and a user's next pick reads the new model whatever its version.
@Suite struct SharedCommunityTests {
    static func like(_ c: inout Community, _ user: String, _ row: Int) {
        c.record(user: user, row: row, like: true, dislike: false, attributes: [7])
    }

    @Test("Events recorded while a model was counted again are recorded into it unless it counts them")
    func journal() {
        let shared = SharedCommunity(seq: 12, forgotten: 2)
        shared.record(event: "e0", user: "x", row: 1, like: true, dislike: false, attributes: [7])  // before the journal: the count has it
        shared.beginJournal()
        shared.record(event: "e1", user: "b", row: 2, like: true, dislike: false, attributes: [7])
        shared.record(event: "e2", user: "b", row: 3, like: true, dislike: false, attributes: [7])
        // Counted from the log: e1 was committed before the count read it, e2 was not; x was forgotten.
        var counted = Community()
        Self.like(&counted, "b", 2)
        shared.replace(with: counted, forgotten: 3, counted: { $0 == "e1" })
        var expected = Community()
        Self.like(&expected, "b", 2)
        Self.like(&expected, "b", 3)
        let model = shared.snapshot
        #expect(model == expected && model.version == expected.version)
        #expect(model.neighbourScores(of: [2], liked: true) == expected.neighbourScores(of: [2], liked: true))
        #expect(shared.generation == 1 && shared.forgotten == 3 && shared.seq == -1, "never written over the store's")
        // The journal ended with the replacement.
        shared.record(event: "e3", user: "b", row: 4, like: true, dislike: false, attributes: [7])
        shared.replace(with: Community(), forgotten: 3, counted: { _ in false })
        #expect(shared.snapshot.version == 0 && shared.generation == 2)
        // A journal given up keeps nothing.
        shared.beginJournal()
        shared.record(event: "e4", user: "b", row: 5, like: true, dislike: false, attributes: [7])
        shared.endJournal()
        shared.replace(with: Community(), forgotten: 3, counted: { _ in false })
        #expect(shared.snapshot.version == 0)
    }

    @Test("A user's ranking cache is built again from a replaced model of the same version")
    func replacedModelIsRead() throws {
        var config = Fixtures.config
        config.exploration = 0
        let rows = Array(0..<Fixtures.catalog.count)
        // u-1 likes one track; people x (first model) or y (second) like it with five others each.
        let base = Fixtures.engine().with(config: config)
        var state = base.newUser("u-1")
        let (gymPick, gymRecord) = base.pick(Fixtures.gym(), state: &state)
        let liked = try #require(Fixtures.catalog.row(of: gymPick.track.id))
        let others = rows.filter { $0 != liked }
        func model(_ person: String, _ with: ArraySlice<Int>) -> Community {
            var c = Community()
            for p in 0..<3 {
                Self.like(&c, "\(person)-\(p)", liked)
                for row in with { Self.like(&c, "\(person)-\(p)", row) }
            }
            return c
        }
        let first = model("x", others[1000..<1005]), second = model("y", others[2000..<2005])
        #expect(first.version == second.version)
        let shared = SharedCommunity(first)
        let e = base.with(community: shared)
        _ = e.feedback(
            FeedbackEvent(id: "like", user: "u-1", at: gymPick.at, track: gymPick.track.id, signal: .like, pickId: gymPick.pickId),
            pick: gymRecord, state: &state)
        // A learning pick: the state keeps the ranking cache built from the first model.
        let before = e.pick(Fixtures.library(), state: &state, top: 200, pickId: "p").pick
        #expect(before.ranked.contains { Fixtures.catalog.row(of: $0.id).map(others[1000..<1005].contains) ?? false })

        // The second model, with u-1's like counted as a recount from the log would count it.
        var recounted = second
        Self.like(&recounted, "u-1", liked)
        shared.replace(with: recounted, forgotten: 1, counted: { _ in true })
        #expect(shared.snapshot.version == first.version + 1, "the same version as the model it replaced")
        var copy = state
        let after = e.pick(Fixtures.library(), state: &copy, top: 200, pickId: "q").pick
        var rebuilt = state
        rebuilt.rankingCache = RankingCache()
        let expected = e.pick(Fixtures.library(), state: &rebuilt, top: 200, pickId: "q").pick
        #expect(expected.ranked.contains { Fixtures.catalog.row(of: $0.id).map(others[2000..<2005].contains) ?? false })
        #expect(after == expected, "the cache built from the first model is not used")
    }
}
