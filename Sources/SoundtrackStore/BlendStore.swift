import Foundation
import SoundtrackCatalog
import SoundtrackEngine

/// The learned blend of the track ranker in a store: the queries liked events taught it
/// (`blend_examples`, written with their feedback rows by ``PersonStore/commit(_:)``), every blend
/// fitted (`ranker_blends`) and which one is in use (`store_settings`). A sibling of
/// ``PersonStore``; the SQLite ``Store`` and the PostgreSQL store conform, checked by one suite.
///
/// ```swift
/// let examples = try store.blendExamples(newest: 20_000)
/// let decision = BlendLearner().learn(examples, current: ranker)
/// try store.recordBlendAttempt(decision, seen: seen, current: ranker.version, events: events, at: Date())
/// ```
///
/// Every method is one transaction, synchronous.
public protocol BlendStore: AnyObject, Sendable {
    /// The newest `limit` queries of the blend, oldest first.
    /// - Throws: ``StoreError/corrupt(table:column:row:expected:)`` for a query of another width.
    func blendExamples(newest limit: Int) throws -> [BlendExample]

    /// The id of the newest query of the blend (0 when there is none).
    func newestBlendExample() throws -> Int64

    /// Keeps the newest `keep` queries of the blend, deleting the older ones.
    /// - Returns: how many were deleted.
    @discardableResult
    func pruneBlendExamples(keep: Int) throws -> Int

    /// The newest query id when a blend was last fitted (0: never).
    func lastBlendAttempt() throws -> Int64

    /// Records an attempt to learn the blend, in one transaction: the queries seen, and the fitted
    /// blend (promoted or not) as the next version; a promoted one becomes the blend in use.
    /// - Parameters:
    ///   - decision: what ``BlendLearner/learn(_:current:source:)`` found.
    ///   - seen: the newest query id the attempt read.
    ///   - current: the version of the blend in use it was compared with.
    ///   - events: the feedback log's size.
    /// - Returns: the stored blend (`nil` when the attempt fitted none).
    @discardableResult
    func recordBlendAttempt(_ decision: BlendLearner.Decision, seen: Int64, current: Int, events: Int64, at: Date) throws -> StoredBlend?

    /// The blend in use (`nil`: the models' own).
    func blendInUse() throws -> StoredBlend?

    /// Makes version `version` the blend in use (0: the models' own), promoted when fitted or not.
    /// - Throws: ``StoreError/noSuchBlend(_:)`` for a version the store does not hold.
    func useBlend(version: Int) throws

    /// Every blend fitted, oldest first, and the version in use (0: the models' own).
    func blendHistory() throws -> (blends: [StoredBlend], inUse: Int)
}
