import GRDB
import GRDBSQLite
import Synchronization

/// Counts the work SQLite does for the statements a ``Store`` runs, on every connection it opens
/// (its pool's and the community model's reader): each statement's virtual-machine steps
/// (`SQLITE_STMTSTATUS_VM_STEP`, which grow with the rows a statement visits) and the steps of
/// full scans (`SQLITE_STMTSTATUS_FULLSCAN_STEP`), by statement text, as each statement
/// finishes. What shows that a process's start-up reads no table whose size grows with the
/// feedback log (issue 40; `StartupReadsTests`).
///
/// ```swift
/// let counter = StatementCounter()
/// let store = try Store(path: path, statementCounter: counter)
/// _ = try store.loadCommunity(write: false)
/// counter.total.steps
/// ```
public final class StatementCounter: Sendable {
    /// What a statement cost, summed over its runs.
    public struct Cost: Sendable, Equatable {
        /// Times it finished.
        public var runs = 0
        /// Virtual-machine steps.
        public var steps = 0
        /// Steps of full table or index scans.
        public var scanSteps = 0
    }

    private let costs = Mutex<[String: Cost]>([:])

    /// A counter of nothing yet.
    public init() {}

    /// Every statement's cost, by its SQL text.
    public var byStatement: [String: Cost] { costs.withLock { $0 } }

    /// The costs of all statements together.
    public var total: Cost {
        byStatement.values.reduce(into: Cost()) { sum, c in
            sum.runs += c.runs
            sum.steps += c.steps
            sum.scanSteps += c.scanSteps
        }
    }

    /// Starts counting the statements of a connection (from the store's `prepareDatabase`). The
    /// store keeps the counter as long as its connections.
    func install(on db: Database) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_trace_v2(
            db.sqliteConnection, UInt32(SQLITE_TRACE_PROFILE),
            { _, context, statement, _ in
                guard let context, let statement else { return 0 }
                let stmt = OpaquePointer(statement)
                let sql = sqlite3_sql(stmt).map { String(cString: $0) } ?? ""
                Unmanaged<StatementCounter>.fromOpaque(context).takeUnretainedValue().add(
                    sql, steps: sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_VM_STEP, 1),
                    scanSteps: sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_FULLSCAN_STEP, 1))
                return 0
            }, context)
    }

    private func add(_ sql: String, steps: Int32, scanSteps: Int32) {
        costs.withLock { costs in
            costs[sql, default: Cost()].runs += 1
            costs[sql, default: Cost()].steps += Int(steps)
            costs[sql, default: Cost()].scanSteps += Int(scanSteps)
        }
    }
}
