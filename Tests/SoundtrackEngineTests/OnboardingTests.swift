import Foundation
import SoundtrackCatalog
import SoundtrackContext
import Testing

@testable import SoundtrackEngine

/// Distance between two tracks' audio features (mean absolute difference over the features both
/// have, tempo scaled to 0…1), computed here independently of the index's similarity function.
private func audioDistance(_ a: AudioFeatures, _ b: AudioFeatures) -> Double? {
    let pairs: [(Double?, Double?)] = [
        (a.tempo.map { $0 / 200 }, b.tempo.map { $0 / 200 }), (a.energy, b.energy), (a.valence, b.valence),
        (a.danceability, b.danceability), (a.acousticness, b.acousticness), (a.instrumentalness, b.instrumentalness),
        (a.speechiness, b.speechiness)
    ]
    let d = pairs.compactMap { p -> Double? in
        guard let x = p.0, let y = p.1 else { return nil }
        return abs(x - y)
    }
    return d.count >= 4 ? d.reduce(0, +) / Double(d.count) : nil
}

private func genreJaccard(_ a: [String], _ b: [String]) -> Double {
    let x = Set(a), y = Set(b)
    return x.isEmpty && y.isEmpty ? 0 : Double(x.intersection(y).count) / Double(x.union(y).count)
}

@Suite("Cold start and onboarding")
struct OnboardingTests {
    let engine = Fixtures.engine()

    /// The mean distance of a set of tracks to a prior's target profile.
    func distance(toProfile p: AudioProfile, rows: [Int]) -> Double {
        var total = 0.0, n = 0
        for r in rows {
            let t = Fixtures.catalog.tracks[r]
            let f = AudioProfile(t.audio)
            var d: Float = 0, m: Float = 0
            for i in 0..<AudioProfile.dimension {
                if let x = f[i], let y = p[i] { d += abs(x - y); m += 1 }
            }
            if m > 0 { total += Double(d / m); n += 1 }
        }
        return total / Double(max(n, 1))
    }

    @Test(
        "A new user's first pick fits the context's prior profile (workout, study, driving)",
        arguments: [("workout", Fixtures.gym()), ("study", Fixtures.library()), ("driving", Fixtures.car())])
    func firstPickFitsPrior(_ expected: String, _ snapshot: Snapshot) throws {
        var state = engine.newUser("u-1")
        let (pick, _) = engine.pick(snapshot, state: &state)
        #expect(pick.bin.created)
        let bin = state.bins[0]
        let prior = try #require(Fixtures.priors.prior(named: bin.prior ?? ""))
        #expect(prior.name == expected || (expected == "driving" && prior.name == "commute"))
        let binRows = bin.songs.compactMap { Fixtures.catalog.row(of: $0.trackId) }
        let pickRow = try #require(Fixtures.catalog.row(of: pick.track.id))
        // Every 20th catalog track as the reference population.
        let population = Array(stride(from: 0, to: Fixtures.catalog.count, by: 20))
        let binD = distance(toProfile: prior.profile, rows: binRows)
        let pickD = distance(toProfile: prior.profile, rows: [pickRow])
        let popD = distance(toProfile: prior.profile, rows: population)
        #expect(binD < popD * 0.6, "bin \(binD) vs catalog \(popD)")
        #expect(pickD < popD, "first pick \(pickD) vs catalog \(popD)")
    }

