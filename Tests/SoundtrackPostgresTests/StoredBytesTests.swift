import Foundation
import GRDB
import PostgresNIO
import SoundtrackContext
import SoundtrackPostgres
import SoundtrackStore
import Testing

/// Both stores hold the same bytes for the same person: the same day of picks and events through
/// the SQLite store and the PostgreSQL store, then their columns compared raw.
@Suite("The same bytes on SQLite and PostgreSQL")
struct StoredBytesTests {
    /// A person's columns as one store holds them, by row.
    typealias Columns = [String: [[UInt8]]]

    @Test("A day of picks and events leaves the same bytes in bins, weights, sessions, picks and feedback of both stores")
    func sameBytes() async throws {
        guard try Backend.postgresConfigured() else { return }
        var sqlite: Columns = [:]
        try await Backend.sqlite.withStore { s in
            let store = s.store as! Store
            try store.addUser(NewUser(id: "u-1"), at: Date(timeIntervalSince1970: 0))
            try Person.day(store, user: "u-1", picks: 30)
            sqlite = try Self.columns(sqlitePath: try #require(store.path))
        }
        var postgres: Columns = [:]
        try await TestDatabase.withFreshDatabase { endpoint in
            let store = try await PostgresStore.open(endpoint, logger: TestDatabase.logger)
            defer { store.close() }
            try store.addUser(NewUser(id: "u-1"), at: Date(timeIntervalSince1970: 0))
            try Person.day(store, user: "u-1", picks: 30)
            postgres = try await Self.columns(endpoint)
        }
        #expect(Set(sqlite.keys) == Set(Self.queries.map(\.name)))
        for (name, _, _) in Self.queries {
            #expect(sqlite[name]?.isEmpty == false, "\(name): rows written")
            #expect(sqlite[name] == postgres[name], "\(name)")
        }
    }

    /// Each compared column: its name, and the query that lists it for u-1 in a fixed order on
    /// SQLite and on PostgreSQL (as bytes: BLOBs and bytea as they are, text as UTF-8).
    static let queries: [(name: String, sqlite: String, postgres: String)] = {
        func column(_ table: String, _ column: String, order: String, pgColumn: String? = nil) -> (String, String, String) {
            (
                "\(table).\(column)", "SELECT \(column) FROM \(table) WHERE user_id = 'u-1' ORDER BY \(order)",
                "SELECT \(pgColumn ?? column) FROM \(table) WHERE user_id = 'u-1' ORDER BY \(order)"
            )
        }
        return [
            column("bins", "centroid", order: "number"), column("bins", "spread", order: "number"),
            column("bins", "observed", order: "number"), column("bins", "songs", order: "number", pgColumn: "songs::text"),
            column("bins", "transitions", order: "number"), column("weights", "vector", order: "user_id"),
            column("sessions", "avoided", order: "user_id"), column("sessions", "recent_tracks", order: "user_id"),
            column("sessions", "tracks", order: "user_id"), column("picks", "features", order: "seq"),
            column("picks", "mask", order: "seq"), column("picks", "ranking", order: "seq"),
            column("feedback", "context", order: "applied_seq"),
            ("users.merged_into", "SELECT merged_into FROM users WHERE id = 'u-1'", "SELECT merged_into FROM users WHERE user_id = 'u-1'"),
            ("users.place_names", "SELECT place_names FROM users WHERE id = 'u-1'", "SELECT place_names FROM users WHERE user_id = 'u-1'")
        ]
    }()

    /// The columns `queries` list, read raw from a SQLite store's file.
    static func columns(sqlitePath: String, queries: [(name: String, sqlite: String, postgres: String)] = queries) throws -> Columns {
        let queue = try DatabaseQueue(path: sqlitePath)
        return try queue.read { db in
            var out: Columns = [:]
            for (name, sql, _) in queries {
                out[name] = try Row.fetchAll(db, sql: sql).map { row -> [UInt8] in
                    switch (row[0] as DatabaseValue).storage {
                    case .blob(let data): return [UInt8](data)
                    case .string(let text): return Array(text.utf8)
                    default: return []
                    }
                }
            }
            return out
        }
    }

    /// The columns `queries` list, read raw from a PostgreSQL store's database.
    static func columns(_ endpoint: PostgresEndpoint, queries: [(name: String, sqlite: String, postgres: String)] = queries) async throws -> Columns {
        try await endpoint.withConnection(logger: TestDatabase.logger) { c in
            var out: Columns = [:]
            for (name, _, sql) in queries {
                var values: [[UInt8]] = []
                let rows = try await c.query(PostgresQuery(unsafeSQL: sql), logger: TestDatabase.logger)
                for try await row in rows {
                    // bytea as it is; text as its UTF-8 bytes.
                    let cell = row.makeRandomAccess()[0]
                    if cell.dataType == .bytea {
                        values.append(Array(try cell.decode(ByteBuffer.self).readableBytesView))
                    } else {
                        values.append(Array(try cell.decode(String.self).utf8))
                    }
                }
                out[name] = values
            }
            return out
        }
    }
}
