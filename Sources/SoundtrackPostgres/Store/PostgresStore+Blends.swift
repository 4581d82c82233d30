import Foundation
import PostgresNIO
import SoundtrackCatalog
import SoundtrackEngine
import SoundtrackStore

/// The learned blend on PostgreSQL (``BlendStore``): the queries in `blend_examples` (a person's
/// table, written with their feedback rows; their `id` a sequence), the blends in `ranker_blends`
/// and the bookkeeping in `store_settings` (reference tables), the SQLite store's forms in each.
extension PostgresStore: BlendStore {
    /// The newest `limit` queries of the blend, oldest first.
    public func blendExamples(newest limit: Int) throws -> [BlendExample] {
        try transaction(locking: [], readOnly: true) { tx in
            let rows = try tx.query("SELECT user_id, width, signals FROM blend_examples ORDER BY id DESC LIMIT \(Int64(max(0, limit)))")
            return try rows.reversed().map { row in
                let (user, width, signals) = try row.decode((String, Int, ByteBuffer).self)
                guard width == RankerModel.signals.count else {
                    throw StoreError.corrupt(
                        table: "blend_examples", column: "width", row: 0, expected: "\(RankerModel.signals.count) signals a candidate")
                }
                return BlendExample(user: user, signals: StoredForm.floats(Array(signals.readableBytesView)))
            }
        }
    }

    /// The id of the newest query of the blend (0 when there is none).
    public func newestBlendExample() throws -> Int64 {
        try transaction(locking: [], readOnly: true) { tx in try tx.query("SELECT max(id) FROM blend_examples").first?.decode(Int64?.self) ?? 0 }
    }

    /// Keeps the newest `keep` queries of the blend, deleting the older ones.
    @discardableResult
    public func pruneBlendExamples(keep: Int) throws -> Int {
        try transaction(locking: []) { tx in
            guard
                let cut = try tx.query("SELECT id FROM blend_examples ORDER BY id DESC LIMIT 1 OFFSET \(Int64(max(0, keep)))").first?.decode(Int64.self)
            else { return 0 }
            return try tx.execute("DELETE FROM blend_examples WHERE id <= \(cut)")
        }
    }

    /// The newest query id when a blend was last fitted (0: never).
    public func lastBlendAttempt() throws -> Int64 {
        try transaction(locking: [], readOnly: true) { tx in
            try Self.setting(tx, StoredForm.blendSettings.lastAttempt).flatMap { Int64($0) } ?? 0
        }
    }

    /// Records an attempt to learn the blend (``BlendStore/recordBlendAttempt(_:seen:current:events:at:)``),
    /// holding the lock that keeps out every other writer of `ranker_blends`, so that two
    /// processes number their blends one after the other.
    @discardableResult
    public func recordBlendAttempt(_ decision: BlendLearner.Decision, seen: Int64, current: Int, events: Int64, at: Date) throws -> StoredBlend? {
        try transaction(locking: []) { tx in
            try tx.execute("LOCK TABLE ranker_blends IN SHARE ROW EXCLUSIVE MODE")
            try Self.setSetting(tx, StoredForm.blendSettings.lastAttempt, String(seen))
            guard var model = decision.candidate else { return nil }
            let version = (try tx.query("SELECT max(version) FROM ranker_blends").first?.decode(Int?.self) ?? 0) + 1
            model.version = version
            let stored = StoredBlend(decision, model: model, current: current, events: events, at: at)
            try Self.insertBlend(tx, stored)
            if decision.promoted { try Self.setSetting(tx, StoredForm.blendSettings.inUse, String(version)) }
            return stored
        }
    }

    /// The blend in use (`nil`: the models' own).
    public func blendInUse() throws -> StoredBlend? {
        try transaction(locking: [], readOnly: true) { tx in
            guard let version = try Self.blendInUse(tx), version > 0 else { return nil }
            return try Self.blend(tx, version: version)
        }
    }

    /// Makes version `version` the blend in use (0: the models' own).
    /// - Throws: ``StoreError/noSuchBlend(_:)`` for a version the store does not hold.
    public func useBlend(version: Int) throws {
        try transaction(locking: []) { tx in
            if version != 0, try Self.blend(tx, version: version) == nil { throw StoreError.noSuchBlend(version) }
            try Self.setSetting(tx, StoredForm.blendSettings.inUse, String(version))
        }
    }

    /// Every blend fitted, oldest first, and the version in use (0: the models' own).
    public func blendHistory() throws -> (blends: [StoredBlend], inUse: Int) {
        try transaction(locking: [], readOnly: true) { tx in
            let blends = try tx.query("SELECT \(unescaped: Self.blendColumns) FROM ranker_blends ORDER BY version").map(Self.blend)
            return (blends, try Self.blendInUse(tx) ?? 0)
        }
    }
}
