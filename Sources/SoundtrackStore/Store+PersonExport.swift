import Crypto
import Foundation
import GRDB
import SoundtrackContext

/// Everything stored about one person as one JSON document, and that document restored into
/// another database (issue 42, item 6; docs/formats.md, "Person export"; the schema is
/// docs/schemas/person.schema.json).
///
/// The document holds the person's rows of every table that keeps them, column by column, as the
/// database holds them (a BLOB as `{"base64": "…"}`), so that a database that imports it ranks
/// the person exactly as the one that exported it did, given the same catalog, models and blend.
/// Its `sha256` covers the rows: a document changed by hand is refused.
public enum PersonExport {
    /// `format` of the document.
    public static let format = "soundtrack-person"
    /// `version` of the document's layout.
    public static let version = 1

    /// A table of a person's rows: the column naming the person, the columns never exported, and
    /// whether an import writes its rows.
    struct Table {
        var name: String
        var userColumn: String
        /// Columns left out: a row id the importing database assigns, a secret.
        var omitted: Set<String> = []
        /// Exported but not imported (the keys: their secrets are not in the document; the pairing
        /// windows of the community model: counted again from the imported feedback; the person's
        /// memberships of groups' listening sessions: the sessions are other people's too).
        var imported = true
        /// Columns exported but left out of an import (an email hash keyed by the exporting
        /// database's key, which the importing database cannot check addresses against).
        var notImported: Set<String> = []
    }

    /// The tables, in the order an import writes them (the user's row first).
    static let tables: [Table] = [
        Table(name: "users", userColumn: "id", notImported: ["email_hash", "email_hash_scheme"]),
        Table(name: "user_settings", userColumn: "user_id"),
        Table(name: "weights", userColumn: "user_id"),
        Table(name: "places", userColumn: "user_id"),
        Table(name: "sessions", userColumn: "user_id"),
        Table(name: "bins", userColumn: "user_id", omitted: ["id"]),
        Table(name: "picks", userColumn: "user_id"),
        Table(name: "feedback", userColumn: "user_id"),
        Table(name: "pending_events", userColumn: "user_id", omitted: ["id"]),
        Table(name: "blend_examples", userColumn: "user_id", omitted: ["id"]),
        Table(name: "calendar_events", userColumn: "user_id"),
        Table(name: "library_tracks", userColumn: "user_id"),
        Table(name: "quiz_players", userColumn: "user_id"),
        Table(name: "quizzes", userColumn: "user_id"),
        Table(name: "api_keys", userColumn: "user_id", omitted: ["hash"], imported: false),
        Table(name: "community_people", userColumn: "user_id", imported: false),
        Table(name: "group_members", userColumn: "user_id", imported: false)
    ]

    /// The largest integer a JSON number holds exactly; larger ones are written as strings.
    static let exactIntegers: Int64 = 1 << 53

    /// The JSON of one stored value.
    static func json(_ value: DatabaseValue) -> JSONValue {
        switch value.storage {
        case .null: .null
        case let .int64(n): abs(n) <= exactIntegers ? .number(Double(n)) : .object([("integer", .string(String(n)))])
        case let .double(x): .number(x)
        case let .string(s): .string(s)
        case let .blob(data): .object([("base64", .string(data.base64EncodedString()))])
        }
    }

    /// The stored value of one JSON value of a row, `path` naming it in errors.
    static func value(_ json: JSONValue, path: String) throws(InputError) -> DatabaseValue {
        switch json {
        case .null: return .null
        case let .string(s): return s.databaseValue
        case let .bool(b): return b.databaseValue
        case let .number(x):
            if x == x.rounded(), abs(x) <= Double(exactIntegers) { return Int64(x).databaseValue }
            return x.databaseValue
        case let .object(pairs) where pairs.count == 1:
            if pairs[0].0 == "base64", case let .string(text) = pairs[0].1, let data = Data(base64Encoded: text) { return data.databaseValue }
            if pairs[0].0 == "integer", case let .string(text) = pairs[0].1, let n = Int64(text) { return n.databaseValue }
            throw InputError(path: path, expected: "{\"base64\": …} with base64 text or {\"integer\": …} with an integer", got: "something else")
        default:
            throw InputError(path: path, expected: "null, a string, a number or {\"base64\": …}", got: json.typeDescription)
        }
    }

