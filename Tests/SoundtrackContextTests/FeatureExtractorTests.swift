import Foundation
import Testing

@testable import SoundtrackContext

/// Expected slots: name → value for every present slot; every other slot must be missing.
func expectSlots(_ v: FeatureVector, _ expected: [String: Double], sourceLocation: SourceLocation = #_sourceLocation) {
    for (i, slot) in FeatureLayout.slots.enumerated() {
        if let want = expected[slot.name] {
            #expect(v.mask[i] == 1, "\(slot.name) should be present", sourceLocation: sourceLocation)
            #expect(abs(Double(v.values[i]) - want) < 1e-6, "\(slot.name): \(v.values[i]) != \(want)", sourceLocation: sourceLocation)
        } else {
            #expect(v.mask[i] == 0, "\(slot.name) should be missing", sourceLocation: sourceLocation)
            #expect(v.values[i] == 0, "\(slot.name) should be 0 when missing", sourceLocation: sourceLocation)
        }
    }
}

/// The slots of a one-hot group: `hot` is 1, the rest 0.
func oneHot(_ prefix: String, _ names: [String], hot: String?) -> [String: Double] {
    var d: [String: Double] = [:]
    for n in names { d["\(prefix).\(n)"] = n == hot ? 1 : 0 }
    return d
}

func timeSlots(hour: Double, weekday: Int) -> [String: Double] {
    let a = 2 * Double.pi * hour / 24
    let b = 2 * Double.pi * Double(weekday) / 7
    return [
        "time.tod_sin": sin(a), "time.tod_cos": cos(a), "time.dow_sin": sin(b), "time.dow_cos": cos(b),
        "time.weekend": weekday >= 5 ? 1 : 0
    ]
}

func decode(_ text: String) throws -> Snapshot { try Snapshot.decode(Data(text.utf8), strict: true) }

extension FeatureExtractor {
    /// Extraction for a user whose vocabulary starts empty for every call (each test names the slots).
    func extract(_ s: Snapshot, places: inout PlaceBook) -> FeatureVector {
        var vocabulary = FeatureVocabulary()
        return extract(s, places: &places, vocabulary: &vocabulary)
    }
}

let placeSlotNames = (0..<FeatureLayout.learnedPlaceSlots).map { "p\($0)" }
let tagSlotNames = (0..<FeatureLayout.tagSlots).map { "t\($0)" }

@Suite("Feature extraction")
struct FeatureExtractorTests {
    let extractor = FeatureExtractor()

    @Test func libraryMorning() throws {
        let s = try decode(formatsExample)
        var places = PlaceBook()
        let v = extractor.extract(s, places: &places)
        var expected = timeSlots(hour: 7 + 42.0 / 60 + 10.0 / 3600, weekday: 5)  // Saturday
        expected["time.daylight"] = 1
        expected["movement.speed"] = 0.23574841732662374
        expected["movement.moving"] = 1
        expected.merge(oneHot("place", FeatureLayout.placeCategories, hot: "library")) { $1 }
        expected["location.accuracy"] = log10(12.0) / 3
        expected.merge(oneHot("place", placeSlotNames, hot: "p0")) { $1 }  // the user's first place
        expected["weather.temp"] = 23.5 / 60
        expected["weather.wind"] = 0.26
        expected["weather.clouds"] = 0.8
        expected["weather.humidity"] = 0.91
        expected["weather.precip"] = 0.15437679927141093
        expected.merge(oneHot("weather", FeatureLayout.weatherGroups.map { "cond_\($0)" }, hot: "cond_wet")) { $1 }
        expected.merge(oneHot("calendar", FeatureLayout.calendarCategories, hot: "study")) { $1 }
        expected["calendar.busy"] = 1
        expected["calendar.next_soon"] = 0
        expected.merge(oneHot("bluetooth", FeatureLayout.bluetoothKinds, hot: "headphones")) { $1 }
        expected.merge(oneHot("motion", FeatureLayout.activities, hot: "stationary")) { $1 }
        expected["motion.cadence"] = 0
        expected["motion.hr_zone"] = 14.0 / 130
        expected["motion.steps_today"] = 2150.0 / 15000
        expected.merge(oneHot("audio", FeatureLayout.audioRoutes, hot: "headphones")) { $1 }
        expected["audio.volume"] = 0.45
        expected["tags.t0"] = 1  // mood=focused, the user's first tag; no other tag of the key is known
        expectSlots(v, expected)
        #expect(places.places.isEmpty, "a labelled place does not learn from coordinates")
    }

