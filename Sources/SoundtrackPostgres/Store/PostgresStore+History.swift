import Foundation
import PostgresNIO
import SoundtrackContext
import SoundtrackStore

extension PostgresStore: HistoryStore {
    /// A person's stored picks, newest first, each with the feedback that named it
    /// (``HistoryStore/history(user:before:since:limit:)``): the same pages as the SQLite store's,
    /// read in one snapshot.
    public func history(user: String, before: Int64? = nil, since: Date? = nil, limit: Int) throws -> [Store.HistoryEntry] {
        precondition((1...Store.historyPageLimit).contains(limit), "limit 1...\(Store.historyPageLimit)")
        return try transaction(locking: [], readOnly: true) { tx in
            guard try Self.userExists(tx, user) else { throw RuleError.unknownUser(user) }
            var entries = try Self.historyPicks(tx, user: user, before: before, since: since, limit: limit)
            let answers = try Self.answers(tx, user: user, picks: entries.map(\.pickId))
            for i in entries.indices { entries[i].feedback = answers[entries[i].pickId] ?? [] }
            return entries
        }
    }

    private static func historyPicks(_ tx: PostgresTransaction, user: String, before: Int64?, since: Date?, limit: Int) throws -> [Store.HistoryEntry] {
        let cursor = before ?? Int64.max, from = since?.timeIntervalSince1970 ?? -Double.greatestFiniteMagnitude
        let rows = try tx.query(
            """
            SELECT p.id, p.seq, p.at, p.bin_number, b.label, p.track_id, s.title, s.artist
            FROM picks p
            LEFT JOIN bins b ON b.user_id = p.user_id AND b.number = p.bin_number
            LEFT JOIN songs s ON s.id = p.track_id
            WHERE p.user_id = \(user) AND p.seq < \(cursor) AND p.at >= \(from)
            ORDER BY p.seq DESC LIMIT \(Int64(limit))
            """)
        return try rows.map { row in
            let (id, seq, at, bin, label, track, title, artist) = try row.decode((String, Int64, Double, Int64, String?, String, String?, String?).self)
            return Store.HistoryEntry(
                pickId: id, seq: seq, at: Date(timeIntervalSince1970: at), binNumber: Int(bin), binLabel: label, track: track,
                title: title, artist: artist, feedback: [])
        }
    }

    /// The feedback naming each of `picks`, by pick id, oldest first (ties in the log's order).
    private static func answers(_ tx: PostgresTransaction, user: String, picks: [String]) throws -> [String: [Store.HistoryEntry.Answer]] {
        guard !picks.isEmpty else { return [:] }
        let rows = try tx.query(
            "SELECT pick_id, signal, at, rating FROM feedback WHERE user_id = \(user) AND pick_id = ANY(\(picks)) ORDER BY at, rowid")
        var out: [String: [Store.HistoryEntry.Answer]] = [:]
        for row in rows {
            let (pick, signal, at, rating) = try row.decode((String, String, Double, Int64?).self)
            out[pick, default: []].append(Store.HistoryEntry.Answer(signal: signal, at: Date(timeIntervalSince1970: at), rating: rating.map(Int.init)))
        }
        return out
    }
}
