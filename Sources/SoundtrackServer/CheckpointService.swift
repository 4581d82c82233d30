import Dispatch
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import CSupport
import SoundtrackStore

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
    private let interval: Duration
    private let restartFrames: Int
    private let metrics: ServerMetrics
    private let logger: Logger
    private let stopped = Mutex(false)
    private let wake = DispatchSemaphore(value: 0)
    private let nice: Int32

    init(checkpointer: WALCheckpointer, interval: Duration, restartFrames: Int, nice: Int32 = 0, metrics: ServerMetrics, logger: Logger) {
        self.checkpointer = checkpointer
        self.nice = nice
        self.metrics = metrics
        self.interval = interval
        self.restartFrames = restartFrames
        self.logger = logger
    }

    func run() async throws {
        await runOnThread(named: "st-checkpoint", nice: nice, loop, stop: stop)
    }

    private func stop() {
        stopped.withLock { $0 = true }
        wake.signal()
    }

    private func loop() {
        while !stopped.withLock({ $0 }) {
            _ = wake.wait(timeout: .now() + .nanoseconds(interval.nanoseconds))
            checkpoint()
        }
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

extension Duration {
    /// The duration in whole nanoseconds (negative durations as 0), for `DispatchTime`.
    var nanoseconds: Int {
        max(0, Int(components.seconds) * 1_000_000_000 + Int(components.attoseconds / 1_000_000_000))
    }
}

/// Runs `body` on a thread of its own (named `name`, at `nice` above the process's priority) and
/// returns when it does; a graceful shutdown or the task's cancellation calls `stop`, which must
/// make `body` return. For the service's long-running loops (the committer, the checkpoints), which
/// block and so stay off the cooperative pool.
func runOnThread(
    named name: String, nice: Int32 = 0, _ body: @escaping @Sendable () -> Void, stop: @escaping @Sendable () -> Void
) async {
    await withTaskCancellationHandler {
        await withGracefulShutdownHandler {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let thread = Thread {
                    _ = soundtrack_name_thread(name)
                    lowerThreadPriority(by: nice)
                    body()
                    done.resume()
                }
                thread.start()
            }
        } onGracefulShutdown: {
            stop()
        }
    } onCancel: {
        stop()
    }
}

/// Raises the calling thread's nice value by `nice`. On Linux the nice value belongs to each
/// thread, and `who` 0 names the calling thread (setpriority(2), "Bugs"); raising it needs no
/// privilege. Does nothing for 0 or on other systems.
func lowerThreadPriority(by nice: Int32) {
    #if os(Linux)
    guard nice > 0, let current = threadNice() else { return }
    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, min(19, current + nice))
    #endif
}

#if os(Linux)
/// The calling thread's nice value, or `nil` if it cannot be read.
func threadNice() -> Int32? {
    errno = 0
    let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    return errno == 0 ? nice : nil
}
#endif
