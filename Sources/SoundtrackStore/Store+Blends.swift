import Foundation
import GRDB
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

/// A blend of the track ranker that a database learned (`ranker_blends`), with what judged it.
public struct StoredBlend: Sendable, Equatable {
    /// The blend; its ``RankerModel/version`` is the row's.
    public var model: RankerModel
    /// When it was fitted.
    public var createdAt: Date
    /// Feedback events in the database then (the log's size).
    public var events: Int64
    /// Queries fitted on, and held out to judge it.
    public var training: Int
    public var validation: Int
    /// NDCG@10 on the held-out queries, and that of the blend in use then (``comparedWith``: its
    /// version, 0 for the models' own).
    public var ndcg: Double
    public var comparedWith: Int
    public var comparedNDCG: Double
    /// Whether it was promoted when fitted.
    public var promoted: Bool
    /// Why it was or was not.
    public var reason: String

    /// A blend with what judged it, as a store reads it back.
    public init(
        model: RankerModel, createdAt: Date, events: Int64, training: Int, validation: Int, ndcg: Double, comparedWith: Int,
        comparedNDCG: Double, promoted: Bool, reason: String
    ) {
        self.model = model
        self.createdAt = createdAt
        self.events = events
        self.training = training
        self.validation = validation
        self.ndcg = ndcg
        self.comparedWith = comparedWith
        self.comparedNDCG = comparedNDCG
        self.promoted = promoted
        self.reason = reason
    }

    /// The blend an attempt records: `model` (the decision's candidate, numbered) with the
    /// decision's figures, compared with version `current`.
    public init(_ decision: BlendLearner.Decision, model: RankerModel, current: Int, events: Int64, at: Date) {
        self.init(
            model: model, createdAt: at, events: events, training: decision.training, validation: decision.validation,
            ndcg: decision.ndcg, comparedWith: current, comparedNDCG: decision.currentNDCG, promoted: decision.promoted,
            reason: decision.reason)
    }
}

extension Store {
    /// `store_settings` names of the blend's bookkeeping.
    enum BlendSetting {
        /// The version of the blend in use (absent or 0: the models' own).
        static let inUse = "ranker_blend"
        /// The newest `blend_examples.id` when a blend was last fitted (or found too few queries).
        static let lastAttempt = "ranker_blend_examples_seen"
    }

    static func insertExample(_ db: Database, _ example: BlendExample, seq: Int64) throws {
        try db.cachedStatement(sql: "INSERT INTO blend_examples (user_id, applied_seq, width, signals) VALUES (?, ?, ?, ?)")
            .execute(arguments: [example.user, seq, RankerModel.signals.count, VectorCoding.encode(example.signals)])
    }

    /// The newest `limit` queries of the blend, oldest first.
    public func blendExamples(newest limit: Int) throws -> [BlendExample] {
        try database.read { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT user_id, width, signals FROM blend_examples ORDER BY id DESC LIMIT ?", arguments: [limit])
            return try rows.reversed().map { r in
                let width: Int = r["width"], signals = VectorCoding.decode(r["signals"] as Data)
                guard width == RankerModel.signals.count else {
                    throw StoreError.corrupt(
                        table: "blend_examples", column: "width", row: 0, expected: "\(RankerModel.signals.count) signals a candidate")
                }
                return BlendExample(user: r["user_id"], signals: signals)
            }
        }
    }

    /// The id of the newest query of the blend (0 when there is none): grows by one a query.
    public func newestBlendExample() throws -> Int64 {
        try database.read { db in try Int64.fetchOne(db, sql: "SELECT max(id) FROM blend_examples") ?? 0 }
    }

    /// How many feedback events the database holds, as the rowid of the newest (an index lookup,
    /// not a count: a forgotten user's rows leave it as it was).
    public func feedbackLogSize() throws -> Int64 {
        try database.read { db in try Int64.fetchOne(db, sql: "SELECT max(rowid) FROM feedback") ?? 0 }
    }

    /// Keeps the newest `keep` queries of the blend, deleting the older ones.
    /// - Returns: how many were deleted.
    @discardableResult
    public func pruneBlendExamples(keep: Int) throws -> Int {
        try database.write { db in
            guard let cut = try Int64.fetchOne(db, sql: "SELECT id FROM blend_examples ORDER BY id DESC LIMIT 1 OFFSET ?", arguments: [keep]) else {
                return 0
            }
            try db.execute(sql: "DELETE FROM blend_examples WHERE id <= ?", arguments: [cut])
            return db.changesCount
        }
    }

