import Foundation
import SoundtrackCatalog
import SoundtrackContext

/// A labelled feedback log: JSON Lines of feedback events, each with its embedded snapshot, in time
/// order per user (docs/evaluation.md). The input of `soundtrack eval`.
///
/// ```swift
/// let log = try LabelledLog.parse(data, catalog: index)
/// log.events.count
/// ```
public struct LabelledLog: Sendable {
    /// One event and the line it came from.
    public struct Entry: Sendable {
        /// The 1-based line number in the file.
        public var line: Int
        /// The event (its `snapshot` is present).
        public var event: FeedbackEvent
        /// The event's context.
        public var snapshot: Snapshot { event.snapshot! }
    }

    /// The events in file order.
    public var entries: [Entry]

    /// Creates a log from entries already checked.
    public init(entries: [Entry]) { self.entries = entries }

    /// The distinct users, sorted.
    public var users: [String] { Set(entries.map(\.event.user)).sorted() }

    /// Parses and checks a log.
    ///
    /// Every non-blank line must be a valid feedback event with an embedded `snapshot`, with an id
    /// not used before, a track of the catalog (when one is given), and a time not before the
    /// previous event of the same user.
    /// - Parameters:
    ///   - data: the file's bytes.
    ///   - catalog: the catalog the tracks must belong to (`nil`: not checked).
    ///   - strict: whether unknown fields are errors.
    /// - Throws: ``InputError`` with the line number and field of the first bad line.
    public static func parse(_ data: Data, catalog: CatalogIndex? = nil, strict: Bool = false) throws(InputError) -> LabelledLog {
        var entries: [Entry] = []
        var lastAt: [String: (Timestamp, Int)] = [:]
        var seen: [String: Int] = [:]
        try JSONLinesRecords.forEach(data) { line, rec throws(InputError) in
            let e = try FeedbackEvent.decode(bytes: rec, strict: strict)
            guard e.snapshot != nil else {
                throw InputError(path: "snapshot", expected: "an embedded snapshot (eval replays events without the picks they answer)", got: "nothing")
            }
            if let first = seen[e.id] {
                throw InputError(path: "id", expected: "an event id not used before (line \(first) has it)", got: "'\(e.id)'")
            }
            if let catalog, catalog.row(of: e.track) == nil {
                throw InputError(.unknownTrack(e.track, field: "track"))
            }
            if let (prev, prevLine) = lastAt[e.user], e.at.date < prev.date {
                throw InputError(
                    path: "at",
                    expected: "a time not before \(prev.rfc3339), the previous event of user \(e.user) on line \(prevLine) (a log is in time order per user)",
                    got: e.at.rfc3339)
            }
            seen[e.id] = line
            lastAt[e.user] = (e.at, line)
            entries.append(Entry(line: line, event: e))
        }
        return LabelledLog(entries: entries)
    }
}