    @Test func gymRun() throws {
        let s = try decode(
            #"""
            {"user": "u-7", "at": "2026-03-16T18:30:00+01:00",
             "location": {"lat": 52.52, "lon": 13.405, "speed_mps": 3.2},
             "calendar": {"events": [
                {"title": "Dinner with Sam", "start": "2026-03-16T20:00:00+01:00"},
                {"title": "Leg day", "start": "2026-03-16T18:00:00+01:00", "end": "2026-03-16T19:00:00+01:00"}]},
             "bluetooth": {"devices": [{"kind": "watch"}, {"name": "AirPods", "kind": "headphones"}, {"kind": "watch"}]},
             "motion": {"activity": "running", "steps_per_min": 165, "heart_rate_bpm": 150},
             "audio": {"route": "headphones", "volume": 0.7}}
            """#)
        var places = PlaceBook()
        let v = extractor.extract(s, places: &places)
        var expected = timeSlots(hour: 18.5, weekday: 0)  // Monday
        expected["movement.speed"] = 0.3864431602543048
        expected["movement.moving"] = 1
        expected.merge(oneHot("place", placeSlotNames, hot: "p0")) { $1 }  // pl-1, the user's first place
        expected.merge(oneHot("calendar", FeatureLayout.calendarCategories, hot: "workout")) { $1 }
        expected["calendar.busy"] = 1
        expected["calendar.next_soon"] = exp(-1.5)  // dinner in 90 minutes
        expected.merge(oneHot("bluetooth", FeatureLayout.bluetoothKinds, hot: nil)) { $1 }
        expected["bluetooth.watch"] = 1
        expected["bluetooth.headphones"] = 1
        expected.merge(oneHot("motion", FeatureLayout.activities, hot: "running")) { $1 }
        expected["motion.cadence"] = 165.0 / 180
        expected["motion.hr_zone"] = 100.0 / 130
        expected.merge(oneHot("audio", FeatureLayout.audioRoutes, hot: "headphones")) { $1 }
        expected["audio.volume"] = 0.7
        expectSlots(v, expected)
        #expect(places.places == [LearnedPlace(id: "pl-1", lat: 52.52, lon: 13.405, count: 1)])
    }

    @Test func carCommute() throws {
        let s = try decode(
            #"""
            {"user": "u-3", "at": "2026-03-17T08:05:00-05:00",
             "location": {"lat": 41.88, "lon": -87.63, "speed_mps": 25, "place": " Car "},
             "weather": {"temp_c": -5, "wind_mps": 30, "condition": "snow"},
             "calendar": {"events": []},
             "bluetooth": {"devices": [{"name": "Ford SYNC", "kind": "car"}]},
             "motion": {"activity": "automotive"},
             "audio": {"route": "car", "volume": 0.6},
             "tags": {"traffic": "heavy", "Road": "Highway"}}
            """#)
        var places = PlaceBook()
        let v = extractor.extract(s, places: &places)
        var expected = timeSlots(hour: 8 + 5.0 / 60, weekday: 1)  // Tuesday
        expected["movement.speed"] = 0.8773484072743342
        expected["movement.moving"] = 1
        expected.merge(oneHot("place", FeatureLayout.placeCategories, hot: "transit")) { $1 }
        expected.merge(oneHot("place", placeSlotNames, hot: "p0")) { $1 }  // label:car, the user's first place
        expected["weather.temp"] = 0.25
        expected["weather.wind"] = 1
        expected.merge(oneHot("weather", FeatureLayout.weatherGroups.map { "cond_\($0)" }, hot: "cond_snow")) { $1 }
        expected.merge(oneHot("calendar", FeatureLayout.calendarCategories, hot: nil)) { $1 }  // free
        expected["calendar.busy"] = 0
        expected["calendar.next_soon"] = 0
        expected.merge(oneHot("bluetooth", FeatureLayout.bluetoothKinds, hot: "car")) { $1 }
        expected.merge(oneHot("motion", FeatureLayout.activities, hot: "automotive")) { $1 }
        expected.merge(oneHot("audio", FeatureLayout.audioRoutes, hot: "car")) { $1 }
        expected["audio.volume"] = 0.6
        // One slot per tag, in the order the snapshot lists them (a dictionary: either order).
        let traffic = v.value("tags.t0") == 1 && v.value("tags.t1") == 1
        #expect(traffic)
        expected["tags.t0"] = 1
        expected["tags.t1"] = 1
        expectSlots(v, expected)
    }

    @Test func missingSectionsLeaveMasksAtZero() throws {
        let s = try decode(snapshotJSON(#""location": {}, "weather": {}, "motion": {}, "audio": {}, "tags": {}"#))
        var places = PlaceBook()
        let v = extractor.extract(s, places: &places)
        expectSlots(v, timeSlots(hour: 7 + 42.0 / 60 + 10.0 / 3600, weekday: 5))
        let bare = try decode(snapshotJSON())
        #expect(extractor.extract(bare, places: &places) == v)
    }

    @Test func daylightNeedsBothSunriseAndSunset() throws {
        var places = PlaceBook()
        let night = try decode(snapshotJSON(#""weather": {"sunrise": "2026-03-14T07:58:00+01:00", "sunset": "2026-03-14T18:49:00+01:00"}"#))
        #expect(extractor.extract(night, places: &places).value("time.daylight") == 0)
        let onlySunrise = try decode(snapshotJSON(#""weather": {"sunrise": "2026-03-14T06:58:00+01:00"}"#))
        #expect(extractor.extract(onlySunrise, places: &places).value("time.daylight") == nil)
    }

    @Test(
        arguments: [
            // (at, events JSON, category, busy, next_soon)
            ("2026-03-14T10:00:00Z", #"[{"title": "Standup", "start": "2026-03-14T09:30:00Z"}]"#, "work", 1.0, 0.0),
            ("2026-03-14T10:30:00Z", #"[{"title": "Standup", "start": "2026-03-14T09:30:00Z"}]"#, nil, 0, 0),  // ended at 10:30
            ("2026-03-14T10:00:00Z", #"[{"title": "Conference", "start": "2026-03-14T00:00:00Z", "all_day": true}]"#, "work", 0, 0),
            (
                "2026-03-14T10:00:00Z",
                #"[{"title": "Trip", "start": "2026-03-14T00:00:00Z", "end": "2026-03-16T00:00:00Z", "all_day": true}, "#
                    + #"{"start": "2026-03-14T09:00:00Z", "end": "2026-03-14T11:00:00Z", "category": "rest"}]"#, "rest", 1, 0
            ),
            (
                "2026-03-14T10:00:00Z",
                #"[{"title": "Yoga", "start": "2026-03-14T09:00:00Z", "end": "2026-03-14T12:00:00Z"}, "#
                    + #"{"title": "Lecture", "start": "2026-03-14T09:45:00Z", "end": "2026-03-14T11:00:00Z"}, "#
                    + #"{"title": "Lunch", "start": "2026-03-14T11:00:00Z"}]"#, "study", 1, exp(-1.0)
            ),
            ("2026-03-14T10:00:00Z", #"[{"start": "2026-03-14T10:30:00Z"}]"#, nil, 0, exp(-0.5)),
            ("2026-03-14T10:00:00Z", #"[{"start": "2026-03-14T09:30:00Z"}]"#, "other", 1, 0),  // no title, no category
            ("2026-03-14T10:00:00+02:00", #"[{"title": "Nap", "start": "2026-03-14T07:30:00Z", "end": "2026-03-14T08:30:00Z"}]"#, "rest", 1, 0)
        ] as [(String, String, String?, Double, Double)])
    func calendarSlots(at: String, events: String, category: String?, busy: Double, nextSoon: Double) throws {
        let s = try decode(#"{"user": "u", "at": "\#(at)", "calendar": {"events": \#(events)}}"#)
        var places = PlaceBook()
        let v = extractor.extract(s, places: &places)
        for c in FeatureLayout.calendarCategories {
            #expect(v.value("calendar.\(c)") == (c == category ? 1 : 0), "calendar.\(c)")
        }
        #expect(v.value("calendar.busy") == Float(busy))
        #expect(abs(Double(v.value("calendar.next_soon")!) - nextSoon) < 1e-6)
    }

    @Test(arguments: [
        (0.0, 0.0, 0.0), (0.49, 0.107383, 0.0), (0.5, 0.109185, 1.0), (40, 1, 1), (150, 1, 1)
    ])
    func movement(speed: Double, value: Double, moving: Double) throws {
        let s = Snapshot(user: "u", at: ts("2026-03-14T10:00:00Z"), location: Location(speedMps: speed))
        var places = PlaceBook()
        let v = extractor.extract(s, places: &places)
        #expect(abs(Double(v.value("movement.speed")!) - value) < 1e-4)
        #expect(v.value("movement.moving") == Float(moving))
        #expect(v.value("place.p0") == nil, "speed alone is no place")
    }

    @Test func clampsExtremes() {
        let s = Snapshot(
            user: "u", at: ts("2026-03-14T10:00:00Z"),
            weather: Weather(tempC: -90, windMps: 120, cloudPct: 100, humidityPct: 0, precipMmH: 500),
            motion: Motion(stepsPerMin: 400, stepsToday: 200_000, heartRateBpm: 20))
        var places = PlaceBook()
        let v = extractor.extract(s, places: &places)
        #expect(v.value("weather.temp") == 0)
        #expect(v.value("weather.wind") == 1)
        #expect(v.value("weather.precip") == 1)
        #expect(v.value("weather.humidity") == 0)
        #expect(v.value("motion.cadence") == 1)
        #expect(v.value("motion.steps_today") == 1)
        #expect(v.value("motion.hr_zone") == 0)
        #expect(v.value("weather.cond_clear") == nil)
    }

    @Test(arguments: [
        (WeatherCondition.clear, "clear"), (.clouds, "cloudy"), (.rain, "wet"), (.drizzle, "wet"), (.thunderstorm, "wet"),
        (.snow, "snow"), (.fog, "murky"), (.mist, "murky"), (.haze, "murky"), (.dust, "murky"), (.other, "other")
    ])
    func weatherConditionGroups(condition: WeatherCondition, group: String) {
        let s = Snapshot(user: "u", at: ts("2026-03-14T10:00:00Z"), weather: Weather(condition: condition))
        var places = PlaceBook()
        let v = extractor.extract(s, places: &places)
        for g in FeatureLayout.weatherGroups {
            #expect(v.value("weather.cond_\(g)") == (g == group ? 1 : 0))
        }
        #expect(v.value("weather.temp") == nil)
    }

    @Test func placeKeysAndLearning() {
        var places = PlaceBook()
        var vocabulary = FeatureVocabulary()
        func learned(_ location: Location) -> Int? {
            let v = extractor.extract(
                Snapshot(user: "u", at: ts("2026-03-14T10:00:00Z"), location: location), places: &places, vocabulary: &vocabulary)
            return placeSlotNames.indices.first { v.value("place.p\($0)") == 1 }
        }
        // Labels normalise: case, spaces and diacritics do not change the key.
        #expect(learned(Location(place: "  STADTBIBLIOTHEK ")) == 0)
        #expect(learned(Location(place: "Stadtbibliothek")) == 0)
        #expect(places.places.isEmpty)
        // Coordinates without a label learn places, each its own slot in the order first seen.
        #expect(learned(Location(lat: 42.0267, lon: -93.6465)) == 1)  // pl-1
        #expect(learned(Location(lat: 42.0270, lon: -93.6462)) == 1)  // ~40 m away: pl-1
        #expect(learned(Location(lat: 42.0400, lon: -93.6465)) == 2)  // ~1.5 km away: pl-2
        #expect(places.places.map(\.id) == ["pl-1", "pl-2"])
        #expect(places.places[0].count == 2)
        #expect(vocabulary.places == ["label:stadtbibliothek", "pl-1", "pl-2"])
        #expect(vocabulary.displayName(slot: FeatureLayout.require("place.p0")) == "place: stadtbibliothek")
        #expect(vocabulary.displayName(slot: FeatureLayout.require("place.p2")) == "place #2")
        // A label with no letters or digits counts as no label.
        #expect(learned(Location(lat: 42.0400, lon: -93.6465, place: " – ")) == 2)
        #expect(places.places[1].count == 2)
        // The label's category is unknown words → other.
        let v = extractor.extract(
            Snapshot(user: "u", at: ts("2026-03-14T10:00:00Z"), location: Location(place: "Grandma's")), places: &places)
        #expect(v.value("place.other") == 1)
        #expect(v.value("place.home") == 0)
    }

    @Test func tagSlotsAreTheUsersOwnAndMissingKeysStayMissing() {
        var places = PlaceBook()
        var vocabulary = FeatureVocabulary()
        func extract(_ tags: [String: String]) -> FeatureVector {
            extractor.extract(Snapshot(user: "u", at: ts("2026-03-14T10:00:00Z"), tags: tags), places: &places, vocabulary: &vocabulary)
        }
        let a = extract(["wifi": "none"])
        #expect(a.value("tags.t0") == 1)
        let b = extract(["WiFi": "Home", "noise": "loud"])
        // wifi=home takes the next slot; wifi=none is present and 0 (the key is there), noise=loud gets a slot.
        #expect(vocabulary.tags.count == 3)
        let home = vocabulary.tags.firstIndex(of: "wifi=home")!, loud = vocabulary.tags.firstIndex(of: "noise=loud")!
        #expect(b.value("tags.t0") == 0)
        #expect(b.value("tags.t\(home)") == 1)
        #expect(b.value("tags.t\(loud)") == 1)
        // A snapshot without the noise key: the noise slot is missing, not 0 (missing is not evidence).
        let c = extract(["wifi": "none"])
        #expect(c.value("tags.t\(loud)") == nil)
        #expect(c.value("tags.t\(home)") == 0)
        #expect(vocabulary.displayName(slot: FeatureLayout.require("tags.t0")) == "tag wifi = none")
        // When every slot is taken, a new value gets none but its key still marks the known values.
        for k in 0..<FeatureLayout.tagSlots { _ = extract(["k\(k)": "v"]) }
        #expect(vocabulary.tags.count == FeatureLayout.tagSlots)
        let d = extract(["wifi": "office"])
        #expect(d.value("tags.t0") == 0)
        #expect(d.value("tags.t\(home)") == 0)
    }

    @Test func emptyBluetoothIsPresentAndZero() {
        let s = Snapshot(user: "u", at: ts("2026-03-14T10:00:00Z"), bluetooth: Bluetooth(devices: []))
        var places = PlaceBook()
        let v = extractor.extract(s, places: &places)
        for k in FeatureLayout.bluetoothKinds { #expect(v.value("bluetooth.\(k)") == 0) }
    }

    @Test func layoutMatchesTheEnums() {
        #expect(PlaceCategory.allCases.map(\.rawValue) == FeatureLayout.placeCategories)
        #expect(EventCategory.allCases.map(\.rawValue) == FeatureLayout.calendarCategories)
        #expect(DeviceKind.allCases.map(\.rawValue) == FeatureLayout.bluetoothKinds)
        #expect(Activity.allCases.map(\.rawValue) == FeatureLayout.activities)
        #expect(AudioRoute.allCases.map(\.rawValue) == FeatureLayout.audioRoutes)
        #expect(PlaceCategory.allCases.map(\.ordinal) == Array(0..<PlaceCategory.allCases.count))
        #expect(EventCategory.allCases.map(\.ordinal) == Array(0..<EventCategory.allCases.count))
        #expect(DeviceKind.allCases.map(\.ordinal) == Array(0..<DeviceKind.allCases.count))
        #expect(Activity.allCases.map(\.ordinal) == Array(0..<Activity.allCases.count))
        #expect(AudioRoute.allCases.map(\.ordinal) == Array(0..<AudioRoute.allCases.count))
        for c in WeatherCondition.allCases {
            #expect(FeatureLayout.weatherGroups.firstIndex(of: c.group) == c.groupOrdinal)
        }
        // One-hot groups are contiguous, which the extractor relies on.
        let groups: [(String, [String])] = [
            ("place", FeatureLayout.placeCategories), ("place", placeSlotNames),
            ("weather", FeatureLayout.weatherGroups.map { "cond_\($0)" }), ("calendar", FeatureLayout.calendarCategories),
            ("bluetooth", FeatureLayout.bluetoothKinds), ("motion", FeatureLayout.activities),
            ("audio", FeatureLayout.audioRoutes), ("tags", tagSlotNames)
        ]
        for (prefix, names) in groups {
            let first = FeatureLayout.require("\(prefix).\(names[0])")
            for (k, n) in names.enumerated() { #expect(FeatureLayout.index(of: "\(prefix).\(n)") == first + k) }
        }
    }

    @Test func extractionIsDeterministic() throws {
        let s = try decode(formatsExample)
        var a = PlaceBook()
        var b = PlaceBook()
        #expect(extractor.extract(s, places: &a) == extractor.extract(s, places: &b))
    }
}
