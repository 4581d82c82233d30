import Foundation
import SoundtrackCatalog
import SoundtrackContext
import Testing

@testable import SoundtrackEngine

/// The blend of the track ranker as a deployment learns it: queries made by liked events, the fit,
/// and the rule that promotes a new blend.
@Suite("Learning the blend")
struct BlendTests {
    static let n = RankerModel.signals.count
    static let pop = RankerModel.index(of: "pop")!
    static let audio = RankerModel.index(of: "audio")!
    static let ownMean = RankerModel.index(of: "own_mean")!

    /// `count` queries of ten candidates each, users `u-0…u-9` in turn: the liked track (first) has
    /// `strong` 1 higher than the others; every other signal is noise. `order` shifts the users.
    static func queries(_ count: Int, strong: Int, seed: UInt64, userOffset: Int = 0) -> [BlendExample] {
        var rng = SeededGenerator(seed: seed, user: "blend-test", counter: 0)
        return (0..<count).map { q in
            var signals: [Float] = []
            for c in 0..<10 {
                for i in 0..<n { signals.append(Float(rng.unit()) + (c == 0 && i == strong ? 1 : 0)) }
            }
            return BlendExample(user: "u-\((q + userOffset) % 10)", signals: signals)
        }
    }

    static func weights(_ pairs: [(Int, Float)]) -> [Float] {
        var w = [Float](repeating: 0, count: n)
        for (i, v) in pairs { w[i] = v }
        return w
    }

    @Test("The fit gives the signal that separates the liked track a large weight and the noise little")
    func fitFindsTheSignal() throws {
        let examples = Self.queries(300, strong: Self.pop, seed: 3)
        let fit = try #require(BlendFit.fit(sources: [examples]))
        #expect(BlendFit.lambdas.contains(fit.lambda))
        let others = fit.weights.indices.filter { $0 != Self.pop }.map { abs(fit.weights[$0]) }
        #expect(fit.weights[Self.pop] > 5 * (others.max() ?? 0), "\(fit.weights)")
        #expect(BlendFit.ndcg(examples, fit.weights) > 0.8)
        #expect(BlendFit.ndcg(examples, Self.weights([(Self.audio, 1)])) < 0.5)
    }

