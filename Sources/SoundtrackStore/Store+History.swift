import Foundation
import GRDB
import SoundtrackContext

extension Store {
    /// One stored pick and what the person answered to it: a line of `soundtrack history` and
    /// of `GET /v1/users/{id}/history`.
    public struct HistoryEntry: Sendable, Equatable {
        /// One feedback event that named the pick (`pick_id`).
        public struct Answer: Sendable, Equatable {
            public var signal: String
            public var at: Date
            /// The stars of a `rate` event, else `nil`.
            public var rating: Int?

            /// An answer from its signal, time and stars.
            public init(signal: String, at: Date, rating: Int?) {
                self.signal = signal
                self.at = at
                self.rating = rating
            }
        }

        public var pickId: String
        /// The pick's place in the person's picks (0 first): the page cursor.
        public var seq: Int64
        public var at: Date
        public var binNumber: Int
        /// The bin's label now, or `nil` when the bin has been merged away or forgotten since.
        public var binLabel: String?
        public var track: String
        /// The track's title and artist, or `nil` for a track no longer in the catalog.
        public var title: String?
        public var artist: String?
        /// The feedback that named this pick, oldest first (empty when none came).
        public var feedback: [Answer]

        /// An entry from its columns (a store's reading of one pick and its answers).
        public init(
            pickId: String, seq: Int64, at: Date, binNumber: Int, binLabel: String?, track: String, title: String?, artist: String?,
            feedback: [Answer]
        ) {
            self.pickId = pickId
            self.seq = seq
            self.at = at
            self.binNumber = binNumber
            self.binLabel = binLabel
            self.track = track
            self.title = title
            self.artist = artist
            self.feedback = feedback
        }
    }

    /// The most a page of ``history(user:before:since:limit:)`` holds.
    public static let historyPageLimit = 500

    /// A person's stored picks, newest first, each with the feedback that named it.
    /// - Parameters:
    ///   - before: only picks whose ``HistoryEntry/seq`` is below this (the cursor of the next
    ///     page: the last entry's `seq`); `nil` from the newest.
    ///   - since: only picks made at or after this time.
    ///   - limit: at most this many entries, 1…``historyPageLimit``.
    /// - Throws: ``RuleError/unknownUser(_:)``; database errors.
    public func history(user: String, before: Int64? = nil, since: Date? = nil, limit: Int) throws -> [HistoryEntry] {
        precondition((1...Self.historyPageLimit).contains(limit), "limit 1...\(Self.historyPageLimit)")
        return try database.read { db in
            guard try Self.userExists(db, user) else { throw RuleError.unknownUser(user) }
            var entries = try Self.picks(db, user: user, before: before, since: since, limit: limit)
            let answers = try Self.answers(db, user: user, picks: entries.map(\.pickId))
            for i in entries.indices { entries[i].feedback = answers[entries[i].pickId] ?? [] }
            return entries
        }
    }

    private static func picks(_ db: Database, user: String, before: Int64?, since: Date?, limit: Int) throws -> [HistoryEntry] {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT p.id, p.seq, p.at, p.bin_number, b.label, p.track_id, s.title, s.artist
                FROM picks p
                LEFT JOIN bins b ON b.user_id = p.user_id AND b.number = p.bin_number
                LEFT JOIN songs s ON s.id = p.track_id
                WHERE p.user_id = ? AND p.seq < ? AND p.at >= ?
                ORDER BY p.seq DESC LIMIT ?
                """,
            arguments: [user, before ?? Int64.max, since?.timeIntervalSince1970 ?? -Double.greatestFiniteMagnitude, limit])
        return rows.map { r in
            HistoryEntry(
                pickId: r[0], seq: r[1], at: Date(timeIntervalSince1970: r[2]), binNumber: r[3], binLabel: r[4], track: r[5],
                title: r[6], artist: r[7], feedback: [])
        }
    }

    /// The feedback naming each of `picks`, by pick id, oldest first.
    private static func answers(_ db: Database, user: String, picks: [String]) throws -> [String: [HistoryEntry.Answer]] {
        guard !picks.isEmpty else { return [:] }
        let marks = Array(repeating: "?", count: picks.count).joined(separator: ", ")
        let rows = try Row.fetchAll(
            db,
            sql: "SELECT pick_id, signal, at, rating FROM feedback WHERE user_id = ? AND pick_id IN (\(marks)) ORDER BY at, rowid",
            arguments: StatementArguments([user] + picks))
        var out: [String: [HistoryEntry.Answer]] = [:]
        for r in rows {
            out[r[0], default: []].append(HistoryEntry.Answer(signal: r[1], at: Date(timeIntervalSince1970: r[2]), rating: r[3]))
        }
        return out
    }
}

extension Store.HistoryEntry {
    /// The entry as `soundtrack history --json` prints it and the history route answers it:
    /// `pick_id`, `at` (RFC 3339, UTC), `bin` (`number`, `label` or `null`), `track` (`id`,
    /// `title`, `artist`; `null` for a track gone from the catalog) and `feedback` (each
    /// `signal`, `at`, and `rating` for a `rate`).
    public var json: JSONValue {
        .object([
            ("pick_id", .string(pickId)), ("at", .string(Timestamp(date: at, offsetSeconds: 0).rfc3339)),
            ("bin", .object([("number", .number(Double(binNumber))), ("label", binLabel.map(JSONValue.string) ?? .null)])),
            ("track", .object([("id", .string(track)), ("title", title.map(JSONValue.string) ?? .null), ("artist", artist.map(JSONValue.string) ?? .null)])),
            ("feedback", .array(feedback.map(\.json)))
        ])
    }
}

extension Store.HistoryEntry.Answer {
    var json: JSONValue {
        var pairs: [(String, JSONValue)] = [("signal", .string(signal)), ("at", .string(Timestamp(date: at, offsetSeconds: 0).rfc3339))]
        if let rating { pairs.append(("rating", .number(Double(rating)))) }
        return .object(pairs)
    }
}