    @Test("Onboarding from one song: a new bin with the song liked and songs closer to it than random catalog songs")
    func onboardingBinIsCloseToTheSong() throws {
        let catalog = Fixtures.catalog
        var rng = SeededGenerator(seed: 99)
        var binDistances: [Double] = [], randomDistances: [Double] = []
        var binGenres: [Double] = [], randomGenres: [Double] = []
        // Twenty songs spread over the catalog, each onboarding a fresh user at the gym.
        for k in 0..<20 {
            let songRow = (k * 997 + 13) % catalog.count
            let song = catalog.tracks[songRow]
            var state = engine.newUser("u-\(k)")
            let (pick, record) = engine.onboard(Fixtures.gym("u-\(k)"), song: song.id, state: &state)
            #expect(pick.track.id == song.id)
            #expect(pick.source == "onboarding")
            #expect(pick.bin.created)
            #expect(record.trackId == song.id)
            #expect(state.bins.count == 1)
            let bin = state.bins[0]
            #expect(bin.songs.first?.trackId == song.id)
            #expect(bin.songs.first?.likes == 1)
            #expect(bin.songs.count == engine.config.seedTracksPerNewBin)
            #expect(Set(bin.songs.map(\.trackId)).count == bin.songs.count)
            for s in bin.songs.dropFirst() {
                let t = catalog.tracks[try #require(catalog.row(of: s.trackId))]
                if let d = audioDistance(song.audio, t.audio) { binDistances.append(d) }
                binGenres.append(genreJaccard(song.genres, t.genres))
            }
            for _ in 0..<(bin.songs.count - 1) {
                let t = catalog.tracks[Int(rng.next() % UInt64(catalog.count))]
                if let d = audioDistance(song.audio, t.audio) { randomDistances.append(d) }
                randomGenres.append(genreJaccard(song.genres, t.genres))
            }
        }
        let meanBin = binDistances.reduce(0, +) / Double(binDistances.count)
        let meanRandom = randomDistances.reduce(0, +) / Double(randomDistances.count)
        let genreBin = binGenres.reduce(0, +) / Double(binGenres.count)
        let genreRandom = randomGenres.reduce(0, +) / Double(randomGenres.count)
        // Measured on the real catalog: the bin's songs are several times closer than random songs.
        #expect(meanBin < meanRandom * 0.5, "bin \(meanBin) vs random \(meanRandom)")
        #expect(genreBin > genreRandom + 0.2, "genre overlap bin \(genreBin) vs random \(genreRandom)")
    }

    @Test("Onboarding prefers the user's library when it holds similar songs")
    func libraryFirst() throws {
        let catalog = Fixtures.catalog
        let songRow = 1234
        // The library: the song's 30 nearest catalog tracks beyond the first 11.
        let near = catalog.similar(toTrack: songRow, k: 40).map { catalog.tracks[$0.row].id }
        let library = Array(near.suffix(20))
        var state = engine.newUser("u-1")
        _ = engine.onboard(Fixtures.library(), song: catalog.tracks[songRow].id, library: library, state: &state)
        let members = Set(state.bins[0].songs.map(\.trackId))
        #expect(members.intersection(library).count >= 5)
    }

    @Test("Feedback on onboarding songs decides: likes keep them first, three dislikes start another bin")
    func feedbackDecides() throws {
        var state = engine.newUser("u-1")
        let snap = Fixtures.gym()
        let song = Fixtures.catalog.tracks[500].id
        _ = engine.onboard(snap, song: song, state: &state)
        let fill = state.bins[0].songs.dropFirst().map(\.trackId)
        func event(_ n: Int, _ track: String, _ signal: Signal) -> FeedbackEvent {
            FeedbackEvent(id: "e-\(n)", user: "u-1", at: snap.at.adding(n), track: track, signal: signal, playedMs: nil, pickId: nil, snapshot: snap)
        }
        _ = engine.feedback(event(1, fill[0], .like), pick: nil, state: &state)
        #expect(state.bins[0].songs.first { $0.trackId == fill[0] }?.likes == 1)
        var last: FeedbackOutcome?
        for (i, t) in fill.dropFirst().prefix(3).enumerated() {
            last = engine.feedback(event(2 + i, t, .dislike), pick: nil, state: &state)
        }
        #expect(last?.switchedTo != nil)
        #expect(state.bins.count == 2)
    }

    /// A bin's song rows (the candidates' first part) are those of its songs in like-rate order,
    /// looked up again after every change of the songs: added, reordered by feedback, replaced by a
    /// track the catalog lacks, removed.
    @Test func songRowsFollowTheSongs() {
        let engine = Fixtures.engine()
        let index = Fixtures.catalog
        func fresh(_ bin: Bin) -> [Int32] {
            var b = bin
            b.orderSongsByRate()
            return b.rateOrder!.map { Int32(index.row(of: b.songs[Int($0)]) ?? -1) }
        }
        var state = engine.newUser("u-1")
        let ids = (0..<6).map { index.tracks[$0 * 7].id }
        var bin = Bin(
            number: 1, label: "", centroid: [], spread: [], observed: [], observations: 1,
            songs: ids.prefix(3).map { BinSong(trackId: $0) }, prior: nil, createdAt: Date(), updatedAt: Date())
        bin.songs[2].likes = 2
        state.bins = [bin]
        var steps = 0
        func check(_ what: String) {
            let rows = engine.songRowsByRate(binIndex: 0, state: &state, index: index)
            #expect(rows == fresh(state.bins[0]), "\(what)")
            #expect(state.bins[0].rateRows == rows, "kept after \(what)")
            steps += 1
        }
        check("first use")
        #expect(engine.songRowsByRate(binIndex: 0, state: &state, index: index).first == Int32(index.row(of: ids[2])!))
        state.bins[0].songs.append(BinSong(trackId: ids[3]))
        check("a song added")
        state.bins[0].songs[3].likes = 5
        check("a song liked to the top")
        #expect(engine.songRowsByRate(binIndex: 0, state: &state, index: index).first == Int32(index.row(of: ids[3])!))
        state.bins[0].songs[0] = BinSong(trackId: "not-in-the-catalog", dislikes: 3)
        check("a song replaced by an unknown track")
        #expect(engine.songRowsByRate(binIndex: 0, state: &state, index: index).last == -1)
        state.bins[0].songs.remove(at: 1)
        check("a song removed")
        #expect(steps == 5)
    }

    /// The genres a bin's sound search asks for: the most frequent among its liked tracks, ties by
    /// name, equal to that definition counted with a table and sorted (ties at the cut included).
    @Test func topGenresAreTheMostFrequentTiesByName() {
        func reference(_ rows: [Int], _ k: Int, _ index: CatalogIndex) -> [Int32] {
            var counts: [Int32: Int] = [:]
            for r in rows { for g in index.genreNumbers(ofRow: r) { counts[g, default: 0] += 1 } }
            return counts.sorted {
                $0.value != $1.value ? $0.value > $1.value : index.genreName(number: $0.key) < index.genreName(number: $1.key)
            }.prefix(k).map(\.key)
        }
        // Ties: "alpha", "beta" and "zeta" twice each, "mid" three times: mid, then by name.
        let small = CatalogIndex(tracks: [
            Track(id: "a", title: "a", artist: "x", genres: ["zeta", "alpha", "mid"], popularity: nil, audio: AudioFeatures()),
            Track(id: "b", title: "b", artist: "x", genres: ["alpha", "beta", "mid"], popularity: nil, audio: AudioFeatures()),
            Track(id: "c", title: "c", artist: "x", genres: ["zeta", "beta", "mid"], popularity: nil, audio: AudioFeatures())
        ])
        let names = { (g: [Int32]) in g.map { small.genreName(number: $0) } }
        #expect(names(Recommender.topGenres(ofRows: [0, 1, 2], count: 3, index: small)) == ["mid", "alpha", "beta"])
        #expect(names(Recommender.topGenres(ofRows: [0, 1, 2], count: 9, index: small)) == ["mid", "alpha", "beta", "zeta"])
        #expect(Recommender.topGenres(ofRows: [], count: 5, index: small).isEmpty)
        #expect(Recommender.topGenres(ofRows: [0], count: 0, index: small).isEmpty)
        // Random sets of catalog rows, with repeats.
        let index = Fixtures.catalog
        var rng = SeededGenerator(seed: 11)
        for _ in 0..<200 {
            let rows = (0..<Int.random(in: 1...40, using: &rng)).map { _ in Int.random(in: 0..<index.count, using: &rng) }
            let k = Int.random(in: 1...8, using: &rng)
            #expect(Recommender.topGenres(ofRows: rows, count: k, index: index) == reference(rows, k, index))
        }
    }
}
