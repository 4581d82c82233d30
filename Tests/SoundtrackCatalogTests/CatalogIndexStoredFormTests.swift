import Foundation
import SoundtrackContext
import Testing

@testable import SoundtrackCatalog

/// The stored form of the index (issue 40): read back, it is the same index.
@Suite struct CatalogIndexStoredFormTests {
    /// The shipped catalog as the store reads it for the index: no titles or artists.
    static let lean: [Track] = Shipped.tracks.map {
        Track(id: $0.id, title: "", artist: "", genres: $0.genres, popularity: $0.popularity, audio: $0.audio)
    }

    @Test func theShippedCatalogReadBackRanksExactlyAsBuilt() throws {
        let built = CatalogIndex(tracks: Self.lean)
        try #require(built.count > 10_000)
        let read = try CatalogIndex(storedForm: built.storedForm())
        #expect(read.count == built.count)
        #expect(read.tracks == Self.lean)
        #expect(read.mean == built.mean)
        #expect(read.popularity == built.popularity)
        #expect(read.profiles == built.profiles)
        var rng = SeededGenerator(state: 40)
        for _ in 0..<50 {
            let row = Int(rng.next() % UInt64(built.count))
            #expect(read.row(of: Self.lean[row].id) == built.row(of: Self.lean[row].id))
            #expect(read.id(ofRow: row) == Self.lean[row].id)
            #expect(read.genres(ofRow: row) == built.genres(ofRow: row))
            let a = built.similar(toTrack: row, k: 20), b = read.similar(toTrack: row, k: 20)
            #expect(a.map(\.row) == b.map(\.row))
            #expect(a.map(\.score.bitPattern) == b.map(\.score.bitPattern))
            let genres = Set(built.genres(ofRow: row))
            let c = built.similar(to: AudioProfile(Self.lean[row].audio), genres: genres, k: 15)
            let d = read.similar(to: AudioProfile(Self.lean[row].audio), genres: genres, k: 15)
            #expect(c.map(\.row) == d.map(\.row))
            #expect(c.map(\.score.bitPattern) == d.map(\.score.bitPattern))
        }
        #expect(read.row(of: "no-such-track") == nil)
        #expect(read.mostPopular(k: 30) == built.mostPopular(k: 30))
    }

    @Test func repeatedIdsFindTheFirstRowAndMissingValuesStayMissing() throws {
        let tracks = [
            Track(id: "a", title: "", artist: "", genres: ["Rock", "rock", " Jazz;Blues "], popularity: nil, audio: AudioFeatures(energy: 0.4)),
            Track(id: "b", title: "", artist: "", genres: [], popularity: 0, audio: AudioFeatures()),
            Track(id: "a", title: "", artist: "", genres: ["pop"], popularity: 120, audio: AudioFeatures(tempo: 120, loudness: -7)),
            Track(id: "ünïcödé-id-longer-than-fifteen-bytes", title: "", artist: "", genres: ["Ëlectro"], popularity: 55)
        ]
        let built = CatalogIndex(tracks: tracks)
        let read = try CatalogIndex(storedForm: built.storedForm())
        #expect(read.tracks == tracks)
        #expect(read.row(of: "a") == 0)
        #expect(built.row(of: "a") == 0)
        #expect(read.row(of: "ünïcödé-id-longer-than-fifteen-bytes") == 3)
        #expect(read.trackCount(ofGenre: "ROCK") == 1)
        #expect(read.popularity == built.popularity)
    }

    @Test func anotherVersionOrCutBytesAreRefused() throws {
        let bytes = CatalogIndex(tracks: Array(Self.lean.prefix(200))).storedForm()
        #expect(throws: CatalogIndex.StoredFormError.truncated) { try CatalogIndex(storedForm: Array(bytes.dropLast(3))) }
        #expect(throws: CatalogIndex.StoredFormError.truncated) { try CatalogIndex(storedForm: bytes + [0]) }
        var other = bytes
        other[4] = 9
        #expect(throws: CatalogIndex.StoredFormError.version(9)) { try CatalogIndex(storedForm: other) }
        #expect(throws: CatalogIndex.StoredFormError.notAnIndex) { try CatalogIndex(storedForm: [1, 2, 3, 4, 5, 6, 7, 8]) }
        #expect(throws: CatalogIndex.StoredFormError.truncated) { try CatalogIndex(storedForm: []) }
    }
}
