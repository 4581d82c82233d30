import Foundation
import SoundtrackCatalog
import SoundtrackPostgres
import SoundtrackStore
import Testing

/// The semantics of ``CatalogStore``, written once and run on the SQLite store and the PostgreSQL
/// store: the committed small catalog imported, looked up, changed, and its index stored as the
/// index built from the songs in their order.
@Suite("The catalog, on SQLite and PostgreSQL")
struct CatalogStoreConformanceTests {
    /// The committed small catalog's CSV and its tracks, as the reader reads them.
    static let csv = try! Data(contentsOf: Person.root.appendingPathComponent("datasets/catalog-small.csv"))
    static var tracks: [Track] { Person.tracks }

    /// The stored form of the index built from `tracks` in their order: what the SQLite store builds.
    static func expectedIndex(_ tracks: [Track]) -> [UInt8] { CatalogIndex(tracks: tracks).storedForm() }

    @Test("An import in several batches holds every row in the file's order; counts, lookups and the stored index agree", arguments: Backend.allCases)
    func importAndRead(backend: Backend) async throws {
        try await backend.withStore { s in
            let store = s.store
            #expect(try !store.hasTracks())
            #expect(try store.trackCount() == 0)
            #expect(try !store.hasStoredCatalogIndex())
            let report = try store.importCatalog(data: Self.csv, format: .csv, batchSize: 128)
            #expect(report.accepted == Self.tracks.count && report.rejectedCount == 0)
            #expect(try store.hasTracks())
            #expect(try store.trackCount() == Self.tracks.count)
            #expect(try store.allTracks() == Self.tracks)
            #expect(try store.indexTracks().map(\.id) == Self.tracks.map(\.id))
            let wanted = [Self.tracks[7], Self.tracks[0], Self.tracks[499]]
            let found = try store.tracks(ids: wanted.map(\.id) + ["no-such-track", Self.tracks[7].id])
            #expect(found == Dictionary(uniqueKeysWithValues: wanted.map { ($0.id, $0) }))
            #expect(try store.tracks(ids: []).isEmpty)
            #expect(try store.hasStoredCatalogIndex())
            #expect(try store.loadCatalogIndex().storedForm() == Self.expectedIndex(Self.tracks))
            // A second import of the same file changes nothing.
            _ = try store.importCatalog(data: Self.csv, format: .csv, batchSize: 1000)
            #expect(try store.allTracks() == Self.tracks)
            #expect(try store.loadCatalogIndex().storedForm() == Self.expectedIndex(Self.tracks))
        }
    }

    @Test("An upsert changes a track in its place and adds new ones last; the last of an id repeated wins", arguments: Backend.allCases)
    func upsert(backend: Backend) async throws {
        try await backend.withStore { s in
            let store = s.store
            var expected = Array(Self.tracks.prefix(20))
            let written = try store.upsertTracks(expected)
            #expect(written == 20)
            var changed = expected[3]
            changed.title = "Changed"
            changed.genres = ["changed genre"]
            changed.audio.energy = 0.125
            changed.popularity = nil
            #expect(try store.upsertTracks([changed]) == 1)
            expected[3] = changed
            var twice = Self.tracks[20]
            let first = twice
            twice.title = "Second spelling"
            twice.audio.tempo = 99.5
            #expect(try store.upsertTracks([first, Self.tracks[21], twice]) == 3)
            expected += [twice, Self.tracks[21]]
            #expect(try store.trackCount() == 22)
            #expect(try store.allTracks() == expected)
            #expect(try store.tracks(ids: [changed.id])[changed.id] == changed)
            #expect(try store.loadCatalogIndex().storedForm() == Self.expectedIndex(expected))
        }
    }

    @Test("Inserting the missing tracks adds only new ids (the first of one repeated) and leaves known tracks as they are", arguments: Backend.allCases)
    func insertMissing(backend: Backend) async throws {
        try await backend.withStore { s in
            let store = s.store
            var expected = Array(Self.tracks.prefix(10))
            try store.upsertTracks(expected)
            var known = expected[2]
            known.title = "Not written"
            var new = Self.tracks[10]
            let firstNew = new
            new.title = "Not written either"
            #expect(try store.insertMissingTracks([known, firstNew, new, Self.tracks[11]]) == 2)
            expected += [firstNew, Self.tracks[11]]
            #expect(try store.allTracks() == expected)
            #expect(try store.loadCatalogIndex().storedForm() == Self.expectedIndex(expected))
            #expect(try store.insertMissingTracks([known]) == 0)
            #expect(try store.allTracks() == expected)
            #expect(try store.hasStoredCatalogIndex())
        }
    }

    @Test("An empty catalog's first write stores its index, even when it adds nothing", arguments: Backend.allCases)
    func emptyWriteStoresIndex(backend: Backend) async throws {
        try await backend.withStore { s in
            let store = s.store
            let added = try store.insertMissingTracks([])
            #expect(added == 0)
            #expect(try store.hasStoredCatalogIndex())
            #expect(try store.loadCatalogIndex().storedForm() == Self.expectedIndex([]))
        }
    }
}
