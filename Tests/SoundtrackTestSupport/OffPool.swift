import Foundation

/// Runs `body` on a thread of its own, off Swift's cooperative pool: for blocking steps (waiting
/// for a child process, a poll of seconds) which on the pool would hold up the tests running beside
/// this one. The pool has as many threads as the machine has cores, two on the CI machine: two
/// tests blocked there stop every other test of the process, and their clocks with them.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (c: CheckedContinuation<T, Never>) in
        Thread { c.resume(returning: body()) }.start()
    }
}

/// A task executor with a thread of its own, for async work whose timing a test measures (a
/// client's timeout): under `withTaskExecutorPreference(ThreadExecutor.shared)` its steps run here,
/// not on the cooperative pool that blocked tests can hold up for seconds.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    /// The one instance the tests share (its thread lives as long as the test process).
    public static let shared = ThreadExecutor()

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    private init() {
        let thread = Thread { [self] in runJobs() }
        thread.name = "ThreadExecutor"
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func runJobs() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