    /// The SHA-256 (hex) of the document's `tables` as serialized.
    static func checksum(_ tables: JSONValue) -> String {
        SHA256.hash(data: Data(tables.serialized().utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

extension Store {
    /// Everything stored about `user` as a ``PersonExport`` document.
    /// - Throws: ``RuleError/unknownUser(_:)``; database errors.
    public func exportPerson(_ user: String, at now: Date) throws -> JSONValue {
        try database.read { db in
            guard try Self.userExists(db, user) else { throw RuleError.unknownUser(user) }
            var tables: [(String, JSONValue)] = []
            for table in PersonExport.tables {
                let columns = try db.columns(in: table.name).map(\.name).filter { !table.omitted.contains($0) }
                let list = columns.map { "\"\($0)\"" }.joined(separator: ", ")
                // In the order written (a table without row ids: in its key's order).
                let order = try Self.isWithoutRowID(db, table.name) ? "" : " ORDER BY rowid"
                let rows = try Row.fetchAll(db, sql: "SELECT \(list) FROM \(table.name) WHERE \(table.userColumn) = ?\(order)", arguments: [user])
                tables.append((table.name, .array(rows.map { row in .object(columns.map { ($0, PersonExport.json(row[$0] as DatabaseValue)) }) })))
            }
            let body = JSONValue.object(tables)
            return .object([
                ("format", .string(PersonExport.format)), ("version", .number(Double(PersonExport.version))),
                ("schema", .string(Schema.latestMigration)), ("user", .string(user)),
                ("exported_at", .string(Timestamp(date: now, offsetSeconds: 0).rfc3339)), ("tables", body),
                ("sha256", .string(PersonExport.checksum(body)))
            ])
        }
    }

    /// Restores a ``PersonExport`` document: the person's rows written in one transaction, so that
    /// a document refused leaves nothing behind. The person's feedback is counted in the community
    /// model by the next process that loads it (it follows the model's `seq`).
    /// - Returns: the user, and how many rows each table received.
    /// - Throws: ``InputError`` naming the field of a malformed, changed or incompatible document
    ///   (or a row the database refuses, such as an event id another person has);
    ///   ``RuleError/userExists(_:)`` when the user is here already.
    public func importPerson(_ document: JSONValue) throws -> (user: String, rows: [(table: String, count: Int)]) {
        let r = try JSONObjectReader(document, base: "")
        try r.rejectUnknown(["format", "version", "schema", "user", "exported_at", "tables", "sha256"])
        guard r.value("format") == .string(PersonExport.format) else {
            throw InputError(path: "format", expected: "\"\(PersonExport.format)\"", got: r.value("format").map(Got.value) ?? "nothing")
        }
        guard r.value("version") == .number(Double(PersonExport.version)) else {
            throw InputError(path: "version", expected: "\(PersonExport.version)", got: r.value("version").map(Got.value) ?? "nothing")
        }
        guard case .string(let schema)? = r.value("schema"), Schema.importableMigrations.contains(schema) else {
            let known = Schema.importableMigrations.map { "\"\($0)\"" }.joined(separator: ", ")
            throw InputError(path: "schema", expected: "one of \(known) (this build's database schemas)", got: r.value("schema").map(Got.value) ?? "nothing")
        }
        guard let user = try r.optionalIdentifier("user") else { throw InputError(path: "user", expected: "a user id", got: "nothing") }
        let tables = try r.require("tables", "an object of the person's tables")
        guard let sum = try r.string("sha256", maxLength: 64), sum == PersonExport.checksum(tables) else {
            throw InputError(path: "sha256", expected: "the SHA-256 of `tables` as exported (the document was changed)", got: "another value")
        }
        let t = try JSONObjectReader(tables, base: "tables")
        try t.rejectUnknown(PersonExport.tables.map(\.name))
        return try database.write { db in
            guard try !Self.userExists(db, user) else { throw RuleError.userExists(user) }
            var counts: [(table: String, count: Int)] = []
            for table in PersonExport.tables where table.imported {
                let rows = try t.array(table.name, max: .max, noun: "rows") ?? []
                let columns = Set(try db.columns(in: table.name).map(\.name)).subtracting(table.omitted)
                for (i, row) in rows.enumerated() {
                    try Self.insertExportedRow(db, row, table: table, columns: columns, user: user, path: "tables.\(table.name)[\(i)]")
                }
                counts.append((table.name, rows.count))
            }
            return (user, counts)
        }
    }

    /// Inserts one exported row after checking its columns and its person.
    private static func insertExportedRow(
        _ db: Database, _ row: JSONValue, table: PersonExport.Table, columns: Set<String>, user: String, path: String
    ) throws {
        let reader = try JSONObjectReader(row, base: path)
        try reader.rejectUnknown(Array(columns))
        guard reader.value(table.userColumn) == .string(user) else {
            throw InputError(path: "\(path).\(table.userColumn)", expected: "the document's user '\(user)'", got: reader.value(table.userColumn).map(Got.value) ?? "nothing")
        }
        var names: [String] = [], values: [DatabaseValue] = []
        for (name, value) in reader.pairs where !table.notImported.contains(name) {
            names.append("\"\(name)\"")
            values.append(try PersonExport.value(value, path: "\(path).\(name)"))
        }
        let marks = Array(repeating: "?", count: names.count).joined(separator: ", ")
        do {
            try db.execute(
                sql: "INSERT INTO \(table.name) (\(names.joined(separator: ", "))) VALUES (\(marks))", arguments: StatementArguments(values))
        } catch let error as DatabaseError {
            throw InputError(path: path, expected: "a row this database accepts", got: error.message ?? "\(error.resultCode)")
        }
    }

    static func isWithoutRowID(_ db: Database, _ table: String) throws -> Bool {
        let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [table]) ?? ""
        return sql.uppercased().contains("WITHOUT ROWID")
    }
}
