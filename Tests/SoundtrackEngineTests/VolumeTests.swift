import Foundation
import SoundtrackCatalog
import SoundtrackContext
import Testing

@testable import SoundtrackEngine

/// A pick's suggested volume (docs/scoring.md, "Volume"; issue 43, item 2).
@Suite("Every pick suggests a volume, learned per person and bin from a prior per context kind")
struct VolumeTests {
    let engine = Fixtures.engine()

    /// The gym snapshot at `time` with the phone at `volume` (`nil`: none reported).
    func gym(_ time: String, volume: Double?) -> Snapshot {
        var s = Fixtures.gym(at: time)
        s.audio = volume.map { AudioState(route: .headphones, volume: $0) }
        return s
    }

    @Test("A new bin whose snapshots report no volume suggests its context kind's prior")
    func priorFirst() throws {
        var state = engine.newUser("u-1")
        let (pick, record) = engine.pick(gym("2026-03-11T17:30:00+01:00", volume: nil), state: &state)
        let bin = try #require(state.binIndex(number: record.binNumber))
        let prior = try #require(state.bins[bin].prior)
        let expected = try #require(Fixtures.priors.prior(named: prior)?.volume ?? Fixtures.priors.fallback.volume)
        #expect(pick.volume == expected)
    }

    @Test("Within the session's bin the pick suggests the volume the phone reports; at a context change, what the bin learned")
    func continuingKeepsThePersonsVolume() throws {
        var state = engine.newUser("u-1")
        // Three sessions at the gym, the phone at 0.2 each time (the workout prior says 0.75): the bin learns it.
        for day in 11...13 {
            _ = engine.pick(gym("2026-03-\(day)T17:30:00+01:00", volume: 0.2), state: &state)
        }
        // A new session, the phone at 0.3: the bin's learned volume, moved from the prior toward
        // 0.2 (a fresh person's first pick there stays near the prior), not the phone's.
        var fresh = engine.newUser("u-1")
        let prior = try #require(engine.pick(gym("2026-03-14T17:30:00+01:00", volume: 0.3), state: &fresh).pick.volume)
        let first = engine.pick(gym("2026-03-14T17:30:00+01:00", volume: 0.3), state: &state).pick
        let learned = try #require(first.volume)
        #expect(learned < prior - 0.1, "learned \(learned), a fresh person's \(prior)")
        #expect(abs(learned - 0.3) > 0.05, "the bin's volume, not the phone's: \(learned)")
        // Three minutes later, the same bin: the person has set the phone to 0.7 here; that stands.
        let next = engine.pick(gym("2026-03-14T17:33:00+01:00", volume: 0.7), state: &state).pick
        #expect(next.bin.id == first.bin.id)
        #expect(next.volume == 0.7)
    }

    @Test("A like at a volume teaches the bin that volume (the volume the like reports, not the pick's)")
    func likeTeaches() throws {
        func learned(likeAt volume: Double) throws -> Float {
            var state = engine.newUser("u-1")
            let (pick, record) = engine.pick(gym("2026-03-11T17:30:00+01:00", volume: 0.5), state: &state)
            let at = Fixtures.at("2026-03-11T17:31:00+01:00")
            _ = engine.feedback(
                FeedbackEvent(
                    id: "e-1", user: "u-1", at: at, track: pick.track.id, signal: .like, pickId: pick.pickId,
                    snapshot: gym(at.rfc3339, volume: volume)),
                pick: record, state: &state)
            let bin = try #require(state.bins.firstIndex { $0.id == pick.bin.id })
            return engine.learnedVolume(binIndex: bin, state: state)
        }
        let low = try learned(likeAt: 0.1), high = try learned(likeAt: 1.0)
        #expect(high > low + 0.05, "liked at 1.0: \(high), at 0.1: \(low)")
    }

    @Test("A prior's volume is optional, and refused outside 0…1 naming the field")
    func priorsField() throws {
        let url = Fixtures.root.appendingPathComponent("Models/priors.v1.json")
        var doc = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var contexts = try #require(doc["contexts"] as? [[String: Any]])
        #expect(try ColdStartPriors.decode(JSONSerialization.data(withJSONObject: doc)).contexts.allSatisfy { $0.volume != nil })
        contexts[0].removeValue(forKey: "volume")
        doc["contexts"] = contexts
        #expect(try ColdStartPriors.decode(JSONSerialization.data(withJSONObject: doc)).contexts[0].volume == nil)
        contexts[0]["volume"] = 1.5
        doc["contexts"] = contexts
        #expect {
            try ColdStartPriors.decode(JSONSerialization.data(withJSONObject: doc))
        } throws: { error in
            "\(error)".contains("contexts[0].volume")
        }
    }
}
