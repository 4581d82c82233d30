import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackPostgres
import SoundtrackStore
import Testing

@testable import SoundtrackEngine

/// Both stores hold the same bytes in the shared tables: the same catalog, changes of it, queries
/// of the blend and attempts through the SQLite store and the PostgreSQL store, then the columns
/// compared raw.
@Suite("The same catalog and blend bytes on SQLite and PostgreSQL")
struct SharedStoredBytesTests {
    @Test("A catalog, its index and the blends leave the same bytes in songs, catalog_index, blend_examples, ranker_blends and store_settings")
    func sameBytes() async throws {
        guard try Backend.postgresConfigured() else { return }
        var sqlite: StoredBytesTests.Columns = [:]
        try await Backend.sqlite.withStore { s in
            let store = s.store as! Store
            try Self.fill(store)
            sqlite = try StoredBytesTests.columns(sqlitePath: try #require(store.path), queries: Self.queries)
        }
        var postgres: StoredBytesTests.Columns = [:]
        try await TestDatabase.withFreshDatabase { endpoint in
            let store = try await PostgresStore.open(endpoint, logger: TestDatabase.logger)
            defer { store.close() }
            try Self.fill(store)
            postgres = try await StoredBytesTests.columns(endpoint, queries: Self.queries)
        }
        #expect(Set(sqlite.keys) == Set(Self.queries.map(\.name)))
        for (name, _, _) in Self.queries {
            #expect(sqlite[name]?.isEmpty == false, "\(name): rows written")
            #expect(sqlite[name] == postgres[name], "\(name)")
        }
    }

    /// The same writes on either store: the small catalog imported in batches, a track changed
    /// and one added, two people's days (the queries their likes taught), two blends recorded and
    /// the second put in use.
    static func fill(_ store: any PersonStore & CatalogStore & BlendStore) throws {
        _ = try store.importCatalog(data: CatalogStoreConformanceTests.csv, format: .csv, batchSize: 200)
        var changed = Person.tracks[5]
        changed.genres = ["changed", "genres"]
        changed.audio.valence = 0.0625
        try store.upsertTracks([changed])
        var added = Person.tracks[6]
        added.id = "added-track"
        try store.insertMissingTracks([added, Person.tracks[7]])
        for user in ["u-1", "u-2"] {
            try store.addUser(NewUser(id: user), at: Date(timeIntervalSince1970: 0))
            try Person.day(store, user: user, picks: 24)
        }
        let at = Date(timeIntervalSince1970: 1_773_200_000)
        for (i, promoted) in [true, false].enumerated() {
            var weights = [Float](repeating: 0.1, count: RankerModel.signals.count)
            weights[i] = 1.5 + Float(i) / 3
            let decision = BlendLearner.Decision(
                candidate: RankerModel(weights: weights, source: "bytes"), promoted: promoted, reason: "attempt \(i)", training: 10, validation: 3,
                ndcg: 0.5, currentNDCG: 0.25, lambda: 1)
            try store.recordBlendAttempt(decision, seen: try store.newestBlendExample(), current: i, events: try store.feedbackLogSize(), at: at)
        }
        try store.useBlend(version: 2)
    }

    /// Each compared column: its name, and the query that lists it in a fixed order on SQLite and on
    /// PostgreSQL (as bytes: BLOBs and bytea as they are, text as UTF-8).
    static let queries: [(name: String, sqlite: String, postgres: String)] = [
        ("songs.id", "SELECT id FROM songs ORDER BY rowid", "SELECT id FROM songs ORDER BY rowid"),
        ("songs.genres", "SELECT genres FROM songs ORDER BY rowid", "SELECT genres FROM songs ORDER BY rowid"),
        ("catalog_index.format", "SELECT CAST(format AS TEXT) FROM catalog_index", "SELECT format::text FROM catalog_index"),
        ("catalog_index.data", "SELECT data FROM catalog_index", "SELECT data FROM catalog_index"),
        ("blend_examples.signals", "SELECT signals FROM blend_examples ORDER BY id", "SELECT signals FROM blend_examples ORDER BY id"),
        ("blend_examples.user_id", "SELECT user_id FROM blend_examples ORDER BY id", "SELECT user_id FROM blend_examples ORDER BY id"),
        ("ranker_blends.weights", "SELECT weights FROM ranker_blends ORDER BY version", "SELECT weights::text FROM ranker_blends ORDER BY version"),
        (
            "store_settings.value", "SELECT name || '=' || value FROM store_settings WHERE name LIKE 'ranker_blend%' ORDER BY name",
            "SELECT name || '=' || value FROM store_settings WHERE name LIKE 'ranker_blend%' ORDER BY name"
        )
    ]
}
