import Foundation
import SoundtrackContext

/// Google Calendar's events list:
/// `GET /calendar/v3/calendars/{id}/events?timeMin=…&timeMax=…&singleEvents=true&orderBy=startTime`
/// with a bearer token (refreshed on 401 when a refresh token and token endpoint are configured),
/// following `nextPageToken`.
public struct GoogleCalendarClient: Sendable {
    /// The API's base URL (`https://www.googleapis.com`).
    public var baseURL: URL
    /// The calendar (`primary` by default).
    public var calendarID: String
    /// The user's tokens.
    public var tokens: OAuthTokens
    /// The zone of all-day dates when the calendar names none.
    public var defaultTimeZone: TimeZone

    /// Creates a client.
    public init(baseURL: URL, calendarID: String = "primary", tokens: OAuthTokens, defaultTimeZone: TimeZone = TimeZone(identifier: "UTC")!) {
        self.baseURL = baseURL
        self.calendarID = calendarID
        self.tokens = tokens
        self.defaultTimeZone = defaultTimeZone
    }

    /// The events overlapping `[from, to)`, recurring ones expanded by Google (`singleEvents=true`);
    /// cancelled events are left out. At most `maxPages` pages are read.
    public func events(from: Date, to: Date, maxPages: Int = 10) async throws(ProviderError) -> [CalendarOccurrence] {
        var out: [CalendarOccurrence] = []
        var pageToken: String?
        let id = calendarID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/@"))) ?? calendarID
        for _ in 0..<maxPages {
            var query: [(String, String)] = [
                ("timeMin", Timestamp(date: from, offsetSeconds: 0).rfc3339), ("timeMax", Timestamp(date: to, offsetSeconds: 0).rfc3339),
                ("singleEvents", "true"), ("orderBy", "startTime"), ("maxResults", "250")
            ]
            if let pageToken { query.append(("pageToken", pageToken)) }
            let url = HTTPRequest.url(base: baseURL, path: "/calendar/v3/calendars/\(id)/events", query: query)
            let json = try await tokens.authorizedJSON(HTTPRequest(url: url, headers: ["Accept": "application/json"]))
            out.append(contentsOf: try Self.occurrences(from: json, defaultTimeZone: defaultTimeZone))
            guard case let .string(next)? = json["nextPageToken"], !next.isEmpty else { break }
            pageToken = next
        }
        return out
    }

    /// The occurrences of one events-list page.
    public static func occurrences(from json: JSONValue, defaultTimeZone: TimeZone) throws(ProviderError) -> [CalendarOccurrence] {
        guard case .object = json else { throw .malformed(InputError(path: "", expected: "an object", got: json.typeDescription)) }
        guard case let .array(items)? = json["items"] else {
            throw .malformed(InputError(path: "items", expected: "an array", got: json["items"]?.typeDescription ?? "nothing"))
        }
        let zone = json["timeZone"]?.stringText.flatMap(TimeZone.init(identifier:)) ?? defaultTimeZone
        var out: [CalendarOccurrence] = []
        for (i, item) in items.enumerated() {
            if item["status"]?.stringText == "cancelled" { continue }
            func time(_ key: String) throws(ProviderError) -> (Timestamp, Bool) {
                let v = item[key]
                if let s = v?["dateTime"]?.stringText, let t = Timestamp(rfc3339: s) { return (t, false) }
                if let s = v?["date"]?.stringText, s.count == 10,
                    let l = LocalDateTime(ics: s.replacingOccurrences(of: "-", with: ""), dateOnly: true)
                {
                    return (ICSZone.zone(zone).instant(l), true)
                }
                throw .malformed(InputError(path: "items[\(i)].\(key)", expected: "an object with dateTime (RFC 3339) or date (YYYY-MM-DD)", got: v?.typeDescription ?? "nothing"))
            }
            let (start, allDay) = try time("start")
            var (end, _) = try time("end")
            if end.date < start.date { end = start }
            out.append(
                CalendarOccurrence(
                    uid: item["id"]?.stringText ?? "google-\(i)", title: item["summary"]?.stringText, start: start, end: end, allDay: allDay))
        }
        return out
    }
}