    @Test("The user's own evidence is never weighed backwards: a signal that separates the other way gets 0")
    func ownEvidenceStaysNonNegative() throws {
        // The liked track has own_mean 1 LOWER than the others: unconstrained, its weight would be negative.
        var examples = Self.queries(300, strong: Self.pop, seed: 5)
        for e in examples.indices {
            for c in 1..<10 { examples[e].signals[c * Self.n + Self.ownMean] += 1 }
        }
        let fit = try #require(BlendFit.fit(sources: [examples]))
        #expect(fit.weights[Self.ownMean] == 0, "\(fit.weights)")
        #expect(fit.weights[Self.pop] > 0)
        for i in RankerModel.nonNegativeSignals { #expect(fit.weights[i] >= 0, "\(RankerModel.signals[i]) \(fit.weights[i])") }
    }

    @Test("A new blend that beats the blend in use on the newest queries is promoted; its figures say so")
    func betterBlendIsPromoted() {
        let examples = Self.queries(400, strong: Self.pop, seed: 7)
        let bad = RankerModel(weights: Self.weights([(Self.audio, 1)]))
        let decision = BlendLearner().learn(examples, current: bad)
        #expect(decision.promoted)
        #expect(decision.validation == 80 && decision.training == 320)
        #expect(decision.ndcg > decision.currentNDCG)
        #expect(decision.reason.hasPrefix("promoted"))
        #expect(decision.candidate != nil)
    }

    @Test("A refit that loses on the newest queries is not promoted: the older queries taught another lesson")
    func worseRefitIsNotPromoted() throws {
        // The oldest 320 queries are decided by `pop`, the newest 80 by `audio`: the blend in use weighs
        // audio (right for the newest); the refit learns pop from the older ones and loses.
        let old = Self.queries(320, strong: Self.pop, seed: 9)
        let new = Self.queries(80, strong: Self.audio, seed: 10, userOffset: 3)
        let current = RankerModel(weights: Self.weights([(Self.audio, 1)]))
        let decision = BlendLearner().learn(old + new, current: current)
        #expect(!decision.promoted)
        #expect(decision.ndcg < decision.currentNDCG)
        #expect(decision.reason.hasPrefix("not promoted"))
    }

    @Test("Too few queries: no fit, and the blend in use stays")
    func tooFewQueries() {
        let decision = BlendLearner().learn(Self.queries(20, strong: Self.pop, seed: 1), current: RankerModel(weights: Self.weights([])))
        #expect(decision.candidate == nil && !decision.promoted)
    }

    @Test("A liked event teaches a query from the state before it; making it changes nothing the event does")
    func likedEventTeachesAQuery() throws {
        let engine = Fixtures.engine().with(community: SharedCommunity())
        var a = engine.newUser("u-1")
        var b = engine.newUser("u-1")
        let tracks = Fixtures.catalog.tracks.prefix(6).map(\.id)
        for (i, track) in tracks.enumerated() {
            let snapshot = Fixtures.library(at: "2026-03-1\(i + 1)T09:40:00+01:00")
            let signal: Signal = i == 2 ? .dislike : .like
            let event = FeedbackEvent(id: "e-\(i)", user: "u-1", at: snapshot.at, track: track, signal: signal, snapshot: snapshot)
            let taught = engine.feedback(event, pick: nil, state: &a, position: Int64(i + 1))
            var c = b
            let untaught = engine.feedback(event, pick: nil, state: &c, position: nil)
            let plain = engine.feedback(event, pick: nil, state: &b)
            #expect(taught.outcome == plain && untaught.outcome == plain)
            #expect(untaught.example == nil)
            #expect((taught.example != nil) == (signal == .like), "event \(i)")
            if let example = taught.example {
                #expect(example.user == "u-1")
                #expect(example.candidates >= 2 && example.candidates <= BlendExample.maxOthers + 1)
            }
            #expect(a.bins.map(\.songs) == b.bins.map(\.songs))
            #expect(a.bins.map(\.centroid) == b.bins.map(\.centroid))
            #expect(a.weights == b.weights)
        }
    }

    @Test("A query leaves out the tracks this listening session's feedback was about; a new session forgets them")
    func queryLeavesOutTheSession() throws {
        let engine = Fixtures.engine().with(community: SharedCommunity())
        var state = engine.newUser("u-1")
        let tracks = Fixtures.catalog.tracks.prefix(8).map(\.id)
        func like(_ i: Int, at time: String) throws -> BlendExample? {
            let snapshot = Fixtures.library(at: time)
            let event = FeedbackEvent(id: "e-\(i)-\(time)", user: "u-1", at: snapshot.at, track: tracks[i], signal: .like, snapshot: snapshot)
            return engine.feedback(event, pick: nil, state: &state, position: 1).example
        }
        // Three likes a few minutes apart: one session.
        for (i, minute) in [(0, 40), (1, 44), (2, 48)] { _ = try like(i, at: "2026-03-11T09:\(minute):00+01:00") }
        #expect(state.session.tracks == Array(tracks.prefix(3)))
        // A query ranks the liked track among the bin's candidates less the session's tracks: with every
        // candidate but the liked one in the session, nothing is left to rank it against.
        let index = Fixtures.catalog
        var probe = state
        var rng = SeededGenerator(seed: 1)
        let pool = engine.candidateRows(binIndex: 0, attributes: [], state: &probe, index: index, rng: &rng)
        #expect(pool.count > 10)
        let x = engine.features(of: Fixtures.library(at: "2026-03-11T09:52:00+01:00"), state: &probe)
        let liked = index.tracks[pool[0]].id
        var open = state
        open.session.tracks = []
        #expect(engine.blendExample(liked: liked, x: x, binIndex: 0, eventId: "q", state: &open)?.candidates == min(64, pool.count))
        var full = state
        full.session.tracks = pool.map { index.tracks[$0].id }
        #expect(engine.blendExample(liked: liked, x: x, binIndex: 0, eventId: "q", state: &full) == nil)
        full.session.tracks = pool.dropFirst(4).map { index.tracks[$0].id }
        #expect(engine.blendExample(liked: liked, x: x, binIndex: 0, eventId: "q", state: &full)?.candidates == 4)
        // A day later: a new session, which starts from the new event only.
        _ = try like(4, at: "2026-03-12T09:40:00+01:00")
        #expect(state.session.tracks == [tracks[4]])
    }

    @Test("Sampling: every event of the log's first part teaches, later a share that shrinks with the position, by the event's id alone")
    func sampling() {
        let dense = BlendExampleSampling.dense
        #expect((1...dense).allSatisfy { BlendExampleSampling.admits(position: $0, eventId: "e-\($0)") })
        let far = (0..<20_000).filter { BlendExampleSampling.admits(position: 10 * dense, eventId: "e-\($0)") }.count
        #expect(far > 1_600 && far < 2_400, "\(far) of 20,000 at a tenth")
        #expect(BlendExampleSampling.admits(position: 5 * dense, eventId: "x") == BlendExampleSampling.admits(position: 5 * dense, eventId: "x"))
    }

    @Test("The most liked tracks are kept in order as likes come, as a sort of every track would give them")
    func mostLikedKeptInOrder() {
        var community = Community()
        var rng = SeededGenerator(seed: 4, user: "top", counter: 0)
        for e in 0..<3_000 {
            let row = Int(rng.next() % 200)
            community.record(user: "u-\(e % 37)", row: row, like: rng.unit() < 0.7, dislike: false, attributes: [UInt64(row % 3)])
        }
        let all = (0..<200).filter { community.stats(of: $0).likes > 0 }
            .sorted { (community.stats(of: $0).likes, $1) > (community.stats(of: $1).likes, $0) }
        #expect(community.mostLiked(25) == Array(all.prefix(25)))
        let attribute: [UInt64] = [1]
        let inContext = (0..<200).filter { community.contextLikes(of: $0, attributes: attribute) > 0 }
            .sorted { (community.contextLikes(of: $0, attributes: attribute), $1) > (community.contextLikes(of: $1, attributes: attribute), $0) }
        #expect(community.contextMostLiked(attribute, limit: 10) == Array(inContext.prefix(10)))
    }
}
