import SoundtrackContext
import SoundtrackEngine
import SoundtrackStore

extension FeedbackVerdict {
    /// The answer to an event, as the CLI and the HTTP service print it (docs/formats.md).
    ///
    /// Applied: `id`, `status` (`applied`), `bin`, `signal`, `joined_bin`, `dislike_streak`, and
    /// `switched_to` / `created_bin` when the event switched or created a bin. A duplicate: `id`
    /// and `status` (`duplicate`).
    public func json(eventId: String) -> JSONValue {
        guard case let .applied(row) = self else {
            return .object([("id", .string(eventId)), ("status", .string("duplicate"))])
        }
        let o = row.outcome
        var pairs: [(String, JSONValue)] = [
            ("id", .string(eventId)), ("status", .string("applied")), ("bin", .string("b-\(o.bin)")),
            ("signal", .string(o.signal.rawValue)), ("joined_bin", .bool(o.joinedBin)),
            ("dislike_streak", .number(Double(o.dislikeStreak)))
        ]
        if let s = o.switchedTo { pairs.append(("switched_to", .string("b-\(s)"))) }
        if let c = o.createdBin { pairs.append(("created_bin", .string("b-\(c)"))) }
        return .object(pairs)
    }

    /// The outcome of an applied event, `nil` for a duplicate.
    public var outcome: FeedbackOutcome? {
        if case let .applied(row) = self { return row.outcome }
        return nil
    }
}
