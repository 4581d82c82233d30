import XCTest

@testable import SoundtrackPostgres

/// Reading `postgres://` URLs, and the Citus placement the table list gives (no server needed).
final class PostgresEndpointTests: XCTestCase {
    func testAURLGivesItsParts() throws {
        let e = try PostgresEndpoint(url: "postgres://soundtrack:s%40cret@127.0.0.1:35488/music?sslmode=disable")
        XCTAssertEqual(e.host, "127.0.0.1")
        XCTAssertEqual(e.port, 35488)
        XCTAssertEqual(e.username, "soundtrack")
        XCTAssertEqual(e.password, "s@cret")
        XCTAssertEqual(e.database, "music")
        XCTAssertEqual(e.tls, .disable)
        XCTAssertEqual(e.redactedURL, "postgres://soundtrack:…@127.0.0.1:35488/music?sslmode=disable")
        XCTAssertEqual("\(try PostgresEndpoint(url: "postgres://u:hunter2@h/d"))", "postgres://u:…@h:5432/d?sslmode=prefer")
        // The path is decoded once: `%25` is a percent sign, and what follows it stays as written.
        XCTAssertEqual(try PostgresEndpoint(url: "postgres://u@h/a%2541").database, "a%41")
    }

    func testDefaultsAreLibpqs() throws {
        let e = try PostgresEndpoint(url: "postgresql://ana@[::1]")
        XCTAssertEqual(e.host, "::1")
        XCTAssertEqual(e.port, 5432)
        XCTAssertEqual(e.database, "ana")
        XCTAssertNil(e.password)
        XCTAssertEqual(e.tls, .prefer)
        XCTAssertEqual(e.with(database: "other").database, "other")
    }

    func testABadURLSaysWhatIsWrongWithoutThePassword() {
        let cases: [(String, PostgresURLError)] = [
            ("mysql://u:p@h/d", .scheme("mysql")),
            ("postgres://h/d", .missing("user")),
            ("postgres://u:p@h/d/e", .database("d/e")),
            ("postgres://u:p@h:0/d", .port(0)),
            ("postgres://u:p@h/d?sslmode=verify-full", .sslmode("verify-full")),
            ("postgres://u:p@h/d?search_path=x", .parameter("search_path"))
        ]
        for (url, expected) in cases {
            XCTAssertThrowsError(try PostgresEndpoint(url: url), url) { error in
                XCTAssertEqual(error as? PostgresURLError, expected, url)
                XCTAssertFalse("\(error)".contains(":p@"), "\(error)")
            }
        }
    }

    func testCitusPlacesReferenceTablesFirstThenUsersThenTheirColocatedTables() {
        let statements = PostgresSchema.citusStatements
        XCTAssertEqual(statements.count, PostgresSchema.tables.count)
        let users = statements.firstIndex(of: "SELECT create_distributed_table('users', 'user_id')")
        XCTAssertNotNil(users)
        let lastReference = statements.lastIndex { $0.contains("create_reference_table") }
        let firstColocated = statements.firstIndex { $0.contains("colocate_with => 'users'") }
        XCTAssertLessThan(lastReference ?? .max, users ?? -1)
        XCTAssertLessThan(users ?? .max, firstColocated ?? -1)
        XCTAssertTrue(statements.contains("SELECT create_distributed_table('event_ids', 'id', colocate_with => 'none')"))
    }
}

/// A migration's text into statements (postgres-nio runs one a query).
final class SQLStatementsTests: XCTestCase {
    func testSemicolonsInStringsCommentsAndBodiesDoNotEndAStatement() {
        let sql = """
            -- a comment; with a semicolon
            CREATE TABLE t (a text DEFAULT 'x;y', "b;c" bigint);
            /* block; comment */ INSERT INTO t VALUES ('it''s;', 1);
            CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql;
            SELECT $$a;b$$, $1;
            -- only a comment at the end;
            """
        XCTAssertEqual(
            SQLStatements.split(sql),
            [
                "-- a comment; with a semicolon\nCREATE TABLE t (a text DEFAULT 'x;y', \"b;c\" bigint)",
                "/* block; comment */ INSERT INTO t VALUES ('it''s;', 1)",
                "CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql",
                "SELECT $$a;b$$, $1"
            ])
    }

    func testTheSchemaSplitsIntoItsStatements() {
        let statements = PostgresSchema.migrations.flatMap { SQLStatements.split($0.sql) }
        XCTAssertEqual(statements.filter { $0.hasPrefix("CREATE TABLE") }.count, PostgresSchema.tables.count - 1, "every table but schema_migrations")
        XCTAssertFalse(statements.contains { $0.isEmpty })
    }
}
