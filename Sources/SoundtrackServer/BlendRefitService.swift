import Dispatch
import Foundation
import Logging
import ServiceLifecycle
import SoundtrackRules
import Synchronization

/// Learns the blend of the track ranker again in the background (``BlendRefit``): every
/// `interval` it looks whether a refit is due (``BlendRefit/every`` new queries since the last
/// attempt, or `maxAge` since it with `minimum` new queries or more) and, on a thread of its own
/// at the lowest priority, fits, judges and records; a promoted blend ranks from the next request
/// on (``LiveRecommender/use(ranker:)``). Requests never wait for it: the fit reads the queries in
/// a read transaction and writes one row.
final class BlendRefitService: Service, Sendable {
    private let live: LiveRecommender
    private let refit: BlendRefit
    private let maxAge: TimeInterval
    private let minimum: Int
    private let clock: ServerClock
    private let metrics: ServerMetrics
    private let logger: Logger
    private let thread: PeriodicThread
    /// When the last attempt ran (monotonic seconds); the start counts as one.
    private let lastAttempt: Mutex<Double>

    init(
        live: LiveRecommender, refit: BlendRefit, interval: Duration, maxAge: Duration, minimum: Int, clock: ServerClock, metrics: ServerMetrics,
        logger: Logger
    ) {
        self.live = live
        self.refit = refit
        self.maxAge = Double(maxAge.nanoseconds) / 1e9
        self.minimum = minimum
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
        lastAttempt = Mutex(clock.monotonic())
        thread = PeriodicThread(named: "st-blend", nice: 19, every: interval)
    }

    func run() async throws {
        await thread.run { [self] in attemptIfDue() }
    }

    /// One look: a refit when it is due.
    func attemptIfDue() {
        do {
            let store = live.store
            let waiting = try refit.newQueries(store)
            let age = clock.monotonic() - lastAttempt.withLock { $0 }
            guard waiting >= Int64(refit.every) || (age >= maxAge && waiting >= Int64(minimum)) else { return }
            lastAttempt.withLock { $0 = clock.monotonic() }
            let outcome = try refit.run(store, current: live.rules.engine.ranker, at: clock.now())
            metrics.blendRefits.increment()
            if outcome.decision.promoted {
                live.use(ranker: outcome.inUse)
                metrics.blendVersion.set(Double(outcome.inUse.version))
            }
            logger.info("blend refit", metadata: ["outcome": "\(outcome.summary)", "promoted": "\(outcome.decision.promoted)"])
        } catch {
            logger.warning("blend refit failed", metadata: ["error": "\(error)"])
        }
    }
}
