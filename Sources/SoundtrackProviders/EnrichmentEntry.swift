import SoundtrackContext

/// One line of a pick's `enriched` list: which source filled (or failed to fill) which snapshot section.
///
/// JSON: `{"section":"weather","source":"openweather","status":"failed","reason":"rate_limited"}`.
public struct EnrichmentEntry: Sendable, Equatable {
    /// What a source did.
    public enum Status: String, Sendable, Equatable {
        /// It filled the section.
        case filled
        /// The section came from the cache of an earlier answer of that source.
        case cached
        /// It failed (see ``EnrichmentEntry/reason``); the next source of the chain was tried.
        case failed
        /// It was not asked (not configured, or the snapshot lacks what it needs, such as coordinates).
        case skipped
    }

    /// The snapshot section: `weather` or `calendar`.
    public var section: String
    /// The source: `openweather`, `open-meteo`, `google-calendar`, `stored-events`…
    public var source: String
    /// What it did.
    public var status: Status
    /// Why it failed or was skipped (``ProviderError/code``, `not_configured`, `no_coordinates`…).
    public var reason: String?

    /// Creates an entry.
    public init(section: String, source: String, status: Status, reason: String? = nil) {
        self.section = section
        self.source = source
        self.status = status
        self.reason = reason
    }

    /// The entry as JSON.
    public func json() -> JSONValue {
        var pairs: [(String, JSONValue)] = [("section", .string(section)), ("source", .string(source)), ("status", .string(status.rawValue))]
        if let reason { pairs.append(("reason", .string(reason))) }
        return .object(pairs)
    }
}

extension EnrichmentEntry {
    /// A pick's JSON with the `enriched` list appended (unchanged when the list is empty).
    public static func annotate(_ pick: JSONValue, with report: [EnrichmentEntry]) -> JSONValue {
        guard case var .object(pairs) = pick, !report.isEmpty else { return pick }
        pairs.append(("enriched", .array(report.map { $0.json() })))
        return .object(pairs)
    }
}
