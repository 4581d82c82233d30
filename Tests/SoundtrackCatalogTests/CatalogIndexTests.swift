import Foundation
import SoundtrackContext
import Testing

@testable import SoundtrackCatalog

/// A deterministic generator for test data (SplitMix64).
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        return StableHash.mix(state)
    }
}

private func track(_ id: String, genres: [String] = [], _ audio: AudioFeatures = AudioFeatures(), popularity: Int? = nil) -> Track {
    Track(id: id, title: id, artist: "a", genres: genres, popularity: popularity, audio: audio)
}

private func features(_ x: Double) -> AudioFeatures {
    AudioFeatures(
        tempo: 80 + 100 * x, energy: x, valence: 1 - x, danceability: 0.5, acousticness: x / 2,
        instrumentalness: 0.1, speechiness: 0.05, loudness: -20 + 15 * x)
}

/// The documented score, computed slot by slot (no BLAS), for checking the index.
private func referenceScore(_ index: CatalogIndex, _ q: AudioProfile, _ genres: Set<String>, row: Int) -> Float {
    var sound: Float = 0
    if !q.isEmpty {
        let w = CatalogIndex.dimensionWeights
        var mean = [Float](repeating: 0, count: 8), variance = [Float](repeating: 0, count: 8)
        for d in 0..<8 {
            let xs = index.profiles.compactMap { $0[d] }
            mean[d] = xs.isEmpty ? 0 : xs.reduce(0, +) / Float(xs.count)
            variance[d] = xs.isEmpty ? 0 : xs.map { ($0 - mean[d]) * ($0 - mean[d]) }.reduce(0, +) / Float(xs.count)
        }
        var d2: Float = 0, expected: Float = 0
        for d in 0..<8 {
            guard let a = q[d] else { continue }
            let b = index.profiles[row][d] ?? mean[d]
            d2 += w[d] * (a - b) * (a - b)
            expected += 2 * w[d] * variance[d]
        }
        sound = index.profiles[row].isEmpty ? 0.2 : 1 / (1 + 4 * d2 / max(expected, 1e-6))
    }
    let qg = Set(genres.map { $0.lowercased() })
    let tg = Set(index.genres(ofRow: row))
    let union = qg.union(tg).count
    let jaccard = union == 0 ? 0 : Float(qg.intersection(tg).count) / Float(union)
    return sound + CatalogIndex.genreWeight * jaccard
}

@Suite("Audio profile")
struct AudioProfileTests {
    @Test func normalisesAndClamps() {
        let p = AudioProfile(AudioFeatures(tempo: 150, energy: 0.85, loudness: -5))
        #expect(p.tempo == 0.75 && p.energy == 0.85)
        #expect(abs(p.loudness! - 55.0 / 60) < 1e-6)
        #expect(p.valence == nil && p.presentCount == 3 && !p.isEmpty)
        #expect(AudioProfile(AudioFeatures(tempo: 250, loudness: 4)).tempo == 1)
        #expect(AudioProfile(AudioFeatures(tempo: 250, loudness: 4)).loudness == 1)
        #expect(AudioProfile(AudioFeatures(tempo: 0)).isEmpty, "0 BPM means no beat was found")
        #expect(AudioProfile(AudioFeatures()).isEmpty)
    }

    @Test func valuesInitialiserAndAccessors() {
        var p = AudioProfile(values: SIMD8(0.5, 2, -1, .nan, 0.1, 0.2, 0.3, 0.4), mask: SIMD8(1, 1, 1, 1, 1, 1, 1, 0))
        #expect(p.values == SIMD8(0.5, 1, 0, 0, 0.1, 0.2, 0.3, 0))
        #expect(p.loudness == nil && p.tempo == 0.5)
        p.loudness = 0.7
        p.tempo = nil
        #expect(p.loudness == 0.7 && p.tempo == nil && p.presentCount == 7)
        let f = AudioProfile(AudioFeatures(tempo: 100, energy: 0.5, loudness: -30)).features
        #expect(f == AudioFeatures(tempo: 100, energy: 0.5, loudness: -30))
    }

    @Test func codableAsNamedObject() throws {
        let p = AudioProfile(AudioFeatures(tempo: 100, energy: 0.25))
        let json = String(decoding: try JSONEncoder().encode(p), as: UTF8.self)
        #expect(json.contains("\"tempo\":0.5") && json.contains("\"energy\":0.25") && !json.contains("valence"))
        #expect(try JSONDecoder().decode(AudioProfile.self, from: Data(json.utf8)) == p)
    }
}

