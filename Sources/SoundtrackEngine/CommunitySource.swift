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
    /// Records one event, by its id (see ``Community/record(user:row:like:dislike:attributes:)``).
    func record(event: String, user: String, row: Int, like: Bool, dislike: Bool, attributes: [UInt64])
    /// Moves on each time the model is replaced by another (``SharedCommunity/replace(with:forgotten:counted:)``),
    /// whose ``Community/version`` need not be ahead of the one before: what is derived from the
    /// model (a user's ranking cache) is derived again when it changed.
    var generation: UInt64 { get }
}

/// A ``CommunitySource`` in memory, behind a readers–writer lock: the evaluators', the
/// service's and replay's. Picks read it at once (a user's collaborative scores read many rows);
/// an event waits for the reads under way, and they for it.
///
/// A long-running process replaces its model by one counted again from its store after a forget
/// (``beginJournal()``, then ``replace(with:forgotten:counted:)``): the events recorded while the
/// new model was counted are kept aside and recorded into it when it was not counted from them.
public final class SharedCommunity: CommunitySource, @unchecked Sendable {
    // The model and the journal are read and changed only under `lock`.
    private var model: Community
    private var journal: [Recorded]?
    private let lock = ReadWriteLock()
    private let stored: Atomic<Int64>
    private let forgottenCount: Atomic<Int64>
    private let replacements = Atomic<UInt64>(0)

    /// An event as ``record(event:user:row:like:dislike:attributes:)`` got it.
    private struct Recorded {
        var event: String
        var user: String
        var row: Int
        var like: Bool
        var dislike: Bool
        var attributes: [UInt64]
    }

    /// A source over a model (empty by default).
    /// - Parameters:
    ///   - seq: for a model loaded from a store, the feedback row up to which it counts every row;
    ///     -1 for a model of no store.
    ///   - forgotten: for a model loaded from a store, how many people the store had forgotten when
    ///     the model was counted (see ``forgotten``).
    public init(_ community: Community = Community(), seq: Int64 = -1, forgotten: Int64 = 0) {
        model = community
        stored = Atomic(seq)
        forgottenCount = Atomic(forgotten)
    }

    /// The feedback row up to which the stored model counts every row, as this process last read or
    /// wrote it (-1: a model of no store, or one counted again after a forget, which is not written).
    public var seq: Int64 {
        get { stored.load(ordering: .acquiring) }
        set { stored.store(newValue, ordering: .releasing) }
    }

    /// How many people the store had forgotten when the model was counted: a process whose store
    /// has forgotten more since counts its model again (``replace(with:forgotten:counted:)``).
    public var forgotten: Int64 { forgottenCount.load(ordering: .acquiring) }

    public var generation: UInt64 { replacements.load(ordering: .acquiring) }

    public func read<R>(_ body: (Community) -> R) -> R {
        lock.reading { body(model) }
    }

    public func record(event: String, user: String, row: Int, like: Bool, dislike: Bool, attributes: [UInt64]) {
        lock.writing {
            model.record(user: user, row: row, like: like, dislike: dislike, attributes: attributes)
            journal?.append(Recorded(event: event, user: user, row: row, like: like, dislike: dislike, attributes: attributes))
        }
    }

    /// Starts keeping aside every event recorded from now on, for ``replace(with:forgotten:counted:)``
    /// (or until ``endJournal()``).
    public func beginJournal() {
        lock.writing { journal = journal ?? [] }
    }

    /// Stops keeping events aside (a replacement given up).
    public func endJournal() {
        lock.writing { journal = nil }
    }

    /// Replaces the model by `rebuilt`, a model counted again from the store, after recording into
    /// it every event kept aside since ``beginJournal()`` that it was not counted from, in the order
    /// they came; ends the journal and moves ``generation`` on. Reads wait only for those events to
    /// be recorded, not for the old model to be freed.
    /// - Parameters:
    ///   - rebuilt: the model counted again (it is never written: ``seq`` becomes -1); handed over
    ///     (`consume` it), else recording the events kept aside copies it.
    ///   - forgotten: how many people the store had forgotten when it was counted.
    ///   - counted: whether `rebuilt` counts an event, by id.
    public func replace(with rebuilt: consuming Community, forgotten: Int64, counted: (String) -> Bool) {
        var next = consume rebuilt
        lock.writing {
            for r in journal ?? [] where !counted(r.event) {
                next.record(user: r.user, row: r.row, like: r.like, dislike: r.dislike, attributes: r.attributes)
            }
            swap(&model, &next)
            journal = nil
            stored.store(-1, ordering: .releasing)
            forgottenCount.store(forgotten, ordering: .releasing)
            replacements.add(1, ordering: .releasing)
        }
        // `next`, the old model, is freed here, outside the lock.
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
