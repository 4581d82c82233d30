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

/// A ``CommunitySource`` in memory, behind a lock: the evaluators', the service's and replay's.
public final class SharedCommunity: CommunitySource {
    private let model: Mutex<Community>

    /// A source over a model (empty by default).
    public init(_ community: Community = Community()) {
        model = Mutex(community)
    }

    public func read<R>(_ body: (Community) -> R) -> R {
        model.withLock { body($0) }
    }

    public func record(user: String, row: Int, like: Bool, dislike: Bool, attributes: [UInt64]) {
        model.withLock { $0.record(user: user, row: row, like: like, dislike: dislike, attributes: attributes) }
    }

    /// A copy of the current model.
    public var snapshot: Community { model.withLock { $0 } }
}
