/// A table of the PostgreSQL schema and how it is spread over the nodes of a cluster sharded by user
/// (the way Citus distributes tables; docs/architecture.md, "PostgreSQL and sharding by user").
///
/// ``PostgresSchema/tables`` lists every table once: the distribution rules
/// (``DistributionRules``) and the twin check against the SQLite schema read it, and a table the
/// live schema has and the list does not is itself a violation.
public struct PostgresTable: Sendable, Hashable {
    /// How a table's rows are placed on the nodes.
    public enum Distribution: Sendable, Hashable {
        /// Hash-distributed on `user_id`, colocated with `users`: a person's rows of every such table
        /// lie on one node, so a person's transaction never leaves it.
        case byUser
        /// One copy on every node: read anywhere, every write goes to every node. For what all people
        /// share and what is looked up before the person is known.
        case reference
        /// Hash-distributed on another column, colocated with nothing of a person's: for a lookup by
        /// a key that is not the person (an event id's owner), too large and too often written for a
        /// copy on every node.
        case byColumn(String)
    }

    /// The table's counterpart in the SQLite schema, and how their columns differ.
    public struct SQLiteTwin: Sendable, Hashable {
        /// The SQLite table.
        public var table: String
        /// SQLite column → PostgreSQL column, where the names differ.
        public var renamed: [String: String]
        /// PostgreSQL's columns that SQLite has no column for, with why.
        public var added: [String: String]
        /// SQLite column → its PostgreSQL type and why, where that type is not the one SQLite's
        /// declared type maps to (SQLite stores any value in any column; PostgreSQL does not).
        public var retyped: [String: String]

        public init(table: String, renamed: [String: String] = [:], added: [String: String] = [:], retyped: [String: String] = [:]) {
            self.table = table
            self.renamed = renamed
            self.added = added
            self.retyped = retyped
        }
    }

    /// The table's name.
    public var name: String
    /// How its rows are placed on the nodes.
    public var distribution: Distribution
    /// Whether rows name a person by a `user_id` column: a forget deletes them. Always so for
    /// ``Distribution/byUser``; a table placed otherwise says so here, so that no person's row is
    /// left out of a forget by accident (``DistributionRules`` checks it against the columns).
    public var personal: Bool
    /// The SQLite table it mirrors; `nil` for a table PostgreSQL alone needs.
    public var sqlite: SQLiteTwin?
    /// Why the table is placed as it is (and why it has no twin, when it has none).
    public var why: String

    /// The column the rows are distributed on; `nil` for a reference table.
    public var distributionColumn: String? {
        switch distribution {
        case .byUser: "user_id"
        case .reference: nil
        case .byColumn(let column): column
        }
    }

    public init(_ name: String, _ distribution: Distribution, personal: Bool? = nil, sqlite: SQLiteTwin?, why: String) {
        self.name = name
        self.distribution = distribution
        self.personal = personal ?? (distribution == .byUser)
        self.sqlite = sqlite
        self.why = why
    }
}
