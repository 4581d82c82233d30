import Foundation
import Testing

@testable import SoundtrackContext

/// The example snapshot of the formats (docs/formats.md, docs/schemas).
let formatsExample = #"""
    {
      "user": "u-1042",
      "at": "2026-03-14T07:42:10+01:00",
      "location": { "lat": 42.0267, "lon": -93.6465, "accuracy_m": 12, "speed_mps": 1.4, "place": "library" },
      "weather":  { "temp_c": 3.5, "wind_mps": 5.2, "cloud_pct": 80, "humidity_pct": 91, "precip_mm_h": 0.6,
                    "condition": "rain", "sunrise": "2026-03-14T06:58:00+01:00", "sunset": "2026-03-14T18:49:00+01:00" },
      "calendar": { "events": [ { "title": "Study group – algorithms", "start": "2026-03-14T07:30:00+01:00",
                                  "end": "2026-03-14T09:00:00+01:00", "all_day": false, "category": "study" } ] },
      "bluetooth": { "devices": [ { "name": "WH-1000XM4", "kind": "headphones" } ] },
      "motion":   { "activity": "stationary", "steps_per_min": 0, "steps_today": 2150, "heart_rate_bpm": 64 },
      "audio":    { "route": "headphones", "volume": 0.45 },
      "tags":     { "mood": "focused" }
    }
    """#

func ts(_ text: String) -> Timestamp { Timestamp(rfc3339: text)! }

/// A minimal snapshot document with extra members spliced in.
func snapshotJSON(_ extra: String = "") -> String {
    #"{"user":"u-1","at":"2026-03-14T07:42:10+01:00""# + (extra.isEmpty ? "" : "," + extra) + "}"
}

func snapshotError(_ text: String, strict: Bool = false) -> String? {
    do {
        _ = try Snapshot.decode(Data(text.utf8), strict: strict)
        return nil
    } catch {
        return error.description
    }
}

@Suite("Snapshot decoding")
struct SnapshotTests {
    @Test func decodesTheFormatsExample() throws {
        let s = try Snapshot.decode(Data(formatsExample.utf8), strict: true)
        let expected = Snapshot(
            user: "u-1042", at: ts("2026-03-14T07:42:10+01:00"),
            location: Location(lat: 42.0267, lon: -93.6465, accuracyM: 12, speedMps: 1.4, place: "library"),
            weather: Weather(
                tempC: 3.5, windMps: 5.2, cloudPct: 80, humidityPct: 91, precipMmH: 0.6, condition: .rain,
                sunrise: ts("2026-03-14T06:58:00+01:00"), sunset: ts("2026-03-14T18:49:00+01:00")),
            calendar: CalendarInfo(events: [
                CalendarEvent(
                    title: "Study group – algorithms", start: ts("2026-03-14T07:30:00+01:00"),
                    end: ts("2026-03-14T09:00:00+01:00"), allDay: false, category: .study)
            ]),
            bluetooth: Bluetooth(devices: [BluetoothDevice(name: "WH-1000XM4", kind: .headphones)]),
            motion: Motion(activity: .stationary, stepsPerMin: 0, stepsToday: 2150, heartRateBpm: 64),
            audio: AudioState(route: .headphones, volume: 0.45),
            tags: ["mood": "focused"])
        #expect(s == expected)
    }

    @Test func missingSectionsAreNil() throws {
        let s = try Snapshot.decode(Data(snapshotJSON().utf8))
        #expect(s.user == "u-1")
        #expect(s.location == nil && s.weather == nil && s.calendar == nil && s.bluetooth == nil)
        #expect(s.motion == nil && s.audio == nil && s.tags == nil)
    }

    @Test func nullMeansAbsent() throws {
        let s = try Snapshot.decode(
            Data(
                snapshotJSON(
                    #"""
                    "location": null, "weather": {"temp_c": null, "condition": null, "sunrise": null},
                    "calendar": {"events": null}, "motion": {}, "audio": {"route": "car", "volume": null},
                    "tags": {"mood": null, "road": "wet"}
                    """#
                ).utf8))
        #expect(s.location == nil)
        #expect(s.weather == Weather())
        #expect(s.calendar == CalendarInfo(events: []))
        #expect(s.motion == Motion())
        #expect(s.audio == AudioState(route: .car))
        #expect(s.tags == ["road": "wet"])
    }

    @Test func unknownFieldsAreIgnoredUnlessStrict() throws {
        let text = snapshotJSON(#""foo": 1, "weather": {"uv_index": 3}"#)
        #expect(try Snapshot.decode(Data(text.utf8)).weather == Weather())
        #expect(snapshotError(text, strict: true) == "foo: expected one of the fields user, at, location, weather, calendar, bluetooth, motion, audio, tags, got \"foo\"")
        #expect(
            snapshotError(snapshotJSON(#""weather": {"uv_index": 3}"#), strict: true)
                == "weather.uv_index: expected one of the fields temp_c, wind_mps, cloud_pct, humidity_pct, precip_mm_h, condition, sunrise, sunset, got \"uv_index\"")
        #expect(
            snapshotError(snapshotJSON(#""calendar": {"events": [{"start": "2026-03-14T07:42:10Z", "where": "x"}]}"#), strict: true)
                == #"calendar.events[0].where: expected one of the fields title, start, end, all_day, category, got "where""#)
        #expect(
            snapshotError(snapshotJSON(#""bluetooth": {"devices": [{"kind": "car", "rssi": -40}]}"#), strict: true)
                == "bluetooth.devices[0].rssi: expected one of the fields name, kind, got \"rssi\"")
    }

    @Test(arguments: [
        (
            #"{"at":"2026-03-14T07:42:10+01:00"}"#,
            "user: expected a non-empty string of at most 128 characters without control characters, got nothing"
        ),
        (
            #"{"user":null,"at":"2026-03-14T07:42:10+01:00"}"#,
            "user: expected a non-empty string of at most 128 characters without control characters, got null"
        ),
        (
            #"{"user":42,"at":"2026-03-14T07:42:10+01:00"}"#,
            "user: expected a non-empty string of at most 128 characters without control characters, got a number"
        ),
        (
            #"{"user":"","at":"2026-03-14T07:42:10+01:00"}"#,
            #"user: expected a non-empty string of at most 128 characters without control characters, got """#
        ),
        (
            #"{"user":"a\u0007b","at":"2026-03-14T07:42:10+01:00"}"#,
            #"user: expected a non-empty string of at most 128 characters without control characters, got "a\u0007b""#
        ),
        (
            #"{"user":"a\u0085b","at":"2026-03-14T07:42:10+01:00"}"#,
            "user: expected a non-empty string of at most 128 characters without control characters, got \"a\u{85}b\""
        ),
        (
            #"{"user":""# + String(repeating: "x", count: 129) + #"","at":"2026-03-14T07:42:10+01:00"}"#,
            "user: expected a non-empty string of at most 128 characters without control characters, got a string of 129 characters"
        ),
        (
            #"{"user":"u-1"}"#,
            "at: expected an RFC 3339 timestamp with an offset (like 2026-03-14T07:42:10+01:00), got nothing"
        ),
        (
            #"{"user":"u-1","at":null}"#,
            "at: expected an RFC 3339 timestamp with an offset (like 2026-03-14T07:42:10+01:00), got null"
        ),
        (
            #"{"user":"u-1","at":1773470530}"#,
            "at: expected an RFC 3339 timestamp with an offset (like 2026-03-14T07:42:10+01:00), got a number"
        ),
        (
            #"{"user":"u-1","at":"2026-03-14T07:42:10"}"#,
            #"at: expected an RFC 3339 timestamp with an offset (like 2026-03-14T07:42:10+01:00), got "2026-03-14T07:42:10""#
        ),
        (
            #"{"user":"u-1","at":"2026-02-30T07:42:10Z"}"#,
            #"at: expected an RFC 3339 timestamp with an offset (like 2026-03-14T07:42:10+01:00), got "2026-02-30T07:42:10Z""#
        ),
        (#"[1]"#, "input: expected an object, got an array"),
        (#"{"user":"u-1","at":"2026-03-14T07:42:10Z","#, "input: expected a string key, got end of input at line 1, column 43")
    ])
    func rejectsBadRequiredFields(text: String, message: String) {
        #expect(snapshotError(text) == message)
    }

    @Test(arguments: [
        (#""location": "home""#, "location: expected an object, got a string"),
        (#""location": {"lat": 91, "lon": 0}"#, "location.lat: expected a number in -90...90, got 91"),
        (#""location": {"lat": 0, "lon": -180.5}"#, "location.lon: expected a number in -180...180, got -180.5"),
        (#""location": {"lat": 42}"#, "location.lon: expected a number in -180...180 (lat and lon come together), got nothing"),
        (#""location": {"lon": 42, "lat": null}"#, "location.lat: expected a number in -90...90 (lat and lon come together), got nothing"),
        (#""location": {"lat": "42", "lon": 1}"#, "location.lat: expected a number in -90...90, got a string"),
        (#""location": {"accuracy_m": -1}"#, "location.accuracy_m: expected a number >= 0, got -1"),
        (#""location": {"speed_mps": 151}"#, "location.speed_mps: expected a number in 0...150, got 151"),
        (#""location": {"speed_mps": true}"#, "location.speed_mps: expected a number in 0...150, got a boolean"),
        (#""location": {"place": 5}"#, "location.place: expected a string, got a number"),
        (
            #""location": {"place": ""# + String(repeating: "é", count: 1025) + #""}"#,
            "location.place: expected a string of at most 1024 characters, got a string of 1025 characters"
        ),
        (#""weather": []"#, "weather: expected an object, got an array"),
        (#""weather": {"temp_c": 61}"#, "weather.temp_c: expected a number in -90...60, got 61"),
        (#""weather": {"temp_c": -90.5}"#, "weather.temp_c: expected a number in -90...60, got -90.5"),
        (#""weather": {"wind_mps": 121}"#, "weather.wind_mps: expected a number in 0...120, got 121"),
        (#""weather": {"cloud_pct": 140}"#, "weather.cloud_pct: expected a number in 0...100, got 140"),
        (#""weather": {"cloud_pct": "80%"}"#, "weather.cloud_pct: expected a number in 0...100, got a string"),
        (#""weather": {"humidity_pct": -1}"#, "weather.humidity_pct: expected a number in 0...100, got -1"),
        (#""weather": {"precip_mm_h": 500.5}"#, "weather.precip_mm_h: expected a number in 0...500, got 500.5"),
        (
            #""weather": {"condition": "sunny"}"#,
            #"weather.condition: expected one of clear, clouds, rain, drizzle, thunderstorm, snow, fog, mist, haze, dust, other, got "sunny""#
        ),
        (
            #""weather": {"condition": "Rain"}"#,
            #"weather.condition: expected one of clear, clouds, rain, drizzle, thunderstorm, snow, fog, mist, haze, dust, other, got "Rain""#
        ),
        (
            #""weather": {"condition": 3}"#,
            "weather.condition: expected one of clear, clouds, rain, drizzle, thunderstorm, snow, fog, mist, haze, dust, other, got a number"
        ),
        (
            #""weather": {"sunrise": "6am"}"#,
            #"weather.sunrise: expected an RFC 3339 timestamp with an offset (like 2026-03-14T07:42:10+01:00), got "6am""#
        ),
        (
            #""weather": {"sunrise": "2026-03-14T06:58:00+01:00", "sunset": "2026-03-14T05:00:00+01:00"}"#,
            "weather.sunset: expected a time after sunrise (2026-03-14T06:58:00+01:00), got 2026-03-14T05:00:00+01:00"
        ),
        (
            #""weather": {"sunrise": "2026-03-14T06:58:00+01:00", "sunset": "2026-03-14T05:58:00Z"}"#,
            "weather.sunset: expected a time after sunrise (2026-03-14T06:58:00+01:00), got 2026-03-14T05:58:00Z"
        ),
        (#""calendar": 1"#, "calendar: expected an object, got a number"),
        (#""calendar": {"events": {}}"#, "calendar.events: expected an array of at most 200 events, got an object"),
        (#""calendar": {"events": ["lunch"]}"#, "calendar.events[0]: expected an object, got a string"),
        (
            #""calendar": {"events": [{"start": "2026-03-14T07:00:00Z"}, {"start": "2026-03-14T08:00:00Z"}, {"title": "x"}]}"#,
            "calendar.events[2].start: expected an RFC 3339 timestamp with an offset (like 2026-03-14T07:42:10+01:00), got nothing"
        ),
        (
            #""calendar": {"events": [{"start": "2026-03-14T07:30:00+01:00", "end": "2026-03-14T07:00:00+01:00"}]}"#,
            "calendar.events[0].end: expected a time not before start (2026-03-14T07:30:00+01:00), got 2026-03-14T07:00:00+01:00"
        ),
        (
            #""calendar": {"events": [{"start": "2026-03-14T07:30:00Z", "all_day": "yes"}]}"#,
            "calendar.events[0].all_day: expected true or false, got a string"
        ),
        (
            #""calendar": {"events": [{"start": "2026-03-14T07:30:00Z", "category": "gym"}]}"#,
            #"calendar.events[0].category: expected one of workout, study, work, social, travel, rest, other, got "gym""#
        ),
        (
            #""calendar": {"events": [{"start": "2026-03-14T07:30:00Z", "title": 7}]}"#,
            "calendar.events[0].title: expected a string, got a number"
        ),
        (
            #""bluetooth": {"devices": [{"name": "Car"}]}"#,
            "bluetooth.devices[0].kind: expected one of car, headphones, speaker, watch, other, got nothing"
        ),
        (
            #""bluetooth": {"devices": [{"kind": "car"}, {"kind": null}]}"#,
            "bluetooth.devices[1].kind: expected one of car, headphones, speaker, watch, other, got null"
        ),
        (
            #""bluetooth": {"devices": [{"kind": "tv"}]}"#,
            #"bluetooth.devices[0].kind: expected one of car, headphones, speaker, watch, other, got "tv""#
        ),
        (
            #""bluetooth": {"devices": [{"kind": "car", "name": ["x"]}]}"#,
            "bluetooth.devices[0].name: expected a string, got an array"
        ),
        (
            #""motion": {"activity": "sleeping"}"#,
            #"motion.activity: expected one of stationary, walking, running, cycling, automotive, unknown, got "sleeping""#
        ),
        (#""motion": {"steps_per_min": 401}"#, "motion.steps_per_min: expected a number in 0...400, got 401"),
        (#""motion": {"steps_today": 200001}"#, "motion.steps_today: expected a number in 0...200000, got 200001"),
        (#""motion": {"heart_rate_bpm": 19}"#, "motion.heart_rate_bpm: expected a number in 20...250, got 19"),
        (#""motion": {"heart_rate_bpm": 251}"#, "motion.heart_rate_bpm: expected a number in 20...250, got 251"),
        (
            #""audio": {"route": "hdmi"}"#,
            #"audio.route: expected one of speaker, headphones, bluetooth, car, airplay, other, got "hdmi""#
        ),
        (#""audio": {"volume": 1.5}"#, "audio.volume: expected a number in 0...1, got 1.5"),
        (#""audio": {"volume": -0.1}"#, "audio.volume: expected a number in 0...1, got -0.1"),
        (#""tags": ["mood"]"#, "tags: expected an object of string values, got an array"),
        (#""tags": {"mood": 3}"#, "tags.mood: expected a string, got a number"),
        (#""tags": {"mood": {"x": 1}}"#, "tags.mood: expected a string, got an object"),
        (#""tags": {"": "x"}"#, #"tags: expected non-empty tag names, got """#),
        (
            #""tags": {"mood": ""# + String(repeating: "a", count: 1025) + #""}"#,
            "tags.mood: expected a string of at most 1024 characters, got a string of 1025 characters"
        )
    ])
    func rejectsBadSections(member: String, message: String) {
        #expect(snapshotError(snapshotJSON(member)) == message)
    }

    @Test func limitsCounts() {
        let event = #"{"start": "2026-03-14T07:30:00Z"}"#
        let events200 = Array(repeating: event, count: 200).joined(separator: ",")
        #expect(snapshotError(snapshotJSON(#""calendar": {"events": [\#(events200)]}"#)) == nil)
        #expect(
            snapshotError(snapshotJSON(#""calendar": {"events": [\#(events200),\#(event)]}"#))
                == "calendar.events: expected at most 200 events, got 201")
        let device = #"{"kind": "other"}"#
        let devices = Array(repeating: device, count: 51).joined(separator: ",")
        #expect(
            snapshotError(snapshotJSON(#""bluetooth": {"devices": [\#(devices)]}"#))
                == "bluetooth.devices: expected at most 50 devices, got 51")
        let tags64 = (0..<64).map { #""t\#($0)": "v""# }.joined(separator: ",")
        #expect(snapshotError(snapshotJSON(#""tags": {\#(tags64)}"#)) == nil)
        #expect(snapshotError(snapshotJSON(#""tags": {\#(tags64), "t64": "v"}"#)) == "tags: expected at most 64 tags, got 65")
    }

    @Test func limitsDocumentSize() {
        let document = snapshotJSON()
        let padding = String(repeating: " ", count: Snapshot.maxBytes - document.utf8.count)
        #expect(snapshotError(document + padding) == nil)
        #expect(
            snapshotError(document + padding + " ")
                == "input: expected a document of at most 1048576 bytes, got 1048577 bytes")
    }

    @Test func acceptsBoundaryValues() throws {
        let s = try Snapshot.decode(
            Data(
                snapshotJSON(
                    #"""
                    "location": {"lat": -90, "lon": 180, "accuracy_m": 0, "speed_mps": 150},
                    "weather": {"temp_c": -90, "wind_mps": 120, "cloud_pct": 0, "humidity_pct": 100, "precip_mm_h": 500},
                    "motion": {"steps_per_min": 400, "steps_today": 200000, "heart_rate_bpm": 20},
                    "audio": {"volume": 1},
                    "calendar": {"events": [{"start": "2026-03-14T07:30:00Z", "end": "2026-03-14T07:30:00Z"}]}
                    """#
                ).utf8))
        #expect(s.location?.lat == -90)
        #expect(s.motion?.heartRateBpm == 20)
        #expect(s.calendar?.events.first?.allDay == false)
    }

    @Test func roundTripsThroughJSON() throws {
        let s = try Snapshot.decode(Data(formatsExample.utf8))
        let again = try Snapshot.decode(Data(s.json().serialized().utf8), strict: true)
        #expect(again == s)
        #expect(try Snapshot(json: s.json()) == s)
        let minimal = try Snapshot.decode(Data(snapshotJSON().utf8))
        #expect(minimal.json().serialized() == #"{"user":"u-1","at":"2026-03-14T07:42:10+01:00"}"#)
        let empty = Snapshot(
            user: "u-2", at: ts("2026-03-14T07:42:10.125-03:00"), location: Location(place: "Café"),
            weather: Weather(), calendar: CalendarInfo(), bluetooth: Bluetooth(), motion: Motion(), audio: AudioState(), tags: [:])
        #expect(try Snapshot.decode(Data(empty.json().serialized().utf8)) == empty)
        #expect(
            empty.json().serialized()
                == #"{"user":"u-2","at":"2026-03-14T07:42:10.125-03:00","location":{"place":"Café"},"weather":{},"calendar":{"events":[]},"bluetooth":{"devices":[]},"motion":{},"audio":{},"tags":{}}"#
        )
    }

    @Test func encodesTheFormatsShape() throws {
        let s = try Snapshot.decode(Data(formatsExample.utf8))
        #expect(
            s.json().serialized()
                == #"{"user":"u-1042","at":"2026-03-14T07:42:10+01:00","location":{"lat":42.0267,"lon":-93.6465,"accuracy_m":12,"speed_mps":1.4,"place":"library"},"weather":{"temp_c":3.5,"wind_mps":5.2,"cloud_pct":80,"humidity_pct":91,"precip_mm_h":0.6,"condition":"rain","sunrise":"2026-03-14T06:58:00+01:00","sunset":"2026-03-14T18:49:00+01:00"},"calendar":{"events":[{"title":"Study group – algorithms","start":"2026-03-14T07:30:00+01:00","end":"2026-03-14T09:00:00+01:00","all_day":false,"category":"study"}]},"bluetooth":{"devices":[{"name":"WH-1000XM4","kind":"headphones"}]},"motion":{"activity":"stationary","steps_per_min":0,"steps_today":2150,"heart_rate_bpm":64},"audio":{"route":"headphones","volume":0.45},"tags":{"mood":"focused"}}"#
        )
    }

    @Test func nestedPathsArePrefixed() {
        let v = try! JSONParser.parse(#"{"user":"u","at":"2026-03-14T07:42:10Z","weather":{"cloud_pct":140}}"#)
        #expect(throws: InputError(path: "records[3].weather.cloud_pct", expected: "a number in 0...100", got: "140")) {
            try Snapshot(json: v, path: "records[3]")
        }
    }
}
