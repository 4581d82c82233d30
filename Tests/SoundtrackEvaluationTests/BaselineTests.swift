import Foundation
import SoundtrackCatalog
import SoundtrackContext
import Testing

@testable import SoundtrackEvaluation

@Suite("Baselines on a hand-made log")
struct BaselineTests {
    let catalog = Repo.smallCatalog
    var a: String { catalog.tracks[10].id }
    var b: String { catalog.tracks[20].id }
    var c: String { catalog.tracks[30].id }

    /// u1 likes A three times and dislikes B, then likes A (test); u2 likes B and C twice, dislikes A,
    /// then likes C (test). Training likes: A 3, C 2, B 1.
    var log: LabelledLog {
        LabelledLog([
            handEvent("1", user: "u1", hour: 1, track: a, .like), handEvent("2", user: "u2", hour: 1, track: b, .like),
            handEvent("3", user: "u1", hour: 3, track: a, .complete), handEvent("4", user: "u2", hour: 3, track: c, .like),
            handEvent("5", user: "u1", hour: 5, track: a, .like), handEvent("6", user: "u2", hour: 5, track: c, .complete),
            handEvent("7", user: "u1", hour: 7, track: b, .dislike), handEvent("8", user: "u2", hour: 7, track: a, .skip),
            handEvent("9", user: "u1", hour: 9, track: a, .like), handEvent("10", user: "u2", hour: 9, track: c, .like)
        ])
    }

    func trained() -> BaselineModel {
        var m = BaselineModel(catalog: catalog, seed: 1)
        for e in log.entries.prefix(8).map(\.event) { m.learn(user: e.user, track: e.track, positive: e.isLike) }
        m.refresh()
        return m
    }

    @Test func mostPopularRanksByTrainingLikesThenCatalogPopularity() {
        let m = trained()
        let top = m.rank(.mostPopular, user: "u1", k: 5, salt: 0)
        #expect(Array(top.prefix(3)) == [a, c, b])
        // Then the catalog's most popular tracks that nobody liked.
        let byPopularity = catalog.tracks.filter { ![a, b, c].contains($0.id) }
            .sorted { ($0.popularity ?? 0, $1.id) > ($1.popularity ?? 0, $0.id) }
        #expect(Array(top.suffix(2)) == byPopularity.prefix(2).map(\.id))
        #expect(m.rank(.mostPopular, user: "u2", k: 5, salt: 0) == top)
        #expect(m.rank(.mostPopular, user: "u1", k: 2, excluding: [a], salt: 0) == [c, b])
        let s = m.scores(.mostPopular, user: "u1", tracks: [a, c, b], salt: 0)
        #expect(s[0] > s[1] && s[1] > s[2])
    }

    @Test func userMostLikedIsTheUsersOwnThenPopular() {
        let m = trained()
        #expect(m.rank(.userMostLiked, user: "u2", k: 3, salt: 0) == [c, b, a])
        #expect(m.rank(.userMostLiked, user: "u1", k: 3, salt: 0) == [a, c, b])
        // A user with no likes gets the most popular.
        #expect(m.rank(.userMostLiked, user: "nobody", k: 4, salt: 0) == m.rank(.mostPopular, user: "nobody", k: 4, salt: 0))
    }

    @Test func randomIsSeededAndDistinct() {
        let m = trained()
        let r = m.rank(.random, user: "u1", k: 20, salt: 7)
        #expect(r.count == 20 && Set(r).count == 20)
        #expect(m.rank(.random, user: "u1", k: 20, salt: 7) == r)
        #expect(m.rank(.random, user: "u1", k: 20, salt: 8) != r)
        #expect(!m.rank(.random, user: "u1", k: 30, excluding: Set(r), salt: 7).contains { r.contains($0) })
    }

    @Test func evaluatorScoresTheBaselinesOnTheSplit() throws {
        // Chronological with folds 5: each user's last event is the test event (u1 likes A, u2 likes C).
        let report = OfflineEvaluator(engine: Repo.engine(), k: 1).evaluate(log, protocol: .chronological, folds: 5, seed: 1)
        #expect(report.counts.users == 2)
        #expect(report.counts.trainEvents == 8 && report.counts.testEvents == 2 && report.counts.queries == 2)
        let base = Dictionary(uniqueKeysWithValues: report.baselines.map { ($0.0, $0.1) })
        // Most popular answers A to both: a hit for u1, a miss for u2.
        #expect(base[.mostPopular]?.precision == 0.5)
        #expect(base[.mostPopular]?.ndcg == 0.5)
        #expect(base[.mostPopular]?.likeRate == 0.5)
        // The user's most liked: A for u1, C for u2: both hits.
        #expect(base[.userMostLiked]?.precision == 1)
        #expect(base[.userMostLiked]?.recall == 1)
        #expect(base[.userMostLiked]?.map == 1)
        #expect(base[.userMostLiked]?.likeRate == 1)
        // No test session has a dislike: no AUC. Baselines have no bins.
        #expect(base[.mostPopular]?.auc == nil)
        #expect(base[.mostPopular]?.binHitRate == nil)
        #expect(report.engine.binHitRate != nil)
    }
}
