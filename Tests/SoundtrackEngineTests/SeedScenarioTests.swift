import Foundation
import SoundtrackCatalog
import SoundtrackContext
import Testing

@testable import SoundtrackEngine

@Suite("Seed scenarios")
struct SeedScenarioTests {
    let engine = Fixtures.engine()

    @Test("A library morning gets a calm bin from the study prior")
    func libraryMorningIsCalm() {
        var state = engine.newUser("u-1")
        let (pick, _) = engine.pick(Fixtures.library(), state: &state)
        #expect(pick.bin.created)
        let bin = state.bins[0]
        #expect(bin.prior == "study")
        #expect(bin.label.contains("study"))
        #expect(bin.label.contains("library"))
        #expect(Fixtures.meanEnergy(bin) < Fixtures.catalogMeanEnergy - 0.15)
        #expect(!pick.track.title.isEmpty)
        #expect(pick.why.contains { $0.feature.hasPrefix("calendar: ") || $0.feature.hasPrefix("place") })
        #expect(pick.why.allSatisfy { !$0.feature.contains(".") }, "explanations name features as a person would, never a slot")
    }

    @Test("The gym with high cadence and heart rate gets a high-energy bin")
    func gymIsHighEnergy() {
        var state = engine.newUser("u-1")
        _ = engine.pick(Fixtures.gym(), state: &state)
        let bin = state.bins[0]
        #expect(bin.prior == "workout")
        #expect(Fixtures.meanEnergy(bin) > 0.75)
        #expect(Fixtures.meanEnergy(bin) > Fixtures.catalogMeanEnergy + 0.1)
    }

    @Test("Car Bluetooth gets the commute bin")
    func carIsCommute() {
        var state = engine.newUser("u-1")
        let (pick, _) = engine.pick(Fixtures.car(), state: &state)
        let bin = state.bins[0]
        #expect(["commute", "driving"].contains(bin.prior ?? ""))
        #expect(pick.bin.label.contains("driving") || pick.bin.label.contains("car"))
    }

    @Test("Known contexts return to their own bins instead of creating new ones")
    func contextsFindTheirBins() {
        var state = engine.newUser("u-1")
        let lib = engine.pick(Fixtures.library(), state: &state).pick.bin.id
        let gym = engine.pick(Fixtures.gym(), state: &state).pick.bin.id
        let car = engine.pick(Fixtures.car(), state: &state).pick.bin.id
        #expect(Set([lib, gym, car]).count == 3)
        // The next day, at slightly different times.
        let lib2 = engine.pick(Fixtures.library(at: "2026-03-12T10:20:00+01:00"), state: &state).pick
        let gym2 = engine.pick(Fixtures.gym(at: "2026-03-12T18:05:00+01:00"), state: &state).pick
        let car2 = engine.pick(Fixtures.car(at: "2026-03-12T07:55:00+01:00"), state: &state).pick
        #expect(lib2.bin.id == lib && !lib2.bin.created)
        #expect(gym2.bin.id == gym && !gym2.bin.created)
        #expect(car2.bin.id == car && !car2.bin.created)
        #expect(state.bins.count == 3)
        #expect(lib2.alternatives.count == 2)
    }

