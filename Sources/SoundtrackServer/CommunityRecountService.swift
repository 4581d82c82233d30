import Logging
import ServiceLifecycle
import Synchronization

/// Keeps the service's community model free of forgotten people: after a forget through the
/// service at once, and every `interval` for forgets by another process (`soundtrack users
/// forget` beside the service), it counts the model again from the feedback log on a thread of its
/// own at the lowest priority and swaps it in (``LiveRecommender/recountCommunityIfForgotten(stop:)``).
/// Picks never wait for the count; they wait for the swap, which records the events applied
/// during the count into the new model.
final class CommunityRecountService: Service, Sendable {
    private let live: LiveRecommender
    private let clock: ServerClock
    private let metrics: ServerMetrics
    private let logger: Logger
    private let thread: PeriodicThread

    init(live: LiveRecommender, interval: Duration, clock: ServerClock, metrics: ServerMetrics, logger: Logger) {
        self.live = live
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
        let thread = PeriodicThread(named: "st-community", nice: 19, every: interval)
        self.thread = thread
        live.onForgetCommitted { thread.wakeUp() }
    }

    func run() async throws {
        await thread.run { [self] in recountIfDue() }
    }

    /// One look: the model counted again and swapped in when someone was forgotten since it was
    /// counted; given up when the service stops.
    /// - Returns: whether the model was replaced.
    @discardableResult
    func recountIfDue() -> Bool {
        do {
            let start = clock.monotonic()
            guard try live.recountCommunityIfForgotten(stop: { [thread] in thread.isStopped }) else { return false }
            metrics.communityRecounts.increment()
            logger.info("community model counted again after a forget", metadata: ["seconds": "\(clock.monotonic() - start)"])
            return true
        } catch {
            logger.warning("counting the community model again failed; the next round tries again", metadata: ["error": "\(error)"])
            return false
        }
    }
}
