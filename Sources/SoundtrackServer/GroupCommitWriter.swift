import Logging
import ServiceLifecycle
import Synchronization
import SoundtrackStore

/// The single writer: takes the writes the request handlers queue, commits everything queued
/// so far in one transaction (group commit), then fulfils their tickets. It runs as a service
/// and, on graceful shutdown, commits what is left before it returns.
final class GroupCommitWriter: Service, Sendable {
    struct Item: Sendable {
        var write: PendingWrite
        var ticket: CommitTicket?
    }

    private struct State {
        var items: [Item] = []
        var waiter: CheckedContinuation<Void, Never>?
        var closed = false
    }

    private let store: Store
    private let maxBatch: Int
    private let logger: Logger
    private let metrics: ServerMetrics
    private let state = Mutex(State())
    /// Called after each item is settled (committed: `nil`; failed: its error), in order.
    let settled: @Sendable (Item, (any Error)?) -> Void

    init(store: Store, maxBatch: Int, metrics: ServerMetrics, logger: Logger, settled: @escaping @Sendable (Item, (any Error)?) -> Void) {
        self.store = store
        self.maxBatch = max(1, maxBatch)
        self.metrics = metrics
        self.logger = logger
        self.settled = settled
    }

    /// Queues a write. - Throws: ``APIError/unavailable`` once the writer has stopped taking writes.
    func enqueue(_ write: PendingWrite, ticket: CommitTicket?) throws(APIError) {
        let waiter: CheckedContinuation<Void, Never>? = try state.withLock { (s: inout State) throws(APIError) in
            guard !s.closed else { throw APIError.unavailable }
            s.items.append(Item(write: write, ticket: ticket))
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Whether the writer still takes writes.
    var isOpen: Bool { state.withLock { !$0.closed } }

    /// Stops taking writes; what is queued is still committed.
    func close() {
        let waiter = state.withLock { s in
            s.closed = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    func run() async throws {
        try await withGracefulShutdownHandler {
            try await self.loop()
        } onGracefulShutdown: {
            self.close()
        }
        logger.info("writer stopped: every queued write is committed")
    }

    private func loop() async throws {
        while true {
            let (batch, closed) = await next()
            if batch.isEmpty {
                if closed { return }
                continue
            }
            await commit(batch)
        }
    }

    private func next() async -> ([Item], Bool) {
        while true {
            let taken: ([Item], Bool)? = state.withLock { s in
                if s.items.isEmpty && !s.closed { return nil }
                let n = min(maxBatch, s.items.count)
                let batch = Array(s.items.prefix(n))
                s.items.removeFirst(n)
                return (batch, s.closed && s.items.isEmpty)
            }
            if let taken { return taken }
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { s in
                    if !s.items.isEmpty || s.closed { return true }
                    s.waiter = c
                    return false
                }
                if resumeNow { c.resume() }
            }
        }
    }

    private func commit(_ batch: [Item]) async {
        let start = ContinuousClock.now
        do {
            try await store.commitAsync(batch.map(\.write))
            metrics.commitSeconds.record(ContinuousClock.now - start)
            metrics.writeBatches.increment()
            metrics.writesCommitted.increment(by: Int64(batch.count))
            for item in batch { settle(item, nil) }
        } catch {
            // One bad write must not sink the others: retry each in its own transaction.
            logger.error("write batch failed; retrying one by one", metadata: ["writes": "\(batch.count)", "error": "\(Self.describe(error))"])
            for item in batch {
                do {
                    try await store.commitAsync([item.write])
                    settle(item, nil)
                } catch {
                    logger.error("write failed", metadata: ["user": "\(item.write.user)", "error": "\(Self.describe(error))"])
                    settle(item, error)
                }
            }
        }
    }

    private func settle(_ item: Item, _ error: (any Error)?) {
        settled(item, error)
        item.ticket?.complete(error)
    }

    /// An error's type and, for SQLite, its result code: never values from requests.
    static func describe(_ error: any Error) -> String {
        String(describing: type(of: error))
    }
}
