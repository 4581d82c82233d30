import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackPostgres
import SoundtrackStore
import Testing

@testable import SoundtrackEngine

/// The semantics of ``BlendStore``, written once and run on the SQLite store and the PostgreSQL
/// store: attempts recorded (none fitted, promoted, not promoted), the blend in use, the history,
/// a rollback, and the queries liked events taught, newest first, pruned.
@Suite("The blends, on SQLite and PostgreSQL")
struct BlendStoreConformanceTests {
    static let t0 = Date(timeIntervalSince1970: 1_773_200_000)

    /// A decision of the learner: a blend of `weights` (none when `nil`), promoted or not.
    static func decision(_ weights: [Float]?, promoted: Bool, ndcg: Double = 0.5, reason: String) -> BlendLearner.Decision {
        BlendLearner.Decision(
            candidate: weights.map { RankerModel(weights: $0, source: "conformance") }, promoted: promoted, reason: reason,
            training: weights == nil ? 0 : 120, validation: weights == nil ? 0 : 30, ndcg: ndcg, currentNDCG: 0.25, lambda: 1)
    }

    /// Weights of every signal: `value` for the `i`th signal and 0 elsewhere.
    static func weights(_ i: Int, _ value: Float) -> [Float] {
        var w = [Float](repeating: 0, count: RankerModel.signals.count)
        w[i] = value
        return w
    }

    @Test("Attempts are recorded as the next version; a promoted one is in use; the history is oldest first", arguments: Backend.allCases)
    func attempts(backend: Backend) async throws {
        try await backend.withStore { s in
            let store = s.store
            #expect(try store.lastBlendAttempt() == 0)
            #expect(try store.blendInUse() == nil)
            #expect(try store.blendHistory().blends.isEmpty && store.blendHistory().inUse == 0)
            // Too few queries: the attempt is remembered, no blend stored.
            #expect(try store.recordBlendAttempt(Self.decision(nil, promoted: false, reason: "too few"), seen: 7, current: 0, events: 40, at: Self.t0) == nil)
            #expect(try store.lastBlendAttempt() == 7)
            #expect(try store.blendHistory().blends.isEmpty)
            let promoted = try #require(
                try store.recordBlendAttempt(
                    Self.decision(Self.weights(0, 0.5), promoted: true, ndcg: 0.625, reason: "promoted: better"), seen: 12, current: 0, events: 90,
                    at: Self.t0))
            #expect(promoted.model.version == 1 && promoted.promoted && promoted.model.weights == Self.weights(0, 0.5))
            #expect(try store.blendInUse() == promoted)
            let kept = try #require(
                try store.recordBlendAttempt(
                    Self.decision(Self.weights(2, -1.25), promoted: false, ndcg: 0.375, reason: "not promoted: worse"), seen: 20, current: 1,
                    events: 150, at: Self.t0.addingTimeInterval(3600)))
            #expect(kept.model.version == 2 && !kept.promoted && kept.comparedWith == 1 && kept.comparedNDCG == 0.25)
            #expect(try store.lastBlendAttempt() == 20)
            #expect(try store.blendInUse() == promoted)
            let history = try store.blendHistory()
            #expect(history.blends == [promoted, kept] && history.inUse == 1)
            #expect(history.blends[1].createdAt == Self.t0.addingTimeInterval(3600) && history.blends[1].events == 150)
            #expect(history.blends[1].reason == "not promoted: worse" && history.blends[1].model.source == "conformance")
        }
    }

    @Test("Any stored version can be put in use, and 0 rolls back to the models' own; an unknown one is refused", arguments: Backend.allCases)
    func useAndRollBack(backend: Backend) async throws {
        try await backend.withStore { s in
            let store = s.store
            let first = try #require(
                try store.recordBlendAttempt(Self.decision(Self.weights(1, 2), promoted: true, reason: "promoted"), seen: 1, current: 0, events: 1, at: Self.t0))
            let second = try #require(
                try store.recordBlendAttempt(Self.decision(Self.weights(3, 1), promoted: false, reason: "no"), seen: 2, current: 1, events: 2, at: Self.t0))
            try store.useBlend(version: 2)
            #expect(try store.blendInUse() == second)
            #expect(try store.blendHistory().inUse == 2)
            try store.useBlend(version: 0)
            #expect(try store.blendInUse() == nil)
            #expect(try store.blendHistory().inUse == 0)
            #expect(throws: StoreError.noSuchBlend(3)) { try store.useBlend(version: 3) }
            #expect(try store.blendHistory().inUse == 0)
            try store.useBlend(version: 1)
            #expect(try store.blendInUse() == first)
        }
    }

    @Test("The queries liked events taught are read newest last, and a prune keeps the newest", arguments: Backend.allCases)
    func examples(backend: Backend) async throws {
        try await backend.withStore { s in
            let store = s.store
            #expect(try store.newestBlendExample() == 0)
            #expect(try store.blendExamples(newest: 10).isEmpty)
            #expect(try store.pruneBlendExamples(keep: 1) == 0)
            for user in ["u-1", "u-2"] {
                try store.addUser(NewUser(id: user), at: Self.t0)
                try Person.day(store, user: user, picks: 24)
            }
            let all = try store.blendExamples(newest: 1000)
            #expect(all.count >= 4, "liked events taught queries")
            #expect(Set(all.map(\.user)) == ["u-1", "u-2"])
            #expect(all.first?.user == "u-1" && all.last?.user == "u-2", "oldest first")
            #expect(all.allSatisfy { $0.signals.count % RankerModel.signals.count == 0 && $0.signals.count >= RankerModel.signals.count })
            #expect(try store.blendExamples(newest: 3) == Array(all.suffix(3)))
            let newest = try store.newestBlendExample()
            #expect(newest >= Int64(all.count))
            #expect(try store.pruneBlendExamples(keep: 3) == all.count - 3)
            #expect(try store.blendExamples(newest: 1000) == Array(all.suffix(3)))
            #expect(try store.newestBlendExample() == newest)
            #expect(try store.pruneBlendExamples(keep: 3) == 0)
        }
    }
}
