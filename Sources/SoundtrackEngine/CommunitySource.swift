import Foundation
import Synchronization

/// Where the engine reads and records what all users taught it (``Community``): shared by every
/// user's picks and feedback in a process.
///
/// Feedback records each applied event; picks read the model. An engine without one ranks by
/// the user's own evidence and content alone (the collaborative and popularity signals are 0).
public protocol CommunitySource: Sendable {
    /// Runs `body` on the current model.
    func read<R>(_ body: (Community) -> R) -> R
    /// Records one event (see ``Community/record(user:row:like:dislike:attributes:)``).
    func record(user: String, row: Int, like: Bool, dislike: Bool, attributes: [UInt64])
}

/// A ``CommunitySource`` in memory, behind a readers–writer lock: the evaluators', the
/// service's and replay's. Picks read it at once (a user's collaborative scores read many rows);
/// an event waits for the reads under way, and they for it.
public final class SharedCommunity: CommunitySource, @unchecked Sendable {
    // The model is read and changed only under `lock`.
    private var model: Community
    private let lock = ReadWriteLock()
    private let stored: Atomic<Int64>

    /// A source over a model (empty by default).
    /// - Parameter seq: for a model loaded from a store, the feedback row up to which it counts
    ///   every row; -1 for a model of no store.
    public init(_ community: Community = Community(), seq: Int64 = -1) {
        model = community
        stored = Atomic(seq)
    }

    /// The feedback row up to which the stored model counts every row, as this process last read or
    /// wrote it (-1: a model of no store).
    public var seq: Int64 {
        get { stored.load(ordering: .acquiring) }
        set { stored.store(newValue, ordering: .releasing) }
    }

    public func read<R>(_ body: (Community) -> R) -> R {
        lock.reading { body(model) }
    }

    public func record(user: String, row: Int, like: Bool, dislike: Bool, attributes: [UInt64]) {
        lock.writing { model.record(user: user, row: row, like: like, dislike: dislike, attributes: attributes) }
    }

    /// A copy of the current model.
    public var snapshot: Community { lock.reading { model } }

    /// A copy of the model with what changed since it was last written, and the model marked as
    /// written, at once: events recorded afterwards are the next write's.
    public func takeChanges() -> Community {
        lock.writing {
            let copy = model
            model.markWritten()
            return copy
        }
    }

    /// Gives changes back that could not be written (``takeChanges()``), so that the next write has them.
    public func restore(_ changes: Community.Changes) {
        lock.writing { model.remark(changes) }
    }
}

/// A POSIX readers–writer lock: any number of readers at once, or one writer.
final class ReadWriteLock: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)

    init() {
        lock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    func reading<R>(_ body: () throws -> R) rethrows -> R {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    func writing<R>(_ body: () throws -> R) rethrows -> R {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
