import Foundation
import SoundtrackCatalog
import SoundtrackContext
import Testing

@testable import SoundtrackEngine

/// No rut (docs/scoring.md, "No rut"; issue 43, item 3): after `rut_minutes` of one style in a row
/// without a like, the next picks move away from it; a like resets it.
@Suite("No rut: a style played too long without a like gives way")
struct StyleRunTests {
    /// The engine with `rut_minutes` set (0: the guard off) and no exploration: picks are the best-ranked tracks.
    func engine(rutMinutes: Double) -> Recommender {
        var config = Fixtures.config
        config.rutMinutes = rutMinutes
        config.exploration = 0
        return Fixtures.engine().with(config: config)
    }

    /// Sixteen gym picks three minutes apart (45 minutes), liking each pick's track when `like`
    /// says so: the picks' styles and times in minutes.
    func gymSession(_ engine: Recommender, like: (Int) -> Bool = { _ in false }) throws -> [(style: UInt64?, minute: Int)] {
        var state = engine.newUser("u-1")
        let start = Fixtures.at("2026-03-11T17:30:00+01:00")
        var out: [(UInt64?, Int)] = []
        for i in 0..<16 {
            let t = start.adding(3 * i)
            let (pick, record) = engine.pick(Fixtures.gym(at: t.rfc3339), state: &state)
            let row = try #require(Fixtures.catalog.row(of: pick.track.id))
            out.append((TrackStyle.of(row: row, index: Fixtures.catalog), 3 * i))
            if like(i) {
                _ = engine.feedback(
                    FeedbackEvent(id: "e-\(i)", user: "u-1", at: t.adding(1), track: pick.track.id, signal: .like, pickId: pick.pickId),
                    pick: record, state: &state)
            }
        }
        return out
    }

    /// The longest time from the first to the last pick of a stretch of one style, in minutes.
    func longestRun(_ picks: [(style: UInt64?, minute: Int)]) -> Int {
        var longest = 0, start = 0
        for i in picks.indices {
            if i > 0, picks[i].style == nil || picks[i].style != picks[i - 1].style { start = i }
            if picks[i].style != nil { longest = max(longest, picks[i].minute - picks[start].minute) }
        }
        return longest
    }

    @Test("Without the guard the gym plays one style for 30 minutes or more; with it, no style lasts 30 minutes")
    func guardBreaksTheRun() throws {
        let off = try gymSession(engine(rutMinutes: 0))
        #expect(longestRun(off) >= 30, "the scenario of the issue: one style the whole workout")
        let on = try gymSession(engine(rutMinutes: 30))
        #expect(longestRun(on) < 30)
        // The guard changes only picks after the run's 30 minutes: the first ten are the same.
        #expect(on.prefix(10).map(\.style) == off.prefix(10).map(\.style))
    }

    @Test("A like resets the run: liked picks may keep their style past 30 minutes")
    func likeResets() throws {
        let liked = try gymSession(engine(rutMinutes: 30), like: { _ in true })
        let unliked = try gymSession(engine(rutMinutes: 30))
        #expect(longestRun(liked) >= 30)
        #expect(longestRun(unliked) < 30)
    }

    @Test("A session that ends ends the run; a read of the run's start is the first pick of the style")
    func runFollowsTheSession() throws {
        let engine = engine(rutMinutes: 30)
        var state = engine.newUser("u-1")
        let t = Fixtures.at("2026-03-11T17:30:00+01:00")
        _ = engine.pick(Fixtures.gym(at: t.rfc3339), state: &state)
        let run = try #require(state.session.styleRun)
        #expect(run.since == t.date)
        // Three hours later (past the session timeout) the session starts over with the new pick.
        let later = t.adding(180)
        _ = engine.pick(Fixtures.gym(at: later.rfc3339), state: &state)
        #expect(state.session.styleRun?.since == later.date)
    }

    @Test("TrackStyle: sound regions by energy thirds and valence halves; else the genre family; else none")
    func styles() {
        func track(_ id: String, energy: Double? = nil, valence: Double? = nil, genres: [String] = []) -> Track {
            Track(id: id, title: id, artist: "", genres: genres, audio: AudioFeatures(energy: energy, valence: valence))
        }
        let index = CatalogIndex(tracks: [
            track("a", energy: 0.85, valence: 0.7), track("b", energy: 0.93, valence: 0.9), track("c", energy: 0.85, valence: 0.3),
            track("d", energy: 0.2, valence: 0.7), track("e", genres: ["dance pop"]), track("f", genres: ["post-teen pop", "rock"]),
            track("g", genres: ["album rock"]), track("h")
        ])
        func style(_ id: String) -> UInt64? { TrackStyle.of(row: index.row(of: id)!, index: index) }
        #expect(style("a") == style("b"))
        #expect(style("a") != style("c"))
        #expect(style("a") != style("d"))
        #expect(style("e") == style("f"))
        #expect(style("e") != style("g"))
        #expect(style("h") == nil)
        #expect(style("a") != nil && style("a") != style("e"))
    }

    @Test("rut_minutes is optional in a thresholds file (30 when absent) and refused outside 0…1440, naming the field")
    func thresholdsField() throws {
        let file = try JSONSerialization.jsonObject(with: Data(contentsOf: Fixtures.root.appendingPathComponent("Models/thresholds.v2.json")))
        #expect((file as? [String: Any])?["rut_minutes"] as? Int == 30)
        #expect(try Fixtures.shippedThresholds(setting: "rut_minutes", to: 45).rutMinutes == 45)
        #expect(try Fixtures.shippedThresholds(setting: "rut_minutes", to: nil).rutMinutes == Thresholds.defaultRutMinutes)
        #expect {
            try Fixtures.shippedThresholds(setting: "rut_minutes", to: -1)
        } throws: { error in
            "\(error)".contains("rut_minutes")
        }
    }
}