@Suite("Catalog index")
struct CatalogIndexTests {
    @Test func lookupsAndCounts() {
        let index = CatalogIndex(tracks: [track("a", genres: ["Rock ", "pop"]), track("b"), track("a")])
        #expect(index.count == 3 && index.tracks.count == 3)
        #expect(index.row(of: "a") == 0 && index.row(of: "b") == 1 && index.row(of: "zz") == nil)
        #expect(index.genres(ofRow: 0) == ["rock", "pop"])
        #expect(index.trackCount(ofGenre: "ROCK") == 1 && index.trackCount(ofGenre: "jazz") == 0)
        #expect(!index.hasAudioFeatures(row: 1))
    }

    @Test func scoresMatchTheDocumentedFormula() {
        var tracks: [Track] = []
        for i in 0..<40 {
            var a = features(Double(i % 10) / 10)
            if i % 7 == 0 { a.valence = nil }
            if i % 11 == 0 { a = AudioFeatures() }
            tracks.append(track("t\(i)", genres: i % 3 == 0 ? ["rock", "pop"] : (i % 3 == 1 ? ["jazz"] : []), a))
        }
        let index = CatalogIndex(tracks: tracks)
        var partial = AudioProfile(features(0.33))
        partial.danceability = nil
        partial.speechiness = nil
        let cases: [(AudioProfile, Set<String>)] = [
            (AudioProfile(features(0.33)), []), (partial, ["Rock", "blues"]), (AudioProfile(), ["jazz"]),
            (AudioProfile(features(0.9)), ["pop"])
        ]
        for (query, genres) in cases {
            let got = index.similar(to: query, genres: genres, k: 40)
            #expect(got.count == 40)
            for (row, score) in got {
                let expected: Float = referenceScore(index, query, genres, row: row)
                let difference: Float = abs(score - expected)
                #expect(difference < 1e-4, "row \(row): \(score) vs \(expected)")
            }
            let ordered = zip(got, got.dropFirst()).allSatisfy { a, b in a.score > b.score || (a.score == b.score && a.row < b.row) }
            #expect(ordered)
        }
    }

    @Test func identicalTracksTieInRowOrder() {
        let tracks = (0..<30).map { track("t\($0)", features(0.5)) }
        let index = CatalogIndex(tracks: tracks)
        #expect(index.similar(to: AudioProfile(features(0.5)), k: 5).map(\.row) == [0, 1, 2, 3, 4])
        #expect(index.similar(to: AudioProfile(features(0.5)), k: 3, excluding: [0, 2]).map(\.row) == [1, 3, 4])
    }

    @Test("A search among candidates scores them as the full search does, whatever their order, duplicates and exclusions; ties go to the lower row")
    func searchAmongCandidates() {
        // Groups of five identical tracks (equal scores), some without features, three genres.
        var tracks: [Track] = []
        for i in 0..<60 {
            let a = i % 13 == 0 ? AudioFeatures() : features(Double(i / 5) / 12)
            tracks.append(track("t\(i)", genres: i % 3 == 0 ? ["rock", "pop"] : (i % 3 == 1 ? ["jazz"] : []), a))
        }
        let index = CatalogIndex(tracks: tracks)
        var partial = AudioProfile(features(0.4))
        partial.valence = nil
        var rng = SeededGenerator(state: 5)
        for (query, genres) in [(AudioProfile(features(0.4)), ["pop", "blues"]), (partial, ["jazz"]), (AudioProfile(), ["rock"])] {
            let candidates = (0..<40).map { _ in Int(rng.next() % 70) - 5 }  // some outside the catalog
            let excluded: Set<Int> = [candidates[3], candidates[9], 59]
            let full = index.similar(to: query, genres: Set(genres), k: 60)
            let kept = Set(candidates.filter { $0 >= 0 && $0 < 60 }).subtracting(excluded)
            for k in [1, 4, 7, 100] {
                let expected = Array(full.filter { kept.contains($0.row) }.prefix(k))
                let got = index.similar(to: query, genres: Set(genres), k: k, among: candidates, excluding: excluded)
                #expect(got.map(\.row) == expected.map(\.row), "k \(k), \(genres)")
                #expect(zip(got, expected).allSatisfy { abs($0.score - $1.score) < 1e-5 })
                let reordered = index.similar(
                    to: query, genres: Set(genres), k: k, among: candidates.reversed() + candidates.shuffled(using: &rng), excluding: excluded)
                #expect(reordered.map(\.row) == got.map(\.row) && reordered.map(\.score) == got.map(\.score))
                let numbers = Array(Set(genres.flatMap { g in (0..<60).flatMap { index.genreNumbers(ofRow: $0) }.filter { index.genreName(number: $0) == g } }))
                if numbers.count == genres.count {  // every genre of the query is in the catalog
                    let byNumber = index.similar(to: query, genreNumbers: numbers, k: k, among: candidates, excluding: excluded)
                    #expect(byNumber.map(\.row) == got.map(\.row) && byNumber.map(\.score) == got.map(\.score))
                }
            }
        }
    }

