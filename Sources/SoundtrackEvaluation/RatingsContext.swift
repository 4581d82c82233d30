import Foundation
import SoundtrackCatalog
import SoundtrackContext

/// How the context columns of a contextual-ratings data set become a snapshot, the way an app
/// would send a context it knows only by name (docs/evaluation.md, "Contextual ratings"): every
/// column is a tag named after it (lower-cased), its value the tag's value (lower-cased, spaces as
/// `_`); `NA` leaves the tag out. The data sets give no times, so a user's events are one week
/// apart, all on a Wednesday at noon (UTC): the time carries no signal, and the events of each user
/// are in time order, as `replay` requires.
///
/// ```swift
/// let mapping = RatingsContext(columns: ["Time", "Location", "Companion"])
/// let s = mapping.snapshot(["Weekend", "Home", nil], user: "1001", ordinal: 3)
/// s.tags   // ["time": "weekend", "location": "home"]
/// ```
public struct RatingsContext: Sendable {
    /// The tag key of each column.
    let keys: [String]

    /// The mapping of a data set's context columns.
    public init(columns: [String]) {
        keys = columns.map { $0.lowercased() }
    }

    /// The first event's time: Wednesday 3 January 2024, 12:00 UTC.
    static let start = Date(timeIntervalSince1970: 1_704_283_200)

    /// The snapshot of a row's context for a user.
    /// - Parameters:
    ///   - values: the row's context values (`nil` = NA), one per column.
    ///   - user: the user.
    ///   - ordinal: the event's place among the user's (0 for the first): its time is `ordinal` weeks
    ///     after ``start``.
    public func snapshot(_ values: [String?], user: String, ordinal: Int) -> Snapshot {
        var tags: [String: String] = [:]
        for (key, raw) in zip(keys, values) {
            guard let raw, !raw.isEmpty else { continue }
            tags[key] = raw.lowercased().replacingOccurrences(of: " ", with: "_")
        }
        let at = Self.start.addingTimeInterval(Double(ordinal) * 7 * 86_400)
        return Snapshot(user: user, at: Timestamp(date: at, offsetSeconds: 0), tags: tags.isEmpty ? nil : tags)
    }
}
