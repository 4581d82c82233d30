/// The rules that let every table be distributed by user the way Citus distributes tables, checked
/// on a live schema (``LiveSchema``) against the list of tables (``PostgresSchema/tables``).
///
/// - Every table of the schema is listed, and every listed table exists.
/// - A table distributed by user has a `user_id` column, NOT NULL; a table distributed by another
///   column has that column, NOT NULL.
/// - A distributed table has a primary key, and its primary key and every unique constraint, unique
///   index and exclusion constraint include the distribution column (a node can check only the
///   uniqueness of its own rows).
/// - A foreign key between two tables distributed by user pairs `user_id` with `user_id` (a person's
///   rows point only at the same person's); a distributed table may point at a reference table; no
///   other foreign key is allowed (a reference table pointing at a distributed one, or anything to
///   or from a table distributed by another column: their rows are on other nodes).
/// - No trigger on a distributed table (Citus runs none that writes other tables).
/// - A table has a `user_id` column exactly when it is listed as personal: a forget finds every
///   person's row by it.
public enum DistributionRules {
    /// A broken rule: the table and what is wrong.
    public struct Violation: Sendable, Hashable, CustomStringConvertible {
        /// The table that breaks it.
        public var table: String
        /// What is wrong, in words.
        public var message: String

        public init(table: String, message: String) {
            self.table = table
            self.message = message
        }

        public var description: String { "\(table): \(message)" }
    }

    /// Every rule `schema` breaks, given how `tables` places its tables (none: distributable).
    public static func violations(of schema: LiveSchema, tables: [PostgresTable] = PostgresSchema.tables) -> [Violation] {
        var found: [Violation] = []
        let listed = Dictionary(tables.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        for name in schema.tables.keys.sorted() where listed[name] == nil {
            found.append(.init(table: name, message: "not in PostgresSchema.tables: say whether it is a person's (byUser), shared (reference) or distributed by another key"))
        }
        for table in tables where schema.tables[table.name] == nil {
            found.append(.init(table: table.name, message: "listed in PostgresSchema.tables but not in the database"))
        }
        for (name, columns) in schema.tables.sorted(by: { $0.key < $1.key }) {
            guard let table = listed[name] else { continue }
            let hasUserID = columns.contains { $0.name == "user_id" }
            if hasUserID != table.personal {
                found.append(
                    .init(
                        table: name,
                        message: table.personal ? "listed as personal but has no user_id column" : "has a user_id column but is not listed as personal (a forget would miss it)"))
            }
            if let column = table.distributionColumn {
                found += distributedTableViolations(table, column: column, columns: columns, schema: schema)
            }
        }
        found += foreignKeyViolations(schema, listed)
        return found
    }

    private static func distributedTableViolations(_ table: PostgresTable, column: String, columns: [LiveSchema.Column], schema: LiveSchema) -> [Violation] {
        var found: [Violation] = []
        let name = table.name
        if let c = columns.first(where: { $0.name == column }) {
            if c.nullable { found.append(.init(table: name, message: "the distribution column \(column) may be NULL")) }
        } else {
            found.append(.init(table: name, message: "has no \(column) column to be distributed on"))
        }
        let keys = schema.uniqueKeys.filter { $0.table == name }
        if !keys.contains(where: \.isPrimary) { found.append(.init(table: name, message: "has no primary key")) }
        for key in keys where !key.columns.contains(column) {
            let kind = key.isPrimary ? "primary key" : "unique key"
            found.append(.init(table: name, message: "\(kind) \(key.name) (\(key.columns.joined(separator: ", "))) does not include \(column)"))
        }
        for trigger in schema.triggers where trigger.table == name {
            found.append(.init(table: name, message: "trigger \(trigger.name) on a distributed table"))
        }
        return found
    }

    private static func foreignKeyViolations(_ schema: LiveSchema, _ listed: [String: PostgresTable]) -> [Violation] {
        var found: [Violation] = []
        for fk in schema.foreignKeys {
            guard let from = listed[fk.table], let to = listed[fk.referencedTable] else { continue }
            let what = "foreign key \(fk.name) (\(fk.columns.joined(separator: ", "))) → \(fk.referencedTable) (\(fk.referencedColumns.joined(separator: ", ")))"
            switch (from.distribution, to.distribution) {
            case (_, .reference):
                continue
            case (.byUser, .byUser):
                let pairs = zip(fk.columns, fk.referencedColumns)
                if !pairs.contains(where: { $0 == "user_id" && $1 == "user_id" }) {
                    found.append(.init(table: fk.table, message: "\(what) does not pair user_id with user_id: it may point at another person's row"))
                }
            case (.reference, _):
                found.append(.init(table: fk.table, message: "\(what): a reference table may not point at a distributed table"))
            default:
                found.append(.init(table: fk.table, message: "\(what) joins tables that are not colocated"))
            }
        }
        return found
    }
}