    @Test func genreOverlapAddsABonus() {
        let tracks = [
            track("same-sound-no-genre", features(0.5)),
            track("same-sound-rock", genres: ["rock"], features(0.5)),
            track("same-sound-rock-pop", genres: ["rock", "pop"], features(0.5)),
            track("far-rock-pop", genres: ["rock", "pop"], features(0))
        ]
        let index = CatalogIndex(tracks: tracks)
        let q = AudioProfile(features(0.5))
        let got = index.similar(to: q, genres: ["pop", "rock"], k: 4)
        #expect(got.map(\.row) == [2, 1, 0, 3])
        #expect(abs(got[0].score - got[2].score - CatalogIndex.genreWeight) < 1e-5)
        #expect(abs(got[1].score - got[2].score - CatalogIndex.genreWeight / 2) < 1e-5)
        #expect(index.similar(to: q, k: 3).map(\.row) == [0, 1, 2], "no genres: sound alone, ties by row")
    }

    @Test func excludingAndSmallK() {
        let index = CatalogIndex(tracks: (0..<10).map { track("t\($0)", features(Double($0) / 10)) })
        let q = AudioProfile(features(0.3))
        #expect(index.similar(to: q, k: 1).map(\.row) == [3])
        #expect(index.similar(to: q, k: 2, excluding: [3]).map(\.row).contains(3) == false)
        #expect(index.similar(to: q, k: 100, excluding: [1, 2, 99, -1]).count == 8)
        #expect(index.similar(to: q, k: 0).isEmpty)
        #expect(CatalogIndex(tracks: []).similar(to: q, k: 5).isEmpty)
        let around = index.similar(toTrack: 3, k: 3).map(\.row)
        #expect(Set(around.prefix(2)) == [2, 4] && [1, 5].contains(around[2]))
        #expect(!index.similar(toTrack: 3, k: 9).map(\.row).contains(3))
        #expect(index.similar(toTrack: 3, k: 9, excluding: [2]).count == 8)
    }

    @Test func tracksWithoutFeaturesAreScoredByGenre() {
        let tracks = [
            track("bare-jazz", genres: ["jazz"]),
            track("bare-rock", genres: ["rock"]),
            track("sound-far", features(0)),
            track("bare", genres: [])
        ]
        let index = CatalogIndex(tracks: tracks)
        let got = index.similar(to: AudioProfile(features(1)), genres: ["jazz"], k: 4)
        #expect(got[0].row == 0)
        #expect(abs(got[0].score - (CatalogIndex.featurelessSimilarity + CatalogIndex.genreWeight)) < 1e-6)
        #expect(got.first { $0.row == 1 }!.score == CatalogIndex.featurelessSimilarity)
        // Without a target sound, genres alone decide.
        let byGenre = index.similar(to: AudioProfile(), genres: ["rock"], k: 4)
        #expect(byGenre.map(\.row) == [1, 0, 2, 3] && byGenre[0].score == CatalogIndex.genreWeight && byGenre[1].score == 0)
        #expect(index.similar(toTrack: 0, k: 1).map(\.row) == [1], "nothing shares its genre: all 0, first row wins")
    }

    @Test func popularityWeightAndMostPopular() {
        let tracks = (0..<5).map { track("t\($0)", features(0.5), popularity: [10, 90, 50, 90, 0][$0]) }
        let index = CatalogIndex(tracks: tracks)
        #expect(index.mostPopular(k: 3) == [1, 3, 2])
        #expect(index.mostPopular(k: 2, excluding: [1]) == [3, 2])
        #expect(index.similar(to: AudioProfile(features(0.5)), k: 2, popularityWeight: 0.1).map(\.row) == [1, 3])
    }

    @Test func meanProfileOfRows() {
        var a = features(0.2)
        a.valence = nil
        let index = CatalogIndex(tracks: [track("a", a), track("b", features(0.6)), track("c")])
        let p = index.profile(ofRows: [0, 1, 2])
        #expect(abs(p.energy! - 0.4) < 1e-6)
        #expect(abs(p.valence! - 0.4) < 1e-6, "averaged over the tracks that have it")
        #expect(index.profile(ofRows: [2]).isEmpty && index.profile(ofRows: []).isEmpty)
    }

