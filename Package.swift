// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Soundtrack",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "soundtrack", targets: ["soundtrack"]),
        .library(name: "SoundtrackEngine", targets: ["SoundtrackEngine"]),
        .library(name: "SoundtrackStore", targets: ["SoundtrackStore"]),
        .library(name: "SoundtrackRules", targets: ["SoundtrackRules"]),
        .library(name: "SoundtrackPostgres", targets: ["SoundtrackPostgres"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // NIOCore for the HTTP/1 channel's idle timeout (a TimeAmount), NIOHTTP1 for its parser errors;
        // already in the graph through hummingbird.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // NIOHTTPTypes: the request and response parts of hummingbird's HTTP/1 pipeline (MalformedRequestHandler).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // The PostgreSQL store's client (issue 44); NIOSSL for `sslmode=require` and `prefer`,
        // already in the graph through postgres-nio.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6")
    ],
    targets: [
        // CBLAS from Debian's libblas-dev (netlib reference BLAS, or any alternative providing cblas.h).
        .systemLibrary(
            name: "CBLAS",
            pkgConfig: "blas",
            providers: [.apt(["libblas-dev"])]
        ),
        // The C library pieces Swift's Glibc module leaves out (malloc tuning, SQLite configuration,
        // thread names).
        // Also holds the bundled catalog, built into the executable (Sources/CSupport/catalog.c).
        .target(
            name: "CSupport",
            cSettings: [.define("SOUNDTRACK_CATALOG_PATH", to: "\"\(Context.packageDirectory)/datasets/musicoset/catalog.csv\"")],
            linkerSettings: [.linkedLibrary("sqlite3")]
        ),
        // Snapshot and feedback-event types, JSON parsing and validation, feature extraction.
        .target(name: "SoundtrackContext"),
        // Tracks, catalog import, similar-track search, cold-start priors.
        .target(
            name: "SoundtrackCatalog",
            dependencies: ["SoundtrackContext", "CBLAS"]
        ),
        // Bins, scoring, track choice, the feedback state machine, the Recommender facade.
        .target(
            name: "SoundtrackEngine",
            dependencies: ["SoundtrackContext", "SoundtrackCatalog", "CBLAS"]
        ),
        // SQLite persistence through GRDB: schema, migrations, the write type the rules stage
        // (`UserWrite`) and the transactions that commit it.
        .target(
            name: "SoundtrackStore",
            dependencies: [
                "SoundtrackEngine", "SoundtrackCatalog", "SoundtrackContext",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto")
            ]
        ),
        // PostgreSQL for the store (issue 44): the connection from a `postgres://` URL, the schema as
        // append-only migrations keyed for distribution by user, the distribution rules checked
        // on a live schema, and `PostgresStore`, a person's core path (SoundtrackStore's `PersonStore`).
        .target(
            name: "SoundtrackPostgres",
            dependencies: [
                "SoundtrackStore", "SoundtrackEngine", "SoundtrackCatalog", "SoundtrackContext",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // The rules of picks and feedback that the CLI, the HTTP service, batch and replay share
        // (`Rules`), the one-transaction service of the CLI, and the wire encoders.
        .target(
            name: "SoundtrackRules",
            dependencies: [
                "SoundtrackStore", "SoundtrackEngine", "SoundtrackCatalog", "SoundtrackContext",
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // HTTP clients for the outside world (URLSession, libcurl on Linux): weather, calendars (Google, ICS),
        // the Spotify Web API; retries, timeouts, rate limits, caching, the fallback chain; the configuration file.
        .target(
            name: "SoundtrackProviders",
            dependencies: [
                "SoundtrackCatalog", "SoundtrackContext",
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // Evaluation: labelled logs, splits, metrics, baselines, the synthetic population, the online loop.
        .target(
            name: "SoundtrackEvaluation",
            dependencies: ["SoundtrackEngine", "SoundtrackCatalog", "SoundtrackContext"]
        ),
        // What the executable does, as library code: opening the default database, batch, replay,
        // imports, the demo, the benchmarks.
        .target(
            name: "SoundtrackApp",
            dependencies: [
                "SoundtrackRules", "SoundtrackProviders", "SoundtrackStore", "SoundtrackEngine", "SoundtrackCatalog", "SoundtrackContext",
                "SoundtrackEvaluation",
                "CSupport",
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // The HTTP service: Hummingbird router, API keys, rate limits, cached per-user state, group commit.
        .target(
            name: "SoundtrackServer",
            dependencies: [
                "SoundtrackRules", "SoundtrackProviders", "SoundtrackStore", "SoundtrackEngine", "SoundtrackCatalog", "SoundtrackContext",
                "CSupport",
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // The one executable: a thin shell over the libraries.
        .executableTarget(
            name: "soundtrack",
            dependencies: [
                "SoundtrackServer", "SoundtrackApp", "SoundtrackRules", "SoundtrackProviders", "SoundtrackEvaluation", "SoundtrackStore",
                "SoundtrackEngine", "SoundtrackCatalog", "SoundtrackContext", "CSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log")
            ],
            // jemalloc (Debian's libjemalloc-dev) as the process's malloc: with it the service's p99
            // at 10,000 picks/s fell from 11-12 ms to 7-7.5 ms, and replay gained about 5 %
            // (see docs/http-api.md).
            linkerSettings: [.linkedLibrary("jemalloc", .when(platforms: [.linux]))]
        ),
        .testTarget(name: "SoundtrackContextTests", dependencies: ["SoundtrackContext"]),
        .testTarget(
            name: "SoundtrackCatalogTests",
            dependencies: ["SoundtrackCatalog", "SoundtrackContext", "SoundtrackTestSupport"],
            resources: []
        ),
        .testTarget(
            name: "SoundtrackEngineTests",
            dependencies: ["SoundtrackEngine", "SoundtrackCatalog", "SoundtrackContext"]
        ),
        .testTarget(
            name: "SoundtrackEvaluationTests",
            dependencies: ["SoundtrackEvaluation", "SoundtrackEngine", "SoundtrackCatalog", "SoundtrackContext"]
        ),
        .testTarget(
            name: "SoundtrackStoreTests",
            dependencies: ["SoundtrackStore", "SoundtrackRules", "SoundtrackEngine", "SoundtrackCatalog", "SoundtrackContext", "SoundtrackTestSupport"]
        ),
        // The PostgreSQL schema on a live server (SOUNDTRACK_TEST_POSTGRES_URL, started by
        // scripts/postgres-cluster.sh): migrations, distribution rules, the twin of the SQLite schema.
        .testTarget(
            name: "SoundtrackPostgresTests",
            dependencies: [
                "SoundtrackPostgres", "SoundtrackStore", "SoundtrackRules", "SoundtrackEngine", "SoundtrackCatalog", "SoundtrackContext",
                "SoundtrackTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        .testTarget(
            name: "SoundtrackRulesTests",
            dependencies: ["SoundtrackRules", "SoundtrackStore", "SoundtrackEngine", "SoundtrackCatalog", "SoundtrackContext"]
        ),
        // The C half of the tests' child processes (Tests/SoundtrackTestSupport/Child.swift): posix_spawn
        // with every inherited descriptor closed (glibc's addclosefrom_np, which Swift's Glibc module
        // does not import). Only SoundtrackTestSupport depends on it.
        .target(name: "CTestSpawn", path: "Tests/CTestSpawn"),
        // Running the built executable from tests (CLI and equivalence tests), child processes without
        // Foundation's `Process`, scratch directories.
        .target(
            name: "SoundtrackTestSupport",
            dependencies: [
                "CTestSpawn",
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio")
            ],
            path: "Tests/SoundtrackTestSupport"
        ),
        // The tests' child processes themselves (exit, signals, pipes, inherited descriptors).
        .testTarget(name: "SoundtrackTestSupportTests", dependencies: ["SoundtrackTestSupport"]),
        .testTarget(
            name: "SoundtrackCLITests",
            dependencies: [
                "SoundtrackApp", "SoundtrackRules", "SoundtrackStore", "SoundtrackEngine", "SoundtrackCatalog", "SoundtrackContext",
                "SoundtrackEvaluation",
                "SoundtrackTestSupport",
                .product(name: "GRDB", package: "GRDB.swift")
            ]
        ),
        .testTarget(
            name: "SoundtrackProvidersTests",
            dependencies: [
                "SoundtrackProviders", "SoundtrackApp", "SoundtrackRules", "SoundtrackStore", "SoundtrackEngine", "SoundtrackCatalog",
                "SoundtrackContext", "SoundtrackTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log")
            ],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "SoundtrackServerTests",
            dependencies: [
                "SoundtrackServer", "SoundtrackRules", "SoundtrackProviders", "SoundtrackStore", "SoundtrackEngine", "SoundtrackContext",
                "SoundtrackTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // The same events through the CLI, `POST /v1/feedback` and `replay` give the same database.
        .testTarget(
            name: "SoundtrackEquivalenceTests",
            dependencies: [
                "SoundtrackServer", "SoundtrackRules", "SoundtrackStore", "SoundtrackEngine", "SoundtrackContext", "SoundtrackTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log")
            ]
        )
    ]
)
