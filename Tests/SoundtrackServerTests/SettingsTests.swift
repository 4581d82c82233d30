import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SoundtrackContext
import SoundtrackTestSupport
import Testing

@testable import SoundtrackServer
@testable import SoundtrackStore

/// A person's settings through the API and the CLI (issue 42, item 1): read and changed by the
/// person's own key or an admin key, bad keys and values refused naming them, and the engine
/// judging the person's next event by the new settings.
@Suite struct SettingsTests {
    static let defaults = #"{"location_services":true,"volume_control":false,"keep_raw_snapshots":false,"calendar_titles":true}"#

    @Test("GET and PATCH /v1/users/{id}/settings: own key or admin, 403 for another's, 404 for nobody, 400 naming a bad key or value")
    func overHTTP() async throws {
        let f = try Fixture()
        let store = f.service.store
        let track = try f.track
        try await f.api.buildApplication().test(.router) { client in
            let key = f.keys["u-1"]!
            var r = try await client.send(.get, "/v1/users/u-1/settings", key: key)
            #expect(r.status == .ok && r.text == Self.defaults, "\(r.text)")
            #expect(try await client.send(.get, "/v1/users/u-1/settings", key: f.keys["u-2"]).status == .forbidden)
            #expect(try await client.send(.patch, "/v1/users/u-1/settings", key: f.keys["u-2"], body: #"{"volume_control": true}"#).status == .forbidden)
            #expect(try await client.send(.get, "/v1/users/u-1/settings", key: f.admin).status == .ok)
            #expect(try await client.send(.get, "/v1/users/nobody/settings", key: f.admin).errorCode == "unknown_user")

            // Bad changes name the key or the value, and change nothing.
            for (body, field) in [
                (#"{"volume_control": true, "colour": true}"#, "colour"), (#"{"volume_control": "yes"}"#, "volume_control"),
                ("{}", ""), ("[]", ""), (#"{"keep_raw_snapshots": 1}"#, "keep_raw_snapshots")
            ] {
                r = try await client.send(.patch, "/v1/users/u-1/settings", key: key, body: body)
                #expect(r.status == .badRequest && (r.errorField ?? "") == field, "\(body): \(r.text)")
            }
            #expect(try await client.send(.get, "/v1/users/u-1/settings", key: key).text == Self.defaults)

            // The person's own key turns on keeping raw snapshots: the next event's is kept.
            r = try await client.send(.post, "/v1/feedback", key: key, body: Doc.event(id: "s-1", user: "u-1", track: track, snapshot: true))
            #expect(r.status == .ok)
            r = try await client.send(.patch, "/v1/users/u-1/settings", key: key, body: #"{"keep_raw_snapshots": true}"#)
            #expect(r.status == .ok && r.json["keep_raw_snapshots"] == .bool(true) && r.json["location_services"] == .bool(true), "\(r.text)")
            r = try await client.send(.post, "/v1/feedback", key: key, body: Doc.event(id: "s-2", user: "u-1", track: track, snapshot: true))
            #expect(r.status == .ok)
            let kept = try await store.database.read { db in
                try String.fetchAll(db, sql: "SELECT id FROM feedback WHERE user_id = 'u-1' AND snapshot IS NOT NULL")
            }
            #expect(kept == ["s-2"])
            #expect(try store.settings(user: "u-1").keepRawSnapshots)
        }
    }

    @Test("soundtrack settings show and set: a table or JSON; an unknown setting or value exits 2 naming it")
    func throughTheCLI() async throws {
        let (_, db) = try await CLI.smallDatabase(user: "u-1")
        var r = try await CLI.run(["settings", "show", "u-1", "--db", db])
        #expect(r.status == 0 && r.stdout.contains("location_services   on") && r.stdout.contains("keep_raw_snapshots  off"), "\(r.stdout)")
        r = try await CLI.run(["settings", "set", "u-1", "volume_control", "on", "--json", "--db", db])
        #expect(r.status == 0 && r.stdout == #"{"location_services":true,"volume_control":true,"keep_raw_snapshots":false,"calendar_titles":true}"# + "\n", "\(r.stdout)")
        r = try await CLI.run(["settings", "set", "u-1", "colour", "on", "--db", db])
        #expect(r.status == 2 && r.stderr.contains("colour: expected a setting: one of location_services, volume_control, keep_raw_snapshots, calendar_titles"), "\(r.stderr)")
        r = try await CLI.run(["settings", "set", "u-1", "volume_control", "maybe", "--db", db])
        #expect(r.status == 2 && r.stderr.contains("volume_control: expected on or off"), "\(r.stderr)")
        r = try await CLI.run(["settings", "show", "nobody", "--db", db])
        #expect(r.status == 2 && r.stderr.contains("nobody"), "\(r.stderr)")
        r = try await CLI.run(["settings", "show", "u-1", "--json", "--db", db])
        #expect(r.stdout == #"{"location_services":true,"volume_control":true,"keep_raw_snapshots":false,"calendar_titles":true}"# + "\n")
    }

    @Test("calendar_titles off: no title reaches the engine or a table, the titles kept before are removed, imports keep none")
    func calendarTitlesOff() async throws {
        let f = try Fixture(keepingSnapshots: ["u-1"])
        let store = f.service.store
        let track = try f.track
        let title = "Confidential oncology appointment"
        @Sendable func titlesStored() async throws -> Int {
            try await store.database.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM feedback WHERE snapshot LIKE ?", arguments: ["%\(title)%"]) ?? 0
            }
        }
        try await f.api.buildApplication().test(.router) { client in
            let key = f.keys["u-1"]!
            // Kept with the raw snapshot while the setting is on (the control).
            #expect(try await client.send(.post, "/v1/feedback", key: key, body: Doc.event(id: "c-1", user: "u-1", track: track, snapshot: true)).status == .ok)
            #expect(try await titlesStored() == 1)
            var r = try await client.send(.patch, "/v1/users/u-1/settings", key: key, body: #"{"calendar_titles": false}"#)
            #expect(r.status == .ok && r.json["calendar_titles"] == .bool(false), "\(r.text)")
            #expect(try await titlesStored() == 0)
            r = try await client.send(.post, "/v1/feedback", key: key, body: Doc.event(id: "c-2", user: "u-1", track: track, snapshot: true))
            #expect(r.status == .ok, "\(r.text)")
            #expect(try await titlesStored() == 0)
            let kept = try await store.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM feedback WHERE json_type(snapshot, '$.calendar.events') = 'array'") }
            #expect(kept == 2)  // the events stay, with their times
        }
        // Imported events keep no title and no category read from one.
        let at = Timestamp(rfc3339: "2026-03-16T18:00:00+01:00")!
        try store.replaceCalendarEvents(
            user: "u-1", source: .ics, from: at.date.addingTimeInterval(-86_400), to: at.date.addingTimeInterval(86_400),
            events: [StoredCalendarEvent(sourceID: "x", start: at, end: at, allDay: false, category: .workout, title: "Gym with Ana")], at: Date())
        let row = try await store.database.read { db in try Row.fetchOne(db, sql: "SELECT category, title FROM calendar_events WHERE user_id = 'u-1'") }
        #expect(row?["category"] == "other" && (row?["title"] as String?) == nil, "\(String(describing: row))")
    }
}
