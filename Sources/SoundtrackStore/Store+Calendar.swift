import Foundation
import GRDB
import SoundtrackContext

/// One calendar event occurrence to store: times and category always; the title only when the user's
/// `keep_raw_snapshots` setting is on (the store drops it otherwise).
public struct StoredCalendarEvent: Sendable, Equatable {
    /// The source's id of the event (an ICS `UID`, a Google event id); stored only as a hash.
    public var sourceID: String
    /// When the occurrence starts (its offset is kept).
    public var start: Timestamp
    /// When it ends.
    public var end: Timestamp
    /// Whether it is an all-day event.
    public var allDay: Bool
    /// The category (from ``CalendarClassifier`` when the source has none).
    public var category: EventCategory
    /// The title (sensitive: stored only if the user allows raw data).
    public var title: String?

    /// Creates an event.
    public init(sourceID: String, start: Timestamp, end: Timestamp, allDay: Bool, category: EventCategory, title: String?) {
        self.sourceID = sourceID
        self.start = start
        self.end = end
        self.allDay = allDay
        self.category = category
        self.title = title
    }
}

extension Store {
    /// Where imported calendar events come from.
    public enum CalendarSource: String, Sendable { case ics, google }

    /// Replaces a user's events of one source within `[from, to)` by `events`, in one transaction:
    /// importing the same file twice leaves the same rows, and an event removed from the calendar
    /// disappears. Titles are dropped unless the user's `keep_raw_snapshots` setting is on; with
    /// `calendar_titles` off, titles are dropped and every event is stored as `other` (its category
    /// was read from its title).
    ///
    /// - Returns: how many occurrences were stored.
    /// - Throws: ``RuleError/unknownUser(_:)`` for an unknown user.
    @discardableResult
    public func replaceCalendarEvents(user: String, source: CalendarSource, from: Date, to: Date, events: [StoredCalendarEvent], at: Date) throws -> Int {
        try database.write { db in
            guard try Self.userExists(db, user) else { throw RuleError.unknownUser(user) }
            let settings = try Self.settings(db, user: user)
            let keep = settings.keepRawSnapshots && settings.calendarTitles
            try db.execute(
                sql: "DELETE FROM calendar_events WHERE user_id = ? AND source = ? AND end_at > ? AND start_at < ?",
                arguments: [user, source.rawValue, from.timeIntervalSince1970, to.timeIntervalSince1970])
            let stmt = try db.cachedStatement(
                sql: """
                    INSERT INTO calendar_events (user_id, source, event_key, start_at, end_at, offset_s, all_day, category, title, imported_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(user_id, source, event_key) DO UPDATE SET start_at = excluded.start_at, end_at = excluded.end_at,
                        offset_s = excluded.offset_s, all_day = excluded.all_day, category = excluded.category, title = excluded.title,
                        imported_at = excluded.imported_at
                    """)
            for e in events {
                let key = Hashing.sha256Hex("\(e.sourceID)\u{1F}\(e.start.date.timeIntervalSince1970)")
                try stmt.execute(arguments: [
                    user, source.rawValue, key, e.start.date.timeIntervalSince1970, max(e.end.date, e.start.date).timeIntervalSince1970,
                    e.start.offsetSeconds, e.allDay, settings.calendarTitles ? e.category.rawValue : "other",
                    keep ? e.title.map { String($0.prefix(1024)) } : nil,
                    at.timeIntervalSince1970
                ])
            }
            return events.count
        }
    }

    /// A user's stored events overlapping `[from, to)`, in start order, as snapshot calendar events
    /// (times in each event's own offset; the title only where it was kept).
    public func calendarEvents(user: String, from: Date, to: Date, limit: Int = Snapshot.maxEvents) throws -> [CalendarEvent] {
        try database.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT start_at, end_at, offset_s, all_day, category, title FROM calendar_events
                    WHERE user_id = ? AND start_at < ? AND end_at > ? ORDER BY start_at, event_key LIMIT ?
                    """, arguments: [user, to.timeIntervalSince1970, from.timeIntervalSince1970, limit])
            return rows.map { r in
                let offset: Int = r[2]
                let category: String = r[4]
                return CalendarEvent(
                    title: r[5], start: Timestamp(date: Date(timeIntervalSince1970: r[0]), offsetSeconds: offset),
                    end: Timestamp(date: Date(timeIntervalSince1970: r[1]), offsetSeconds: offset), allDay: r[3],
                    category: EventCategory(rawValue: category) ?? .other)
            }
        }
    }

    /// How many calendar events a user has stored.
    func calendarEventCount(user: String) throws -> Int {
        try database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM calendar_events WHERE user_id = ?", arguments: [user]) ?? 0 }
    }
}