    @Test func topKAgreesWithAFullSort() {
        var rng = SeededGenerator(state: 42)
        for _ in 0..<50 {
            let n = Int.random(in: 0..<300, using: &rng)
            let scores = (0..<n).map { _ -> Float in
                let r = Int.random(in: 0..<20, using: &rng)
                return r == 0 ? -.infinity : Float(r) / 4  // many ties
            }
            let k = Int.random(in: 0..<40, using: &rng)
            let expected = scores.enumerated().filter { $0.element > -.infinity }
                .sorted { $0.element > $1.element || ($0.element == $1.element && $0.offset < $1.offset) }
                .prefix(k).map { $0.offset }
            #expect(CatalogIndex.topK(scores, k: k).map(\.row) == Array(expected))
        }
    }

    @Test func neighboursOnTheRealCatalogAreCloserThanRandomTracks() throws {
        let index = Shipped.index
        try #require(index.count == 20_405)
        var rng = SeededGenerator(state: 7)
        func distance(_ a: Int, _ b: Int) -> Float {
            let d = (index.profiles[a].values - index.profiles[b].values) * CatalogIndex.dimensionWeights.squareRoot()
            return (d * d).sum()
        }
        func jaccard(_ a: Int, _ b: Int) -> Float {
            let x = Set(index.genres(ofRow: a)), y = Set(index.genres(ofRow: b))
            return x.union(y).isEmpty ? 0 : Float(x.intersection(y).count) / Float(x.union(y).count)
        }
        var near: Float = 0, random: Float = 0, nearGenre: Float = 0, randomGenre: Float = 0
        var closerCount = 0
        let samples = 200
        for _ in 0..<samples {
            let r = Int.random(in: 0..<index.count, using: &rng)
            let soundOnly = index.similar(to: index.profiles[r], k: 10, excluding: [r])
            let both = index.similar(toTrack: r, k: 10)
            #expect(!soundOnly.contains { $0.row == r } && !both.contains { $0.row == r })
            let others = (0..<10).map { _ in Int.random(in: 0..<index.count, using: &rng) }
            let n = soundOnly.map { distance(r, $0.row) }.reduce(0, +) / 10
            let o = others.map { distance(r, $0) }.reduce(0, +) / 10
            near += n
            random += o
            if n < o { closerCount += 1 }
            nearGenre += both.map { jaccard(r, $0.row) }.reduce(0, +) / 10
            randomGenre += others.map { jaccard(r, $0) }.reduce(0, +) / 10
        }
        #expect(closerCount == samples)
        #expect(near < 0.1 * random, "mean distance to neighbours \(near / Float(samples)) vs random \(random / Float(samples))")
        #expect(nearGenre > 3 * randomGenre, "genre overlap \(nearGenre / Float(samples)) vs \(randomGenre / Float(samples))")
    }
}

@Suite("Rows by id hash")
struct HashRowsTests {
    @Test("Every hash finds its row, a shared hash says so, an absent one finds nothing, through runs of full slots")
    func lookups() {
        var rng = SeededGenerator(state: 11)
        // Hash 0 (the empty slots' key), small and round ones, and 2,000 random ones: at half load,
        // many probe past a taken slot.
        var hashes: [UInt64] = [0, 1, 1 << 32, 2 << 32, 3 << 32]
        for _ in 0..<2_000 { hashes.append(rng.next()) }
        var table = HashRows(capacity: hashes.count)
        for (row, h) in hashes.enumerated() { table.insert(h, row: row) }
        for (row, h) in hashes.enumerated() { #expect(table.row(h) == Int32(row), "hash \(h)") }
        table.insert(hashes[7], row: 99_999)
        #expect(table.row(hashes[7]) == HashRows.shared)
        #expect(table.row(hashes[8]) == 8)
        for _ in 0..<2_000 {
            let h = rng.next()
            if !hashes.contains(h) { #expect(table.row(h) == nil) }
        }
    }

    @Test("The index finds every track by its id's hash as by its id, and no track under another id's hash")
    func indexRowsByHash() {
        let tracks = (0..<500).map { track("t-\($0)") } + [track("t-3")]  // a repeated id keeps its first row
        let index = CatalogIndex(tracks: tracks)
        for id in Set(tracks.map(\.id)) {
            #expect(index.row(ofHash: StableHash.fnv1a(id), id: id) == index.row(of: id))
        }
        #expect(index.row(ofHash: StableHash.fnv1a("t-1"), id: "t-2") == nil)
        #expect(index.row(ofHash: StableHash.fnv1a("absent"), id: "absent") == nil)
    }
}
