import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import Testing
@testable import SoundtrackEvaluation

/// `soundtrack fit`: the pairwise logistic regression and the fitter around it.
@Suite("Fitting the blend")
struct FitTests {
    @Test("Pairwise logistic regression gives the separating signal a positive weight and the noise almost none")
    func pairwiseFitFindsTheSignal() {
        var rng = SeededGenerator(seed: 3, user: "fit-test", counter: 0)
        var groups: [[PairwiseFit.Query]] = []
        for g in 0..<4 {
            var queries: [PairwiseFit.Query] = []
            for q in 0..<30 {
                // Ten candidates: the relevant one has signal 0 higher; signal 1 is noise for all.
                var features: [[Float]] = [], relevant: [Bool] = []
                for c in 0..<10 {
                    let isRelevant = c == q % 10
                    features.append([Float(rng.unit()) + (isRelevant ? 1 : 0), Float(rng.unit())])
                    relevant.append(isRelevant)
                }
                queries.append(PairwiseFit.Query(user: "u-\(g)-\(q % 5)", features: features, relevant: relevant))
            }
            groups.append(queries)
        }
        let (w, lambda) = PairwiseFit.fit(groups: groups, k: 10)
        #expect(w.count == 2)
        #expect(PairwiseFit.lambdas.contains(lambda))
        #expect(w[0] > 2, "\(w)")
        #expect(abs(w[1]) < w[0] / 5, "\(w)")
        // The fitted weights rank the relevant candidate first far more often than chance.
        let all = groups.flatMap { $0 }
        #expect(PairwiseFit.ndcg(all, w.map(Double.init), k: 10) > 0.8)
        #expect(PairwiseFit.ndcg(all, [0, 1], k: 10) < 0.5)
    }

    @Test("fit on the committed small log: one weight per signal, λ chosen by cross-validation over person groups, the same file from the same seed")
    func fitterIsDeterministic() throws {
        let data = try Data(contentsOf: Repo.smallLogURL)
        let log = try LabelledLog.parse(data, catalog: Repo.smallCatalog)
        let fitter = RankerFitter(engine: Repo.engine(seed: 42), k: 10, maxQueries: 200)
        let a = try fitter.fit(log, protocol: .chronological, folds: 4, seed: 7, source: "test")
        let b = try fitter.fit(log, protocol: .chronological, folds: 4, seed: 7, source: "test")
        #expect(a.model == b.model && a.lambda == b.lambda)
        #expect(a.model.weights.count == RankerModel.signals.count)
        #expect(PairwiseFit.lambdas.contains(a.lambda))
        #expect(a.queries > 0)
        #expect(a.model.source == "test")
    }
}
