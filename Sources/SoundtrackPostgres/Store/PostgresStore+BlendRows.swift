import Foundation
import PostgresNIO
import SoundtrackCatalog
import SoundtrackStore

/// The rows of `ranker_blends` and the settings of `store_settings`, as the SQLite store writes them.
extension PostgresStore {
    /// The columns of `ranker_blends` in the order ``blend(_:)`` reads them.
    static let blendColumns =
        "version, created_at, weights::text, source, events, training, validation, ndcg, compared_with, compared_ndcg, promoted, reason"

    static func insertBlend(_ tx: PostgresTransaction, _ b: StoredBlend) throws {
        try tx.execute(
            """
            INSERT INTO ranker_blends (version, created_at, weights, source, events, training, validation, ndcg,
                compared_with, compared_ndcg, promoted, reason)
            VALUES (\(Int64(b.model.version)), \(b.createdAt.timeIntervalSince1970), \(StoredForm.blendWeights(b.model.weights))::json,
                \(b.model.source), \(b.events), \(Int64(b.training)), \(Int64(b.validation)), \(b.ndcg), \(Int64(b.comparedWith)),
                \(b.comparedNDCG), \(Int64(b.promoted ? 1 : 0)), \(b.reason))
            """)
    }

    static func blend(_ tx: PostgresTransaction, version: Int) throws -> StoredBlend? {
        try tx.query("SELECT \(unescaped: blendColumns) FROM ranker_blends WHERE version = \(Int64(version))").first.map(blend)
    }

    /// A blend from a row of ``blendColumns``.
    /// - Throws: ``StoreError/corrupt(table:column:row:expected:)`` for weights that do not read.
    static func blend(_ row: PostgresRow) throws -> StoredBlend {
        let r = row.makeRandomAccess()
        let version = try r[0].decode(Int.self)
        return StoredBlend(
            model: RankerModel(
                weights: try StoredForm.blendWeights(try r[2].decode(String.self), version: version), source: try r[3].decode(String.self),
                version: version),
            createdAt: Date(timeIntervalSince1970: try r[1].decode(Double.self)), events: try r[4].decode(Int64.self),
            training: try r[5].decode(Int.self), validation: try r[6].decode(Int.self), ndcg: try r[7].decode(Double.self),
            comparedWith: try r[8].decode(Int.self), comparedNDCG: try r[9].decode(Double.self), promoted: try r[10].decode(Int.self) != 0,
            reason: try r[11].decode(String.self))
    }

    static func blendInUse(_ tx: PostgresTransaction) throws -> Int? {
        try setting(tx, StoredForm.blendSettings.inUse).flatMap { Int($0) }
    }

    static func setting(_ tx: PostgresTransaction, _ name: String) throws -> String? {
        try tx.query("SELECT value FROM store_settings WHERE name = \(name)").first?.decode(String.self)
    }

    static func setSetting(_ tx: PostgresTransaction, _ name: String, _ value: String) throws {
        try tx.execute(
            "INSERT INTO store_settings (name, value) VALUES (\(name), \(value)) ON CONFLICT (name) DO UPDATE SET value = excluded.value")
    }
}
