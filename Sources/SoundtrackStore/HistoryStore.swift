import Foundation

/// A person's listening history in a store: their stored picks, newest first, each with the
/// feedback that named it (`soundtrack history`, `GET /v1/users/{id}/history`). The SQLite
/// ``Store`` conforms; so does the PostgreSQL store (`SoundtrackPostgres.PostgresStore`), and one
/// conformance suite checks that both give the same pages for the same picks and events.
///
/// ```swift
/// let page = try store.history(user: "u-1", limit: 50)
/// let next = try store.history(user: "u-1", before: page.last?.seq, limit: 50)
/// ```
public protocol HistoryStore: AnyObject, Sendable {
    /// A person's stored picks, newest first (by ``Store/HistoryEntry/seq``), each with the
    /// feedback whose `pick_id` names it, oldest first (by time, then by the log's order); the
    /// bin's label as it is now (`nil` for a bin merged away), the track's title and artist from
    /// the catalog (`nil` for a track no longer in it).
    /// - Parameters:
    ///   - before: only picks whose `seq` is below this (the next page's cursor); `nil` from the newest.
    ///   - since: only picks made at or after this time.
    ///   - limit: at most this many entries, 1…``Store/historyPageLimit``.
    /// - Throws: `RuleError.unknownUser`; the store's errors.
    func history(user: String, before: Int64?, since: Date?, limit: Int) throws -> [Store.HistoryEntry]
}

extension Store: HistoryStore {}
