import GRDB
import GRDBSQLite

/// A statement read through SQLite's C API on a GRDB connection: columns by index, no row
/// objects, no conversions through `DatabaseValue`. For the bulk loaders, which read millions of
/// rows where GRDB's row decoding would cost more than SQLite itself.
final class RawStatement {
    private let db: OpaquePointer
    private let stmt: OpaquePointer
    /// A statement borrowed from GRDB's statement cache: reset after use, finalized by GRDB.
    private let borrowed: Statement?

    /// Prepares `sql` on the connection of `database`, binding `text` to every parameter.
    init(_ database: Database, _ sql: String, text: String? = nil) throws {
        db = database.sqliteConnection!
        var s: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, sql, -1, &s, nil)
        guard rc == SQLITE_OK, let s else { throw Self.error(rc, db, sql) }
        stmt = s
        borrowed = nil
        if let text {
            for i in 1...max(1, Int(sqlite3_bind_parameter_count(stmt))) { try bind(Int32(i), text) }
        }
    }

    /// Uses a statement of GRDB's cache (`db.cachedStatement(sql:)`): prepared once per
    /// connection, bound and stepped here through the C API.
    init(_ database: Database, cached sql: String) throws {
        db = database.sqliteConnection!
        let statement = try database.cachedStatement(sql: sql)
        stmt = statement.sqliteStatement
        borrowed = statement
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
    }

    deinit {
        if borrowed == nil {
            sqlite3_finalize(stmt)
        } else {
            sqlite3_reset(stmt)
            sqlite3_clear_bindings(stmt)
        }
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private static func error(_ rc: Int32, _ db: OpaquePointer, _ sql: String) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: rc), message: String(cString: sqlite3_errmsg(db)), sql: sql)
    }

    /// Advances to the next row; false at the end.
    func step() throws -> Bool {
        let rc = sqlite3_step(stmt)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw Self.error(rc, db, String(cString: sqlite3_sql(stmt)))
    }

    // MARK: Writing

    /// Binds parameter `i` (1-based); `nil` binds NULL.
    func bind(_ i: Int32, _ v: Int64?) throws {
        try check(v.map { sqlite3_bind_int64(stmt, i, $0) } ?? sqlite3_bind_null(stmt, i))
    }

    func bind(_ i: Int32, _ v: Int?) throws { try bind(i, v.map(Int64.init)) }

    func bind(_ i: Int32, _ v: Double?) throws {
        try check(v.map { sqlite3_bind_double(stmt, i, $0) } ?? sqlite3_bind_null(stmt, i))
    }

    /// Binds a string's UTF-8 bytes as TEXT, all of them (an embedded NUL included).
    func bind(_ i: Int32, _ v: String?) throws {
        guard var v else { return try check(sqlite3_bind_null(stmt, i)) }
        try v.withUTF8 { try bindText(i, UnsafeRawBufferPointer($0)) }
    }

    /// Binds UTF-8 bytes as TEXT.
    func bind(_ i: Int32, utf8 v: [UInt8]) throws {
        try v.withUnsafeBytes { try bindText(i, $0) }
    }

    /// Binds bytes as TEXT with their length (not up to a NUL); no bytes bind the empty text, not NULL.
    private func bindText(_ i: Int32, _ raw: UnsafeRawBufferPointer) throws {
        guard let base = raw.baseAddress, raw.count > 0 else { return try check(sqlite3_bind_text(stmt, i, "", 0, Self.transient)) }
        try check(sqlite3_bind_text(stmt, i, base.assumingMemoryBound(to: CChar.self), Int32(raw.count), Self.transient))
    }

    /// Binds bytes as a BLOB.
    func bind(_ i: Int32, blob v: [UInt8]) throws {
        // sqlite3_bind_zeroblob for no bytes: a NULL pointer would bind NULL.
        guard !v.isEmpty else { return try check(sqlite3_bind_zeroblob(stmt, i, 0)) }
        try v.withUnsafeBytes { raw in
            try check(sqlite3_bind_blob(stmt, i, raw.baseAddress!, Int32(raw.count), Self.transient))
        }
    }

    /// Binds a vector as a little-endian Float32 BLOB (the layout of ``VectorCoding``).
    func bind(_ i: Int32, floats v: [Float]) throws {
        #if _endian(little)
        try v.withUnsafeBytes { raw in
            try check(sqlite3_bind_blob(stmt, i, raw.baseAddress, Int32(raw.count), Self.transient))
        }
        #else
        let data = VectorCoding.encode(v)
        try data.withUnsafeBytes { raw in
            try check(sqlite3_bind_blob(stmt, i, raw.baseAddress, Int32(raw.count), Self.transient))
        }
        #endif
    }

    /// Runs a statement that returns no rows, then resets it for the next bindings.
    func execute() throws {
        let rc = sqlite3_step(stmt)
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
        guard rc == SQLITE_DONE || rc == SQLITE_ROW else { throw Self.error(rc, db, String(cString: sqlite3_sql(stmt))) }
    }

    /// Resets the statement for new bindings (after reading its rows).
    func reset() {
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
    }

    private func check(_ rc: Int32) throws {
        guard rc == SQLITE_OK else { throw Self.error(rc, db, String(cString: sqlite3_sql(stmt))) }
    }

    // MARK: Reading

    func isNull(_ i: Int32) -> Bool { sqlite3_column_type(stmt, i) == SQLITE_NULL }
    func int(_ i: Int32) -> Int { Int(sqlite3_column_int64(stmt, i)) }
    func int64(_ i: Int32) -> Int64 { sqlite3_column_int64(stmt, i) }
    func double(_ i: Int32) -> Double { sqlite3_column_double(stmt, i) }

    /// The bytes of a TEXT or BLOB column (valid until the next step).
    func bytes(_ i: Int32) -> UnsafeRawBufferPointer {
        let n = Int(sqlite3_column_bytes(stmt, i))
        guard n > 0, let p = sqlite3_column_blob(stmt, i) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: p, count: n)
    }

    /// The UTF-8 bytes of a TEXT column (valid until the next step), without making a String.
    func textBytes(_ i: Int32) -> UnsafeRawBufferPointer {
        guard let p = sqlite3_column_text(stmt, i) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: p, count: Int(sqlite3_column_bytes(stmt, i)))
    }

    func text(_ i: Int32) -> String {
        // sqlite3_column_text first, so that a TEXT value is read as UTF-8 (column_blob would not convert).
        guard let p = sqlite3_column_text(stmt, i) else { return "" }
        let n = Int(sqlite3_column_bytes(stmt, i))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }

    func optionalText(_ i: Int32) -> String? { isNull(i) ? nil : text(i) }

    /// A little-endian Float32 vector BLOB.
    func floats(_ i: Int32) -> [Float] {
        VectorCoding.decode(bytes(i))
    }
}
