import Foundation
import SoundtrackCatalog
import SoundtrackContext
import Testing

@testable import SoundtrackEngine

/// A like teaches the bin more than one song (docs/scoring.md, "Feedback"; issue 43, item 4).
@Suite("A like adds the liked track's nearest catalog tracks to the bin")
struct LikeNeighboursTests {
    /// The engine with `like_neighbours` set to `n`, and new bins without seed songs (so that the
    /// bin's songs are what the picks and likes put there).
    func engine(neighbours n: Int) -> Recommender {
        var config = Fixtures.config
        config.likeNeighbours = n
        config.seedTracksPerNewBin = 0
        return Fixtures.engine().with(config: config)
    }

    /// A pick for the gym, and a like of its track.
    func likePick(_ engine: Recommender, state: inout UserState, id: String = "e-1") throws -> (track: String, bin: Int) {
        let record = engine.pick(Fixtures.gym(), state: &state).record
        let event = FeedbackEvent(
            id: id, user: "u-1", at: Fixtures.at("2026-03-11T17:33:00+01:00"), track: record.trackId, signal: .like, pickId: record.pickId)
        _ = engine.feedback(event, pick: record, state: &state)
        return (record.trackId, state.binIndex(number: record.binNumber)!)
    }

    @Test("The liked track's nearest tracks join the bin's songs without evidence; those already there are left alone")
    func neighboursJoinWithoutEvidence() throws {
        let engine = engine(neighbours: 2)
        var state = engine.newUser("u-1")
        let before = engine.pick(Fixtures.gym(), state: &state).record
        var fresh = engine.newUser("u-1")
        let (track, bin) = try likePick(engine, state: &fresh)
        #expect(track == before.trackId, "the same pick in a fresh state")
        let index = Fixtures.catalog
        let row = try #require(index.row(of: track))
        let nearest = index.similar(toTrack: row, k: 2).map { index.id(ofRow: $0.row) }
        try #require(nearest.count == 2)
        let songs = fresh.bins[bin].songs
        for id in nearest {
            let song = try #require(songs.first { $0.trackId == id }, "\(id) joined the bin")
            #expect(song.likes == 0 && song.dislikes == 0 && song.rating == 0)
        }
        #expect(songs.first { $0.trackId == track }?.likes == 1)

        // A second like of the same track adds nothing new: its neighbours are in the bin.
        let record = engine.pick(Fixtures.gym(at: "2026-03-11T17:40:00+01:00"), state: &fresh).record
        let count = try #require(fresh.bins.first { $0.number == fresh.bins[bin].number }).songs.count
        _ = engine.feedback(
            FeedbackEvent(id: "e-2", user: "u-1", at: Fixtures.at("2026-03-11T17:41:00+01:00"), track: track, signal: .like, pickId: record.pickId),
            pick: record, state: &fresh)
        let after = try #require(fresh.bins.first { $0.number == fresh.bins[bin].number })
        #expect(after.songs.count == count)
        #expect(after.songs.first { $0.trackId == track }?.likes == 2)
    }

    @Test("like_neighbours 0 adds only the liked track, as before")
    func zeroAddsNone() throws {
        let with = engine(neighbours: 1), without = engine(neighbours: 0)
        var a = with.newUser("u-1"), b = without.newUser("u-1")
        let (_, binA) = try likePick(with, state: &a)
        let (_, binB) = try likePick(without, state: &b)
        #expect(a.bins[binA].songs.count == b.bins[binB].songs.count + 1)
    }

    @Test("A dislike adds no neighbour")
    func dislikeAddsNone() throws {
        let engine = engine(neighbours: 3)
        var state = engine.newUser("u-1")
        let record = engine.pick(Fixtures.gym(), state: &state).record
        let bin = try #require(state.binIndex(number: record.binNumber))
        let count = state.bins[bin].songs.count
        _ = engine.feedback(
            FeedbackEvent(id: "e-1", user: "u-1", at: Fixtures.at("2026-03-11T17:33:00+01:00"), track: record.trackId, signal: .dislike, pickId: record.pickId),
            pick: record, state: &state)
        #expect(state.bins[bin].songs.count == count)
    }

    @Test("A track with neither sound nor genres has no neighbours: the bin holds the same songs as with like_neighbours 0")
    func featurelessTrackHasNone() throws {
        let tracks = (1...40).map { Track(id: "m-\($0)", title: "Movie \($0)", artist: "") }
        let catalog = CatalogIndex(tracks: tracks)
        func songs(neighbours: Int) throws -> [String] {
            var config = Fixtures.config
            config.likeNeighbours = neighbours
            config.seedTracksPerNewBin = 0  // the bin holds what the like put there, nothing else
            let engine = Recommender(config: config, catalog: IndexCatalog(catalog), priors: Fixtures.priors, seed: 7)
            var state = engine.newUser("u-1")
            let snapshot = Snapshot(user: "u-1", at: Fixtures.at("2026-03-11T20:00:00+01:00"), tags: ["place": "cinema"])
            _ = engine.feedback(
                FeedbackEvent(id: "e-1", user: "u-1", at: Fixtures.at("2026-03-11T20:00:00+01:00"), track: "m-2", signal: .like, snapshot: snapshot),
                pick: nil, state: &state)
            return state.bins.flatMap(\.songs).map(\.trackId)
        }
        #expect(try songs(neighbours: 3) == ["m-2"])
        #expect(try songs(neighbours: 0) == ["m-2"])
    }

    @Test("like_neighbours is optional in a thresholds file (1 when absent) and refused outside 0…32, naming the field")
    func thresholdsField() throws {
        let file = try JSONSerialization.jsonObject(with: Data(contentsOf: Fixtures.root.appendingPathComponent("Models/thresholds.v2.json")))
        #expect((file as? [String: Any])?["like_neighbours"] as? Int == 1)
        #expect(try Fixtures.shippedThresholds(setting: "like_neighbours", to: 5).likeNeighbours == 5)
        #expect(try Fixtures.shippedThresholds(setting: "like_neighbours", to: nil).likeNeighbours == Thresholds.defaultLikeNeighbours)
        #expect {
            try Fixtures.shippedThresholds(setting: "like_neighbours", to: 33)
        } throws: { error in
            "\(error)".contains("like_neighbours")
        }
    }
}
