import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import Testing

@testable import SoundtrackEvaluation

/// `soundtrack fit`: the blend that ships, fitted as a deployment learns its own.
@Suite("Fitting the blend")
struct FitTests {
    @Test("fit on the committed small log and a ratings file: the same model from the same seed, one query a taught like, evidence non-negative")
    func fitterIsDeterministic() throws {
        let log = try LabelledLog.parse(try Data(contentsOf: Repo.smallLogURL), catalog: Repo.smallCatalog)
        let ratings = try ContextualRatings.parse(BinAndRatingsEvalTests.ratings)
        let ratingsLog = RatingsEvaluator().log(ratings)
        let sources: [RankerFitter.Source] = [
            .init(name: "small", catalog: Repo.smallCatalog, events: log.entries.map(\.event)),
            .init(name: "ratings", catalog: CatalogIndex(tracks: ratingsLog.tracks), events: ratingsLog.events)
        ]
        let fitter = RankerFitter(engine: Repo.engine(seed: 42))
        let a = try fitter.fit(sources, source: "test")
        let b = try fitter.fit(sources, source: "test")
        #expect(a.model == b.model && a.lambda == b.lambda)
        #expect(a.model.weights.count == RankerModel.signals.count && a.model.source == "test")
        #expect(BlendFit.lambdas.contains(a.lambda))
        for i in RankerModel.nonNegativeSignals { #expect(a.model.weights[i] >= 0) }
        // Every like of the small log (and every rating of 4 or 5) teaches one query, at most.
        let likes = log.entries.filter { $0.event.isLike }.count
        #expect(a.sources[0].queries > 0 && a.sources[0].queries <= likes)
        #expect(a.sources[1].queries <= ratings.rows.filter { $0.rating >= 4 }.count)
        #expect(abs(a.sources.map(\.share).reduce(0, +) - 1) < 1e-9)
    }

    @Test("Signals the sources do not inform (no audio in ratings) take their weight from the fill log alone")
    func fillGivesUninformedWeights() throws {
        let ratings = try ContextualRatings.parse(BinAndRatingsEvalTests.ratings)
        let ratingsLog = RatingsEvaluator().log(ratings)
        let log = try LabelledLog.parse(try Data(contentsOf: Repo.smallLogURL), catalog: Repo.smallCatalog)
        let fitter = RankerFitter(engine: Repo.engine(seed: 42))
        let source = RankerFitter.Source(name: "ratings", catalog: CatalogIndex(tracks: ratingsLog.tracks), events: ratingsLog.events)
        let plain = try fitter.fit([source], source: "")
        let filled = try fitter.fit(
            [source], fill: .init(name: "small", catalog: Repo.smallCatalog, events: log.entries.map(\.event)), source: "")
        let audio = RankerModel.index(of: "audio")!
        #expect(filled.filled.contains("audio") && plain.filled.isEmpty)
        #expect(plain.model.weights[audio] == 0)
        for i in RankerModel.signals.indices where !filled.filled.contains(RankerModel.signals[i]) {
            #expect(filled.model.weights[i] == plain.model.weights[i], "\(RankerModel.signals[i]) is informed: held")
        }
    }
}