    @Test("Three dislikes in a row switch to another bin, and the fourth pick comes from it")
    func threeDislikesSwitch() throws {
        var state = engine.newUser("u-1")
        // Two bins: gym first, then the library session.
        _ = engine.pick(Fixtures.gym(at: "2026-03-11T07:00:00+01:00"), state: &state)
        var t = Fixtures.at("2026-03-11T09:40:00+01:00")
        var first: String?
        var switched: Int?
        for i in 0..<3 {
            let (pick, record) = engine.pick(Fixtures.library(at: t.rfc3339), state: &state)
            if first == nil { first = pick.bin.id }
            #expect(pick.bin.id == first, "pick \(i + 1) stays in the bin until the third dislike")
            let outcome = engine.feedback(
                FeedbackEvent(id: "ev-\(i)", user: "u-1", at: t.adding(1), track: pick.track.id, signal: .dislike, pickId: pick.pickId),
                pick: record, state: &state)
            #expect(outcome.dislikeStreak == (i < 2 ? i + 1 : 0))
            if i < 2 { #expect(outcome.switchedTo == nil) } else { switched = outcome.switchedTo }
            t = t.adding(2)
        }
        let target = try #require(switched)
        #expect("b-\(target)" != first)
        let fourth = engine.pick(Fixtures.library(at: t.rfc3339), state: &state).pick
        #expect(fourth.bin.id == "b-\(target)")
        #expect(!fourth.bin.created)
    }

    @Test("Dislikes move to another song of the same bin; likes join the bin")
    func dislikeMovesOnLikeJoins() throws {
        var state = engine.newUser("u-1")
        var t = Fixtures.at("2026-03-11T09:40:00+01:00")
        let (p1, r1) = engine.pick(Fixtures.library(at: t.rfc3339), state: &state)
        _ = engine.feedback(FeedbackEvent(id: "a", user: "u-1", at: t, track: p1.track.id, signal: .skip, pickId: p1.pickId), pick: r1, state: &state)
        t = t.adding(3)
        let (p2, r2) = engine.pick(Fixtures.library(at: t.rfc3339), state: &state)
        #expect(p2.bin.id == p1.bin.id)
        #expect(p2.track.id != p1.track.id)
        let other = Fixtures.catalog.tracks.first { t in !state.bins[0].songs.contains { $0.trackId == t.id } }!.id
        let o = engine.feedback(FeedbackEvent(id: "b", user: "u-1", at: t, track: other, signal: .like, pickId: p2.pickId), pick: r2, state: &state)
        #expect(o.joinedBin)
        // The liked track joins with its like (its nearest catalog tracks after it, without evidence).
        #expect(state.bins[0].songs.first { $0.trackId == other } == BinSong(trackId: other, likes: 1, dislikes: 0))
        #expect(state.bins[0].songs.first { $0.trackId == p1.track.id }?.dislikes == 1)
    }

    @Test("The same seed gives the same picks; another seed gives others")
    func seededDeterminism() {
        func run(_ seed: UInt64) -> [String] {
            let e = Fixtures.engine(seed: seed)
            var state = e.newUser("u-1")
            var out: [String] = []
            var t = Fixtures.at("2026-03-11T09:40:00+01:00")
            for i in 0..<12 {
                let s = [Fixtures.library(at: t.rfc3339), Fixtures.gym(at: t.rfc3339), Fixtures.car(at: t.rfc3339)][i % 3]
                let p = e.pick(s, state: &state, top: 3).pick
                out.append(p.json(includeRanked: true).serialized())
                t = t.adding(5)
            }
            return out
        }
        #expect(run(11) == run(11))
        #expect(run(11) != run(12))
    }

    @Test("No track repeats within the repeat window")
    func repeatWindow() {
        var state = engine.newUser("u-1")
        var t = Fixtures.at("2026-03-11T09:40:00+01:00")
        var seen: [String] = []
        for _ in 0..<30 {
            let p = engine.pick(Fixtures.library(at: t.rfc3339), state: &state).pick
            seen.append(p.track.id)
            t = t.adding(4)
        }
        let window = Fixtures.config.repeatWindow
        for i in seen.indices {
            let recent = seen[max(0, i - window + 1)..<i]
            #expect(!recent.contains(seen[i]), "track \(seen[i]) repeated within \(window) picks")
        }
    }

    @Test("Likes pull the centroid toward the context and raise agreeing weights")
    func learningMovesCentroidAndWeights() throws {
        var state = engine.newUser("u-1")
        let t = Fixtures.at("2026-03-11T09:40:00+01:00")
        let (p, r) = engine.pick(Fixtures.library(at: t.rfc3339), state: &state)
        let later = Fixtures.library(at: "2026-03-11T09:58:00+01:00")
        var ev = FeedbackEvent(id: "x", user: "u-1", at: later.at, track: p.track.id, signal: .like, snapshot: later)
        ev.pickId = nil
        let todCos = FeatureLayout.require("time.tod_cos")
        let before = state.bins[0].centroid[todCos]
        let x = engine.extractor.extract(later, places: &state.places, vocabulary: &state.vocabulary).values[todCos]
        _ = engine.feedback(ev, pick: nil, state: &state)
        let after = state.bins[0].centroid[todCos]
        #expect(abs(after - x) < abs(before - x))
        #expect(state.bins.count == 1, "the same context, the same bin")
        #expect(state.bins[0].observations == 2, "the event's snapshot was served by the bin")
        #expect(state.changes.weights)
        #expect(abs(state.weights.reduce(0, +) - Fixtures.config.defaultWeights.reduce(0, +)) < 0.01)
        _ = r
    }

    @Test("A missing section does not count as evidence")
    func missingIsNotZero() {
        var state = engine.newUser("u-1")
        _ = engine.pick(Fixtures.library(), state: &state)
        var bare = Fixtures.library(at: "2026-03-12T09:50:00+01:00")
        bare.weather = nil
        bare.bluetooth = nil
        let p = engine.pick(bare, state: &state).pick
        #expect(!p.bin.created)
        let vocabulary = FeatureVocabulary()
        let missing = Set(
            FeatureLayout.slots.indices.filter { [.weather, .bluetooth].contains(FeatureLayout.slots[$0].group) }
                .map { vocabulary.displayName(slot: $0) })
        #expect(!p.why.contains { missing.contains($0.feature) })
    }
}
