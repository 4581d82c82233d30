import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A bounded hand-off between two threads: `put` waits while `capacity` items wait, `take` waits
/// while none does. Used by the batch pipeline (reader → picker → writer).
final class Pipe<T>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [T] = []
    private var closed = false
    private let capacity: Int

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Hands `item` over, waiting for room; once the pipe is closed, drops it at once.
    func put(_ item: T) {
        condition.lock()
        while items.count >= capacity && !closed { condition.wait() }
        if closed {
            condition.unlock()
            return
        }
        items.append(item)
        condition.broadcast()
        condition.unlock()
    }

    /// Drops what waits and every later `put`: the taker has stopped, and a putter must not wait for it.
    func close() {
        condition.lock()
        closed = true
        items.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    func take() -> T {
        condition.lock()
        while items.isEmpty { condition.wait() }
        let item = items.removeFirst()
        condition.broadcast()
        condition.unlock()
        return item
    }
}

/// Runs `body` on a new thread named `name` (``nameThread(_:)``); `join()` waits for it to return.
final class BackgroundThread: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)

    init(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread { [done] in
            nameThread(name)
            body()
            done.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
    }

    func join() { done.wait() }
}

/// Names the calling thread as `top -H` and `perf` show it (Linux keeps 15 bytes). Foundation's
/// `Thread.name` does not name the thread on Linux, and Glibc's `pthread_setname_np` is not
/// imported into Swift; the kernel takes the name from this file too.
public func nameThread(_ name: String) {
    #if canImport(Glibc)
    let fd = open("/proc/thread-self/comm", O_WRONLY)
    guard fd >= 0 else { return }
    defer { close(fd) }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    #endif
}
