import Dispatch
import Foundation
import ServiceLifecycle
import Synchronization

/// Checkpoints the users' states (``LiveRecommender/checkpointViews()``) every `interval`, and
/// sooner when the live recommender says enough feedback waits for one. Feedback commits its rows
/// and events alone; the states follow here, so that a burst of feedback on a user rewrites the
/// user's bins once per checkpoint instead of once per event. The last checkpoint runs when the
/// committer closes (``GroupCommitter/closing``), after this service has stopped (the services
/// stop in reverse order of ``SoundtrackAPI/buildApplication(onServerRunning:)``'s list).
final class ViewCheckpointService: Service, Sendable {
    private let live: LiveRecommender
    private let metrics: ServerMetrics
    private let thread: PeriodicThread

    init(live: LiveRecommender, interval: Duration, metrics: ServerMetrics) {
        self.live = live
        self.metrics = metrics
        let thread = PeriodicThread(named: "st-views", every: interval)
        self.thread = thread
        live.onCheckpointDue { thread.wakeUp() }
    }

    func run() async throws {
        await thread.run { [self] in checkpoint() }
    }

    private func checkpoint() {
        // In slices of 16 users, 5 ms apart, then the pending rows they include 1,024 at a time:
        // the writes are spread over the time between checkpoints instead of arriving at the
        // committer at once, which held the feedback committed meanwhile (see docs/http-api.md).
        let queued = live.checkpointViews(slice: 16, pruneSlice: 1024) {
            if !self.thread.isStopped { usleep(5_000) }  // a shutdown does not wait for the spread
        }
        metrics.viewCheckpoints.increment()
        metrics.viewStatesQueued.increment(by: Int64(queued))
    }
}
