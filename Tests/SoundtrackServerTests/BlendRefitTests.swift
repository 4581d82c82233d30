import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackRules
import Testing

@testable import SoundtrackEngine
@testable import SoundtrackServer
@testable import SoundtrackStore

/// The service learns the blend again in the background from the feedback it acknowledged, and
/// ranks with a promoted blend from the next request on.
@Suite struct BlendRefitTests {
    /// Likes of `user`, in time order, between two contexts, each person coming back to a few tracks.
    static func likes(_ user: String, count: Int, tracks: [String]) -> String {
        let events = (0..<count).map { i in
            let at = String(format: "2026-03-14T%02d:%02d:00+01:00", 7 + i / 60, i % 60)
            let place = i % 2 == 0 ? "library" : "gym"
            let snapshot =
                #"{"user": "\#(user)", "at": "\#(at)", "location": {"place": "\#(place)"}, "motion": {"activity": "#
                + #""\#(place == "gym" ? "running" : "stationary")"}}"#
            return #"{"id": "b-\#(user)-\#(i)", "user": "\#(user)", "at": "\#(at)", "track": "\#(tracks[(i % 5) * 11 + i / 50])", "#
                + #""signal": "like", "snapshot": \#(snapshot)}"#
        }
        return "[" + events.joined(separator: ",") + "]"
    }

    @Test("Once 500 liked events taught their queries, a refit is recorded; a promoted blend ranks the next picks, which name it")
    func refitInTheBackground() async throws {
        let users = (0..<6).map { "u-\($0)" }
        let f = try Fixture(users: users) { $0.blendRefitInterval = .seconds(3600) }
        let tracks = try f.service.store.allTracks().map(\.id)
        let refits = try #require(f.api.refits)
        try await f.api.buildApplication().test(.router) { client in
            // Fewer than 500: nothing is due.
            let first = try await client.send(.post, "/v1/feedback", key: f.keys["u-0"], body: Self.likes("u-0", count: 100, tracks: tracks))
            #expect(first.status == .ok, "\(first.text)")
            refits.attemptIfDue()
            #expect(try f.service.store.blendHistory().blends.isEmpty)
            for u in users.dropFirst() {
                let r = try await client.send(.post, "/v1/feedback", key: f.keys[u], body: Self.likes(u, count: 100, tracks: tracks))
                #expect(r.status == .ok, "\(r.text)")
            }
            #expect(try f.service.store.newestBlendExample() == 600)
            refits.attemptIfDue()
            let (blends, inUse) = try f.service.store.blendHistory()
            #expect(blends.count == 1)
            let blend = try #require(blends.first)
            #expect(blend.training + blend.validation == 600 && blend.comparedWith == 0)
            #expect(inUse == (blend.promoted ? 1 : 0))
            #expect(f.api.live.rules.engine.ranker.version == inUse)
            let pick = try await client.send(.post, "/v1/picks", key: f.keys["u-1"], body: Doc.snapshot(user: "u-1"))
            #expect(pick.status == .ok, "\(pick.text)")
            #expect(pick.json["blend"] == .number(Double(inUse)))
            // Nothing new since: no second attempt.
            refits.attemptIfDue()
            #expect(try f.service.store.blendHistory().blends.count == 1)
        }
    }

    @Test("A refit that loses to the blend in use is recorded and not promoted: the service keeps ranking with the one in use")
    func losingRefitIsNotPromoted() async throws {
        let f = try Fixture(users: (0..<7).map { "u-\($0)" }) { $0.blendRefitInterval = .seconds(3600) }
        // 600 queries whose older part the liked track's popularity decides and whose newest part its
        // sound does; the blend in use weighs sound, which the refit on the older queries unlearns.
        let n = RankerModel.signals.count, pop = RankerModel.index(of: "pop")!, audio = RankerModel.index(of: "audio")!
        var rng = SeededGenerator(seed: 1, user: "refit", counter: 0)
        let rows: [FeedbackRow] = (0..<600).map { q in
            var signals: [Float] = []
            for c in 0..<10 {
                for i in 0..<n { signals.append(Float(rng.unit()) + (c == 0 && i == (q < 480 ? pop : audio) ? 1 : 0)) }
            }
            let user = "u-\(q % 7)"
            let event = FeedbackEvent(
                id: "x-\(q)", user: user, at: Timestamp(date: Date(timeIntervalSince1970: 1_773_000_000 + Double(q)), offsetSeconds: 0),
                track: (try? f.track) ?? "", signal: .like)
            return FeedbackRow(
                event: event, outcome: FeedbackOutcome(bin: 1, signal: .like, joinedBin: false, dislikeStreak: 0), seq: Int64(q / 7 + 1),
                keepSnapshot: false, example: BlendExample(user: user, signals: signals))
        }
        try f.service.store.commit([.feedbackRows(rows)])
        var weights = [Float](repeating: 0, count: n)
        weights[audio] = 1
        f.api.live.use(ranker: RankerModel(weights: weights))
        f.api.refits!.attemptIfDue()
        let (blends, inUse) = try f.service.store.blendHistory()
        #expect(blends.count == 1 && !blends[0].promoted && inUse == 0)
        #expect(blends[0].ndcg < blends[0].comparedNDCG)
        #expect(f.api.live.rules.engine.ranker.weights == weights)
    }
}
