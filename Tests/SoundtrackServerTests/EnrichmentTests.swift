import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SoundtrackContext
import SoundtrackProviders
import SoundtrackServer
import Testing

/// `serve --enrich`: missing sections are filled before the pick, and the pick says by whom.
@Suite struct EnrichmentTests {
    @Test func picksCarryTheEnrichedListAndUseTheFilledCalendar() async throws {
        let gym = CalendarEvent(
            start: Timestamp(rfc3339: "2026-03-14T07:30:00+01:00")!, end: Timestamp(rfc3339: "2026-03-14T09:00:00+01:00")!, category: .workout)
        let f = try Fixture { config in
            config.enricher = SnapshotEnricher(weather: nil, googleCalendar: nil, storedEvents: { user, _, _ in user == "u-1" ? [gym] : [] })
        }
        let keys = f.keys
        try await f.api.buildApplication().test(.router) { client in
            let bare = #"{"user":"u-1","at":"2026-03-14T07:42:10+01:00","location":{"lat":42.0267,"lon":-93.6465}}"#
            let r = try await client.send(.post, "/v1/picks", key: keys["u-1"], body: bare)
            #expect(r.status == .ok)
            guard case let .array(entries)? = r.json["enriched"] else {
                Issue.record("no enriched list in \(r.text)")
                return
            }
            #expect(
                entries.map { $0.serialized() } == [
                    #"{"section":"weather","source":"none","status":"skipped","reason":"not_configured"}"#,
                    #"{"section":"calendar","source":"stored-events","status":"filled"}"#
                ])
            // The engine saw the filled calendar: the new bin is labelled by it.
            #expect(r.json["bin"]?["label"]?.stringValue?.contains("workout") == true, "\(r.text)")
            // A snapshot with every section it could lack gets no list.
            let full = try await client.send(.post, "/v1/picks", key: keys["u-1"], body: Doc.snapshot(user: "u-1"))
            #expect(full.status == .ok && full.json["enriched"] == nil)
        }
    }
}
