import CSupport
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

/// Runs `body` on a new thread named `name`; `join()` waits for it to return.
final class BackgroundThread: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)

    init(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread { [done] in
            _ = soundtrack_name_thread(name)
            body()
            done.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
    }

    func join() { done.wait() }
}
