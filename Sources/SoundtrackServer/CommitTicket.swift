import Synchronization

/// A promise that a queued write was committed (or failed): handlers await it before they
/// acknowledge, the committer fulfils it after the transaction holding the write commits.
final class CommitTicket: Sendable {
    private enum State {
        case pending([CheckedContinuation<Void, any Error>])
        case done((any Error)?)
    }

    private let state = Mutex<State>(.pending([]))

    /// Waits until the write is committed; throws its error if it failed.
    func wait() async throws {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            let result: (any Error)?? = state.withLock { s in
                switch s {
                case var .pending(waiters):
                    waiters.append(c)
                    s = .pending(waiters)
                    return .none
                case let .done(error):
                    return .some(error)
                }
            }
            if case let .some(error) = result {
                if let error { c.resume(throwing: error) } else { c.resume() }
            }
        }
    }

    /// Fulfils the ticket: success when `error` is nil.
    func complete(_ error: (any Error)?) {
        let waiters: [CheckedContinuation<Void, any Error>] = state.withLock { s in
            guard case let .pending(w) = s else { return [] }
            s = .done(error)
            return w
        }
        for w in waiters {
            if let error { w.resume(throwing: error) } else { w.resume() }
        }
    }
}
