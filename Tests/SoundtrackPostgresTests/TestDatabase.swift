import Foundation
import Logging
import PostgresNIO
import SoundtrackPostgres
import XCTest

/// The PostgreSQL server of the tests: `SOUNDTRACK_TEST_POSTGRES_URL`, which
/// `scripts/postgres-cluster.sh run` sets for `make test` (and so for CI) after starting a
/// throwaway cluster on loopback. Without it a test skips, saying why; under CI (`CI=true`) it
/// fails instead: CI installs and starts PostgreSQL, so a missing URL there is a broken set-up.
enum TestDatabase {
    static let variable = "SOUNDTRACK_TEST_POSTGRES_URL"

    struct NotConfigured: Error, CustomStringConvertible {
        var description: String
    }

    /// A logger that writes nothing (the migrator logs each migration it applies).
    static let logger = Logger(label: "soundtrack.postgres.tests", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The server's endpoint, or a skip (a failure under CI) when none is configured.
    static func endpoint() throws -> PostgresEndpoint {
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment[variable], !url.isEmpty else {
            let reason =
                "\(variable) is not set: no PostgreSQL server to test against (make test starts one with scripts/postgres-cluster.sh; "
                + "by hand: bash scripts/postgres-cluster.sh run swift test --skip-build --filter SoundtrackPostgresTests)"
            if environment["CI"] == "true" { throw NotConfigured(description: "under CI=true the PostgreSQL tests may not skip: \(reason)") }
            print("SoundtrackPostgresTests skipped: \(reason)")
            throw XCTSkip(reason)
        }
        return try PostgresEndpoint(url: url)
    }

    /// Runs `body` on a database of its own, created empty on the test server and dropped after.
    static func withFreshDatabase<T: Sendable>(_ body: (PostgresEndpoint) async throws -> T) async throws -> T {
        let server = try endpoint()
        let name = "soundtrack_test_\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))"
        try await server.withConnection(logger: logger) { c in
            _ = try await c.simpleQuery("CREATE DATABASE \(name)").get()
        }
        do {
            let result = try await body(server.with(database: name))
            try await drop(name, on: server)
            return result
        } catch {
            try? await drop(name, on: server)
            throw error
        }
    }

    private static func drop(_ name: String, on server: PostgresEndpoint) async throws {
        try await server.withConnection(logger: logger) { c in
            _ = try await c.simpleQuery("DROP DATABASE IF EXISTS \(name) WITH (FORCE)").get()
        }
    }
}
