import Foundation
import SoundtrackContext
import SoundtrackEngine

/// The SQLite store's methods already keep ``PersonStore``'s semantics: one SQLite transaction
/// each, one writer at a time (the pool's writer, and SQLite's lock across processes).
extension Store: PersonStore {
    /// ``updateUser(_:defaults:_:)`` with the rules' lookups as ``PersonReads``: `body` runs once,
    /// in the one write transaction SQLite allows at a time.
    public func updatePerson<R>(
        _ user: String, defaults: [Float],
        _ body: (_ user: inout CachedUserState?, _ reads: any PersonReads) throws -> (result: R, writes: [UserWrite])
    ) throws -> R {
        try updateUser(user, defaults: defaults) { cached, reads in try body(&cached, reads) }
    }
}

extension TransactionReads: PersonReads {}
