import Foundation
import GRDB
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import Synchronization

/// What the rules read inside one transaction of ``Store/readUser(_:defaults:_:)`` or
/// ``Store/updateUser(_:defaults:_:)``, besides the user's state: event ids, picks and the catalog,
/// all as that transaction sees them. Valid only inside its closure.
public struct TransactionReads {
    let db: Database
    let reads: CatalogReads

    /// The catalog: tracks read by id, the similarity index loaded on first need and kept by the
    /// store until the catalog changes.
    public var catalog: any CatalogSource { reads }

    /// The user a committed feedback event id belongs to, or `nil` when the id is new.
    public func feedbackOwner(eventId: String) throws -> String? {
        try Store.feedbackOwner(db, eventId: eventId)
    }

    /// A committed pick by id, of whatever user, or `nil`.
    public func pickRecord(id: String) throws -> PickRecord? {
        try Store.loadPick(db, id: id)
    }

    /// How many feedback events the database holds (``Store/feedbackLogSize()``).
    public func feedbackLogSize() throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT max(rowid) FROM feedback") ?? 0
    }
}

extension Store {
    /// Reads a user's state (`nil` for an unknown user) in one read transaction and runs `body` on it.
    /// - Throws: what `body` throws; database errors, including those of catalog reads the engine made.
    public func readUser<R>(
        _ user: String, defaults: [Float], _ body: (_ user: CachedUserState?, _ reads: TransactionReads) throws -> R
    ) throws -> R {
        try database.read { db in
            let reads = TransactionReads(db: db, reads: CatalogReads(db: db, index: catalogIndex))
            let result = try body(try Self.loadCachedState(db, user: user, defaults: defaults), reads)
            try reads.reads.check()
            return result
        }
    }

    /// Loads a user's state (`nil` for an unknown user) in one write transaction, runs `body` on it
    /// (the rules staging a pick or an event), and commits the writes `body` returns in the same
    /// transaction: all of it or nothing, and no other writer in between.
    /// - Throws: what `body` throws (nothing is written then); database errors, including those of
    ///   catalog reads the engine made.
    public func updateUser<R>(
        _ user: String, defaults: [Float],
        _ body: (_ user: inout CachedUserState?, _ reads: TransactionReads) throws -> (result: R, writes: [UserWrite])
    ) throws -> R {
        try database.write { db in
            let reads = TransactionReads(db: db, reads: CatalogReads(db: db, index: catalogIndex))
            var cached = try Self.loadCachedState(db, user: user, defaults: defaults)
            let (result, writes) = try body(&cached, reads)
            try reads.reads.check()
            try Self.commit(writes, db)
            return result
        }
    }
}

/// The catalog read inside one transaction, for the engine (whose catalog reads cannot throw): a
/// failed read answers as if nothing were found and is kept, and the transaction then throws it
/// (``check()``) instead of committing what the engine made of it.
final class CatalogReads: CatalogSource, @unchecked Sendable {
    private let db: Database
    private let indexCache: IndexCache
    private var failure: (any Error)?

    init(db: Database, index: IndexCache) {
        self.db = db
        self.indexCache = index
    }

    func tracks(ids: [String]) -> [String: Track] {
        do { return try Store.tracks(db, ids: ids) } catch {
            if failure == nil { failure = error }
            return [:]
        }
    }

    func index() -> CatalogIndex {
        do { return try indexCache.get { try Store.loadCatalogIndex(db) } } catch {
            if failure == nil { failure = error }
            return CatalogIndex(tracks: [])
        }
    }

    /// Throws the first failed read, if any.
    func check() throws {
        if let failure { throw failure }
    }
}

/// The similarity index of the catalog, loaded on first need and kept until the catalog changes.
final class IndexCache: Sendable {
    private let value = Mutex<CatalogIndex?>(nil)

    /// The index, loaded by `load` when there is none (a failed load keeps nothing).
    func get(_ load: () throws -> CatalogIndex) throws -> CatalogIndex {
        if let v = value.withLock({ $0 }) { return v }
        let loaded = try load()
        value.withLock { $0 = loaded }
        return loaded
    }

    /// Forgets the index (the catalog changed).
    func clear() { value.withLock { $0 = nil } }

    /// Keeps `index` as the catalog's index (the catalog changed and this is its new index).
    func set(_ index: CatalogIndex) { value.withLock { $0 = index } }
}
