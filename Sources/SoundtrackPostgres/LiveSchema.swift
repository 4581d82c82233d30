import Logging
import PostgresNIO

/// The schema a PostgreSQL database has, as its catalog says (`pg_catalog`, `information_schema`),
/// in the connection's current schema: what ``DistributionRules`` judges.
public struct LiveSchema: Sendable, Equatable {
    /// A column: its name, its type as `information_schema` names it, and whether it may be NULL.
    public struct Column: Sendable, Equatable {
        /// The column's name.
        public var name: String
        /// Its type, as `information_schema.columns.data_type` names it.
        public var type: String
        /// Whether it may be NULL.
        public var nullable: Bool
    }

    /// A primary key, unique constraint, unique index or exclusion constraint: what makes rows unique.
    public struct UniqueKey: Sendable, Equatable {
        /// The table it is on.
        public var table: String
        /// The constraint's or index's name.
        public var name: String
        /// Whether it is the table's primary key.
        public var isPrimary: Bool
        /// The key's columns in order; an expression's place holds `"(expression)"`.
        public var columns: [String]
    }

    /// A foreign key: `table(columns)` references `referencedTable(referencedColumns)`, column by column.
    public struct ForeignKey: Sendable, Equatable {
        /// The constraint's name.
        public var name: String
        /// The referencing table and its columns.
        public var table: String
        public var columns: [String]
        /// The referenced table and its columns.
        public var referencedTable: String
        public var referencedColumns: [String]
    }

    /// A trigger on a table.
    public struct Trigger: Sendable, Equatable {
        /// The table it fires on.
        public var table: String
        /// Its name.
        public var name: String
    }

    /// Tables (ordinary and partitioned), by name, with their columns in order.
    public var tables: [String: [Column]]
    /// Primary keys, unique constraints and unique indexes.
    public var uniqueKeys: [UniqueKey]
    /// Foreign keys.
    public var foreignKeys: [ForeignKey]
    /// Triggers.
    public var triggers: [Trigger]

    public init(tables: [String: [Column]], uniqueKeys: [UniqueKey] = [], foreignKeys: [ForeignKey] = [], triggers: [Trigger] = []) {
        self.tables = tables
        self.uniqueKeys = uniqueKeys
        self.foreignKeys = foreignKeys
        self.triggers = triggers
    }

    /// Reads the current schema of the connection's database.
    public static func read(_ c: PostgresConnection, logger: Logger) async throws -> LiveSchema {
        var tables: [String: [Column]] = [:]
        let names = try await c.query(
            """
            SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
            """, logger: logger)
        for try await name in names.decode(String.self) { tables[name] = [] }
        let columns = try await c.query(
            """
            SELECT table_name::text, column_name::text, data_type::text, is_nullable::text = 'YES'
            FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position
            """, logger: logger)
        for try await (table, name, type, nullable) in columns.decode((String, String, String, Bool).self) where tables[table] != nil {
            tables[table]?.append(Column(name: name, type: type, nullable: nullable))
        }
        var keys: [UniqueKey] = []
        let indexes = try await c.query(
            """
            SELECT t.relname::text, i.relname::text, x.indisprimary,
                   coalesce((SELECT string_agg(coalesce(a.attname::text, '(expression)'), ',' ORDER BY k.ord)
                             FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS k (attnum, ord)
                             LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
                             WHERE k.ord <= x.indnkeyatts), '')
            FROM pg_index x
            JOIN pg_class t ON t.oid = x.indrelid
            JOIN pg_class i ON i.oid = x.indexrelid
            JOIN pg_namespace n ON n.oid = t.relnamespace
            WHERE n.nspname = current_schema() AND (x.indisunique OR x.indisexclusion)
            ORDER BY 1, 2
            """, logger: logger)
        for try await (table, name, primary, list) in indexes.decode((String, String, Bool, String).self) {
            keys.append(UniqueKey(table: table, name: name, isPrimary: primary, columns: Self.split(list)))
        }
        var foreign: [ForeignKey] = []
        let fks = try await c.query(
            """
            SELECT c.conname::text, s.relname::text, d.relname::text,
                   (SELECT string_agg(a.attname::text, ',' ORDER BY k.ord) FROM unnest(c.conkey) WITH ORDINALITY AS k (attnum, ord)
                    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum),
                   (SELECT string_agg(a.attname::text, ',' ORDER BY k.ord) FROM unnest(c.confkey) WITH ORDINALITY AS k (attnum, ord)
                    JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum)
            FROM pg_constraint c
            JOIN pg_class s ON s.oid = c.conrelid
            JOIN pg_class d ON d.oid = c.confrelid
            JOIN pg_namespace n ON n.oid = s.relnamespace
            WHERE c.contype = 'f' AND n.nspname = current_schema()
            ORDER BY 2, 1
            """, logger: logger)
        for try await (name, table, referenced, columns, referencedColumns) in fks.decode((String, String, String, String, String).self) {
            foreign.append(
                ForeignKey(name: name, table: table, columns: Self.split(columns), referencedTable: referenced, referencedColumns: Self.split(referencedColumns)))
        }
        var triggers: [Trigger] = []
        let tgs = try await c.query(
            """
            SELECT c.relname::text, t.tgname::text FROM pg_trigger t
            JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE NOT t.tgisinternal AND n.nspname = current_schema()
            ORDER BY 1, 2
            """, logger: logger)
        for try await (table, name) in tgs.decode((String, String).self) { triggers.append(Trigger(table: table, name: name)) }
        return LiveSchema(tables: tables, uniqueKeys: keys, foreignKeys: foreign, triggers: triggers)
    }

    private static func split(_ list: String) -> [String] { list.isEmpty ? [] : list.split(separator: ",").map(String.init) }
}
