import CSupport
import Dispatch
import Foundation
import ServiceLifecycle
import Synchronization

/// A service's periodic work on a thread of its own (the checkpoints of the WAL and of the states,
/// the blend's refits): a round every `interval`, or at once when woken, until a graceful shutdown
/// or the task's cancellation stops it.
///
/// ```swift
/// let thread = PeriodicThread(named: "st-views", every: .seconds(1))
/// await thread.run { checkpoint() }   // returns once stopped
/// ```
final class PeriodicThread: Sendable {
    private let name: String
    private let nice: Int32
    private let interval: Duration
    private let roundAfterStop: Bool
    private let stopped = Mutex(false)
    private let wake = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - nice: how far below the process's priority the thread runs (0: the same).
    ///   - roundAfterStop: run one more round once stopped (a last checkpoint), instead of none.
    init(named name: String, nice: Int32 = 0, every interval: Duration, roundAfterStop: Bool = false) {
        self.name = name
        self.nice = nice
        self.interval = interval
        self.roundAfterStop = roundAfterStop
    }

    /// Whether the thread has been told to stop (a round in progress may look, to cut itself short).
    var isStopped: Bool { stopped.withLock { $0 } }

    /// Starts the next round now instead of at the end of the interval.
    func wakeUp() { wake.signal() }

    /// Runs `round` every interval on the thread; returns once stopped.
    func run(_ round: @escaping @Sendable () -> Void) async {
        await runOnThread(named: name, nice: nice, { [self] in loop(round) }, stop: { [self] in stop() })
    }

    private func stop() {
        stopped.withLock { $0 = true }
        wake.signal()
    }

    private func loop(_ round: () -> Void) {
        while true {
            _ = wake.wait(timeout: .now() + .nanoseconds(interval.nanoseconds))
            if isStopped {
                if roundAfterStop { round() }
                return
            }
            round()
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