    /// The newest query id when a blend was last fitted (0: never).
    public func lastBlendAttempt() throws -> Int64 {
        try database.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM store_settings WHERE name = ?", arguments: [BlendSetting.lastAttempt]).flatMap { Int64($0) } ?? 0
        }
    }

    /// Records an attempt to learn the blend: the queries seen, and the fitted blend (promoted or
    /// not) as the next version; a promoted one becomes the blend in use. One transaction.
    /// - Parameters:
    ///   - decision: what ``BlendLearner/learn(_:current:source:)`` found.
    ///   - seen: the newest query id the attempt read.
    ///   - current: the version of the blend in use it was compared with.
    ///   - events: the feedback log's size.
    /// - Returns: the stored blend (`nil` when the attempt fitted none).
    @discardableResult
    public func recordBlendAttempt(_ decision: BlendLearner.Decision, seen: Int64, current: Int, events: Int64, at: Date) throws -> StoredBlend? {
        try database.write { db in
            try Self.setSetting(db, BlendSetting.lastAttempt, String(seen))
            guard var model = decision.candidate else { return nil }
            let version = (try Int.fetchOne(db, sql: "SELECT max(version) FROM ranker_blends") ?? 0) + 1
            model.version = version
            let stored = StoredBlend(decision, model: model, current: current, events: events, at: at)
            try db.execute(
                sql: """
                    INSERT INTO ranker_blends (version, created_at, weights, source, events, training, validation, ndcg,
                        compared_with, compared_ndcg, promoted, reason)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    version, at.timeIntervalSince1970, Self.weightsJSON(model.weights), model.source, events, stored.training,
                    stored.validation, stored.ndcg, current, stored.comparedNDCG, stored.promoted, stored.reason
                ])
            if decision.promoted { try Self.setSetting(db, BlendSetting.inUse, String(version)) }
            return stored
        }
    }

    /// The blend the database uses (`nil`: the models' own).
    public func blendInUse() throws -> StoredBlend? {
        try database.read { db in
            guard let version = try Self.blendInUse(db), version > 0 else { return nil }
            return try Self.blend(db, version: version)
        }
    }

    /// Makes version `version` the blend in use (0: the models' own), whether or not it was promoted
    /// when fitted (`soundtrack models use`).
    /// - Throws: ``StoreError/noSuchBlend(_:)`` for a version the database does not hold.
    public func useBlend(version: Int) throws {
        try database.write { db in
            if version != 0, try Self.blend(db, version: version) == nil { throw StoreError.noSuchBlend(version) }
            try Self.setSetting(db, BlendSetting.inUse, String(version))
        }
    }

    /// Every blend the database fitted, oldest first, and the version in use (0: the models' own).
    public func blendHistory() throws -> (blends: [StoredBlend], inUse: Int) {
        try database.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM ranker_blends ORDER BY version")
            return (try rows.map(Self.blend), try Self.blendInUse(db) ?? 0)
        }
    }

    static func blendInUse(_ db: Database) throws -> Int? {
        try String.fetchOne(db, sql: "SELECT value FROM store_settings WHERE name = ?", arguments: [BlendSetting.inUse]).flatMap { Int($0) }
    }

    static func blend(_ db: Database, version: Int) throws -> StoredBlend? {
        try Row.fetchOne(db, sql: "SELECT * FROM ranker_blends WHERE version = ?", arguments: [version]).map(blend)
    }

    static func blend(_ r: Row) throws -> StoredBlend {
        let version: Int = r["version"]
        let weights = try decodeWeights(r["weights"], version: version)
        return StoredBlend(
            model: RankerModel(weights: weights, source: r["source"], version: version),
            createdAt: Date(timeIntervalSince1970: r["created_at"]), events: r["events"], training: r["training"],
            validation: r["validation"], ndcg: r["ndcg"], comparedWith: r["compared_with"], comparedNDCG: r["compared_ndcg"],
            promoted: r["promoted"], reason: r["reason"])
    }

    /// A blend's weights from the JSON text of `ranker_blends.weights`.
    /// - Throws: ``StoreError/corrupt(table:column:row:expected:)`` without a weight for every signal.
    static func decodeWeights(_ text: String, version: Int) throws -> [Float] {
        do {
            let json = try JSONObjectReader(JSONParser.parse(Data(text.utf8)), path: "")
            try json.rejectUnknown(RankerModel.signals)
            return try RankerModel.signals.map { Float(try json.number($0, in: -100...100)) }
        } catch {
            throw StoreError.corrupt(table: "ranker_blends", column: "weights", row: Int64(version), expected: "a weight for every signal: \(error)")
        }
    }

    static func weightsJSON(_ weights: [Float]) -> String {
        JSONValue.object(zip(RankerModel.signals, weights).map { ($0, .number(Double($1))) }).serialized()
    }

    static func setSetting(_ db: Database, _ name: String, _ value: String) throws {
        try db.execute(
            sql: "INSERT INTO store_settings (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
            arguments: [name, value])
    }
}

/// The SQLite store's blend methods keep ``BlendStore``'s semantics: one SQLite transaction each.
extension Store: BlendStore {}
