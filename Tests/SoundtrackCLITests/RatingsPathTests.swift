import Foundation
import SoundtrackApp
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackEvaluation
import SoundtrackTestSupport
import Testing

/// `eval ratings` in memory and through a database give the same ranked lists: the in-process run
/// is the product's path, not a model of it.
@Suite("eval ratings: in memory and through a database")
struct RatingsPathTests {
    /// 60 ratings of 12 items by 6 users in two moods: each user likes their own half of the items.
    static let ratings: String = {
        var lines = ["userid,itemid,rating,mood"]
        for n in 0..<60 {
            let u = n % 6, item = (n * 7 + u) % 12
            lines.append("u\(u),i\(item),\((item + u) % 2 == 0 ? 5 : 2),\(n % 3 == 0 ? "sad" : "happy")")
        }
        return lines.joined(separator: "\n")
    }()

    @Test("The same fold ranks the same tracks in the same order in memory and through catalog import, replay and batch")
    func sameListsBothWays() throws {
        let data = try ContextualRatings.parse(Self.ratings)
        let m = try Models.bundled()
        var config = m.config
        config.exploration = 0
        let engine = Recommender(config: config, catalog: IndexCatalog(CatalogIndex(tracks: [])), priors: m.priors, seed: 1, ranker: m.ranker)
        let memory = InProcessRatingsRun(engine: engine)
        let store = RatingsThroughStore(models: m, seed: 1, directory: Scratch.directory("ratings-path"))
        let a = try RatingsEvaluator(folds: 3, seed: 1, k: 10).evaluate(data, run: memory)
        let b = try RatingsEvaluator(folds: 3, seed: 1, k: 10).evaluate(data, run: store)
        #expect(a.metrics == b.metrics)
        // And list by list: the first 45 ratings learned, then one pick a user in each mood.
        var fold = RatingsEvaluator(folds: 3, seed: 1, k: 10).log(data)
        fold.events = Array(fold.events.prefix(45))
        let mapping = RatingsContext(columns: ["mood"])
        fold.queries = (0..<6).flatMap { u in ["sad", "happy"].map { mapping.snapshot([$0], user: "u\(u)", ordinal: 20) } }
        let lists = try memory.rank(fold), stored = try store.rank(fold)
        #expect(lists.shipped == stored.shipped)
        #expect(lists.shipped.count == 12 && lists.shipped.allSatisfy { !$0.isEmpty })
    }
}
