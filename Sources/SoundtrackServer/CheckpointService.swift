import CSupport
import Dispatch
import Foundation
import Logging
import ServiceLifecycle
import SoundtrackStore
import Synchronization

/// Checkpoints the WAL beside the committer, on a thread of its own: the committer's commits then only
/// append to the log and wait for it to reach the disk, never for pages copied back into the
/// database file (see ``WALCheckpointer``).
///
/// Every `interval` it runs a passive checkpoint, which copies what it can without stopping the
/// committer. When the committer commits between the start and the end of one, the log keeps those
/// frames and cannot start over; once the log holds `restartFrames` or more, a restart
/// checkpoint holds the committer back while it copies the rest (little, after the passive ones)
/// and lets the next transaction write the log from its start, which bounds the file.
final class CheckpointService: Service, Sendable {
    private let checkpointer: WALCheckpointer
    private let restartFrames: Int
    private let metrics: ServerMetrics
    private let logger: Logger
    private let thread: PeriodicThread

    init(checkpointer: WALCheckpointer, interval: Duration, restartFrames: Int, nice: Int32 = 0, metrics: ServerMetrics, logger: Logger) {
        self.checkpointer = checkpointer
        // A last round after the stop: the committer has closed, and the log is copied back once more.
        thread = PeriodicThread(named: "st-checkpoint", nice: nice, every: interval, roundAfterStop: true)
        self.metrics = metrics
        self.restartFrames = restartFrames
        self.logger = logger
    }

    func run() async throws {
        await thread.run { [self] in checkpoint() }
    }

    /// One round: a passive checkpoint, and a restart one when the log has grown past `restartFrames`.
    private func checkpoint() {
        do {
            var (log, copied) = try checkpointer.checkpoint(.passive)
            if log >= restartFrames {
                // Passive ones first, back to back, each copying what was committed during the one
                // before: the restart, which holds the committer back, then copies (and syncs) only
                // what came during the last.
                for _ in 0..<2 { (log, copied) = try checkpointer.checkpoint(.passive) }
                (log, copied) = try checkpointer.checkpoint(.restart)
                metrics.walRestarts.increment()
            }
            metrics.checkpoints.increment()
            metrics.walPendingFrames.set(Double(max(0, log - copied)))
        } catch {
            // Busy (another process checkpoints, a reader holds old frames): the next round retries.
            logger.debug("checkpoint deferred", metadata: ["error": "\(GroupCommitter.describe(error))"])
        }
    }
}
