import SoundtrackEngine

/// The states one commit of ``UserWrite``s writes: a person's successive states are held and
/// merged (``UserWrite/merge(_:then:)``) until the write where ``UserWrite/stateWritePoints(_:)``
/// says the merged state is written. Both stores' commits stage their states through it.
///
/// ```swift
/// var staging = StateStaging(writes)
/// for (i, w) in writes.enumerated() {
///     if let state = w.state, let due = staging.stage(state, at: i) { try save(due.state, due.deleteCovered) }
/// }
/// ```
public struct StateStaging {
    private let saveAt: [Bool]
    /// The merged states of people with more states to come, and whether any of them deletes the
    /// pending events it includes (all but checkpoints of the view).
    private var held: [String: (state: UserState, deleteCovered: Bool)] = [:]

    /// Staging for the states of `writes`.
    public init(_ writes: [UserWrite]) {
        saveAt = UserWrite.stateWritePoints(writes)
    }

    /// Stages the state that write `i` carries.
    /// - Parameter deleteCovered: whether writing it deletes the pending events it includes (false
    ///   for a checkpoint of the view).
    /// - Returns: the state to write now, merged with the person's held ones, and whether it
    ///   deletes the pending events it covers; `nil` when it is held for a later write.
    public mutating func stage(_ state: UserState, at i: Int, deleteCovered: Bool = true) -> (state: UserState, deleteCovered: Bool)? {
        var s = state
        var delete = deleteCovered
        if let earlier = held.removeValue(forKey: s.user) {
            s = UserWrite.merge(earlier.state, then: s)
            delete = delete || earlier.deleteCovered
        }
        guard saveAt[i] else {
            held[s.user] = (s, delete)
            return nil
        }
        return (s, delete)
    }
}
