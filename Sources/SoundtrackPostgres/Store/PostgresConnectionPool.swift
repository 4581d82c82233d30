import Dispatch
import Logging
import PostgresNIO
import Synchronization

/// The connections of a ``PostgresStore``, for callers that block: at most `size` in use at once,
/// idle ones kept for the next call, a closed one replaced. Every step is an `EventLoopFuture`
/// waited for on the calling thread, never on an event loop's (postgres-nio runs the connections
/// on its own event loops), and never through Swift's cooperative pool, which blocked callers
/// could starve.
final class PostgresConnectionPool: Sendable {
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private let idle = Mutex<[PostgresConnection]>([])
    private let slots: DispatchSemaphore
    private let ids = Atomic<Int>(0)

    /// - Parameter size: the most connections open at once (at least 1).
    init(configuration: PostgresConnection.Configuration, size: Int, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        slots = DispatchSemaphore(value: max(1, size))
    }

    /// Runs `body` on a connection of its own for the call, waiting for one when all are in use.
    /// A connection that `body` left closed (the server went away) is not kept.
    /// - Throws: the connection's error, what `body` throws.
    func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        slots.wait()
        defer { slots.signal() }
        var connection = idle.withLock { $0.popLast() }
        if connection?.isClosed ?? true {
            connection = try PostgresConnection.connect(
                on: PostgresConnection.defaultEventLoopGroup.any(), configuration: configuration,
                id: ids.add(1, ordering: .relaxed).newValue, logger: logger
            ).wait()
        }
        let c = connection!
        defer { if !c.isClosed { idle.withLock { $0.append(c) } } }
        return try body(c)
    }

    /// Closes the idle connections: after the last call has returned.
    func close() {
        let all = idle.withLock { i in
            defer { i = [] }
            return i
        }
        for c in all { try? c.close().wait() }
    }
}

/// One transaction's statements on one connection, each waited for.
struct PostgresTransaction {
    let connection: PostgresConnection
    let logger: Logger

    /// Runs a statement and collects its rows.
    @discardableResult
    func query(_ query: PostgresQuery) throws -> PostgresQueryResult {
        try connection.query(query, logger: logger).wait()
    }

    /// Runs a statement; returns how many rows it changed (0 when the server says none).
    @discardableResult
    func execute(_ query: PostgresQuery) throws -> Int {
        try connection.query(query, logger: logger).wait().metadata.rows ?? 0
    }
}
