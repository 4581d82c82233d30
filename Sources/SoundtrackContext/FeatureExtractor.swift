import Foundation

/// Turns a ``Snapshot`` into a ``FeatureVector`` of the current ``FeatureLayout``.
///
/// A slot is marked present only when the data it comes from was in the snapshot: a
/// missing section leaves its slots at value 0 and mask 0. What each slot holds:
///
/// | slots | value | present when |
/// | --- | --- | --- |
/// | `time.tod_sin/cos` | sin/cos(2π · local hour / 24) | unless ``Snapshot/unknownTime`` has `.hour` |
/// | `time.dow_sin/cos` | sin/cos(2π · weekday / 7), Monday = 0 | unless ``Snapshot/unknownTime`` has `.day` |
/// | `time.weekend` | 1 on Saturday and Sunday | as the day |
/// | `time.daylight` | 1 when sunrise ≤ at < sunset | both sunrise and sunset given |
/// | `movement.speed` | clamp(log1p(v) / log1p(40), 0, 1) | `speed_mps` given |
/// | `movement.moving` | 1 when v ≥ 0.5 m/s | `speed_mps` given |
/// | `place.<category>` | one-hot of ``PlaceClassifier`` | a label given |
/// | `location.accuracy` | clamp(log10(accuracy_m) / 3, 0, 1) | `accuracy_m` given |
/// | `place.p0…p7` | one-hot of the place's slot in the user's ``FeatureVocabulary`` | a label or coordinates given |
/// | `weather.temp` | clamp((t + 20) / 60, 0, 1) | `temp_c` given |
/// | `weather.wind` | min(w / 20, 1) | `wind_mps` given |
/// | `weather.clouds`, `humidity` | percent / 100 | each given |
/// | `weather.precip` | clamp(log1p(p) / log1p(20), 0, 1) | `precip_mm_h` given |
/// | `weather.cond_*` | one-hot of the condition group | `condition` given |
/// | `calendar.<category>` | one-hot of the current event's category | the section given |
/// | `calendar.busy` | 1 when a timed event is current | the section given |
/// | `calendar.next_soon` | exp(−minutes to the next start / 60), 0 if none | the section given |
/// | `bluetooth.<kind>` | multi-hot of connected kinds | the section given |
/// | `motion.<activity>` | one-hot | `activity` given |
/// | `motion.cadence` | clamp(steps_per_min / 180, 0, 1) | given |
/// | `motion.hr_zone` | clamp((bpm − 50) / 130, 0, 1) | given |
/// | `motion.steps_today` | clamp(steps / 15000, 0, 1) | given |
/// | `audio.<route>` | one-hot | `route` given |
/// | `audio.volume` | the volume | given |
/// | `tags.t0…t31` | 1 on the slot of each `key=value` in the user's ``FeatureVocabulary``, 0 on the other values of the same key | the key given |
///
/// The place key is `label:<normalised label>` when the snapshot has a place label (one
/// with letters or digits), else the id of the learned place its coordinates resolve to in
/// the user's ``PlaceBook`` (which learns from them). The current event is a timed event
/// with start ≤ at < end (a missing end means start + 60 minutes), the latest-starting one
/// if several overlap; else an all-day event covering `at` (a missing end means start + 24 h).
///
/// ```swift
/// var places = PlaceBook()
/// var vocabulary = FeatureVocabulary()
/// let v = FeatureExtractor().extract(snapshot, places: &places, vocabulary: &vocabulary)
/// v.value("calendar.study")  // 1, or nil when the snapshot had no calendar
/// ```
public struct FeatureExtractor: Sendable {
    /// How far from a learned place's centre a point may be to count as that place, in metres.
    public var placeRadiusMeters: Double

    /// An extractor.
    ///
    /// - Parameter placeRadiusMeters: the radius of learned places, in metres.
    public init(placeRadiusMeters: Double = 150) {
        self.placeRadiusMeters = placeRadiusMeters
    }

    /// The features of a snapshot.
    ///
    /// - Parameters:
    ///   - s: a validated snapshot.
    ///   - places: the snapshot's user's learned places; a snapshot with coordinates and no
    ///     place label adds its point to them.
    ///   - vocabulary: what the user's per-user slots (`place.p*`, `tags.t*`) stand for; a place
    ///     or tag seen for the first time takes the next free slot.
    /// - Returns: a vector of ``FeatureLayout/dimension`` slots with its presence mask.
    public func extract(_ s: Snapshot, places: inout PlaceBook, vocabulary: inout FeatureVocabulary) -> FeatureVector {
        var v = FeatureVector()
        addTime(s, to: &v)
        addLocation(s.location, to: &v, places: &places, vocabulary: &vocabulary)
        if let w = s.weather { addWeather(w, at: s.at, to: &v) }
        if let c = s.calendar { addCalendar(c, at: s.at, to: &v) }
        if let b = s.bluetooth {
            var hot: UInt32 = 0
            for d in b.devices { hot |= 1 << UInt32(d.kind.ordinal) }
            for k in 0..<FeatureLayout.bluetoothKinds.count { v.set(Slots.bluetooth + k, hot & (1 << UInt32(k)) != 0 ? 1 : 0) }
        }
        if let m = s.motion {
            if let a = m.activity { setOneHot(&v, base: Slots.activity, count: FeatureLayout.activities.count, hot: a.ordinal) }
            if let x = m.stepsPerMin { v.set(Slots.cadence, Float(clamp(x / 180))) }
            if let x = m.heartRateBpm { v.set(Slots.hrZone, Float(clamp((x - 50) / 130))) }
            if let x = m.stepsToday { v.set(Slots.stepsToday, Float(clamp(x / 15_000))) }
        }
        if let a = s.audio {
            if let r = a.route { setOneHot(&v, base: Slots.audioRoute, count: FeatureLayout.audioRoutes.count, hot: r.ordinal) }
            if let x = a.volume { v.set(Slots.volume, Float(x)) }
        }
        if let tags = s.tags {
            // A key present makes every known value of that key present (value 0 unless it is the
            // snapshot's); tags of keys the snapshot does not have stay missing.
            for (key, value) in tags {
                let hot = vocabulary.tagSlot(key: key, value: value, adding: true)
                vocabulary.forEachTagSlot(key: key) { k in v.set(Slots.tags + k, k == hot ? 1 : 0) }
            }
        }
        return v
    }

    /// The features of a snapshot seen alone: with an empty place book and vocabulary (tests,
    /// tools that look at one snapshot without a user's state).
    public func extract(_ s: Snapshot) -> FeatureVector {
        var places = PlaceBook()
        var vocabulary = FeatureVocabulary()
        return extract(s, places: &places, vocabulary: &vocabulary)
    }

    // MARK: Sections

    private func addTime(_ s: Snapshot, to v: inout FeatureVector) {
        if !s.unknownTime.contains(.hour) {
            let hourAngle = 2 * Double.pi * s.at.localHour / 24
            v.set(Slots.todSin, Float(sin(hourAngle)))
            v.set(Slots.todCos, Float(cos(hourAngle)))
        }
        if !s.unknownTime.contains(.day) {
            let weekday = s.at.localWeekday
            let dayAngle = 2 * Double.pi * Double(weekday) / 7
            v.set(Slots.dowSin, Float(sin(dayAngle)))
            v.set(Slots.dowCos, Float(cos(dayAngle)))
            v.set(Slots.weekend, weekday >= 5 ? 1 : 0)
        }
    }

    private func addLocation(_ location: Location?, to v: inout FeatureVector, places: inout PlaceBook, vocabulary: inout FeatureVocabulary) {
        guard let location else { return }
        if let speed = location.speedMps {
            v.set(Slots.speed, Float(clamp(log1p(speed) / log1p(40))))
            v.set(Slots.moving, speed >= 0.5 ? 1 : 0)
        }
        if let accuracy = location.accuracyM {
            // 1 m → 0, 1 km and more → 1: satellite positioning outdoors is a few metres, wifi or
            // cell positioning indoors tens to hundreds.
            v.set(Slots.accuracy, Float(clamp(log10(max(accuracy, 1)) / 3)))
        }
        var placeKey: String? = nil
        if let label = location.place {
            let tokens = TextNormalizer.tokens(label)
            if !tokens.isEmpty {
                let category = PlaceClassifier.classify(tokens: tokens)
                setOneHot(&v, base: Slots.place, count: FeatureLayout.placeCategories.count, hot: category.ordinal)
                placeKey = "label:" + tokens.joined(separator: " ")
            }
        }
        if let lat = location.lat, let lon = location.lon {
            if let label = placeKey?.dropFirst(6) {
                // A label sent at a learned place without a name names it (the features stay the label's).
                if let id = places.nameNearest(lat: lat, lon: lon, within: placeRadiusMeters, String(label)) {
                    vocabulary.placeNames[id] = String(label)
                }
            } else {
                placeKey = places.resolve(lat: lat, lon: lon, radiusMeters: placeRadiusMeters, reserved: vocabulary.places)
            }
        }
        if let placeKey {
            let hot = vocabulary.placeSlot(placeKey, adding: true)
            setOneHot(&v, base: Slots.learnedPlace, count: FeatureLayout.learnedPlaceSlots, hot: hot)
        }
    }

    private func addWeather(_ w: Weather, at: Timestamp, to v: inout FeatureVector) {
        if let sunrise = w.sunrise, let sunset = w.sunset {
            v.set(Slots.daylight, sunrise.date <= at.date && at.date < sunset.date ? 1 : 0)
        }
        if let t = w.tempC { v.set(Slots.temp, Float(clamp((t + 20) / 60))) }
        if let x = w.windMps { v.set(Slots.wind, Float(min(x / 20, 1))) }
        if let x = w.cloudPct { v.set(Slots.clouds, Float(x / 100)) }
        if let x = w.humidityPct { v.set(Slots.humidity, Float(x / 100)) }
        if let x = w.precipMmH { v.set(Slots.precip, Float(clamp(log1p(x) / log1p(20)))) }
        if let c = w.condition {
            setOneHot(&v, base: Slots.weatherCondition, count: FeatureLayout.weatherGroups.count, hot: c.groupOrdinal)
        }
    }

    private func addCalendar(_ c: CalendarInfo, at: Timestamp, to v: inout FeatureVector) {
        let now = at.date
        var current: CalendarEvent? = nil
        var nextStart: Date? = nil
        for e in c.events {
            let start = e.start.date
            if start > now, nextStart.map({ start < $0 }) ?? true { nextStart = start }
            guard !e.allDay else { continue }
            let end = e.end?.date ?? start.addingTimeInterval(3600)
            if start <= now, now < end, current.map({ start > $0.start.date }) ?? true { current = e }
        }
        let busy = current != nil
        if current == nil {
            for e in c.events where e.allDay {
                let start = e.start.date
                let end = e.end.flatMap { $0.date > start ? $0.date : nil } ?? start.addingTimeInterval(86_400)
                if start <= now, now < end {
                    current = e
                    break
                }
            }
        }
        let category = current.map { $0.category ?? CalendarClassifier.classify($0.title ?? "") }
        setOneHot(&v, base: Slots.calendar, count: FeatureLayout.calendarCategories.count, hot: category?.ordinal)
        v.set(Slots.busy, busy ? 1 : 0)
        let soon = nextStart.map { exp(-$0.timeIntervalSince(now) / 60 / 60) } ?? 0
        v.set(Slots.nextSoon, Float(soon))
    }

    private func setOneHot(_ v: inout FeatureVector, base: Int, count: Int, hot: Int?) {
        for k in 0..<count { v.set(base + k, k == hot ? 1 : 0) }
    }
}

@inline(__always)
private func clamp(_ x: Double) -> Double { min(max(x, 0), 1) }

/// Slot indices, looked up once by name.
enum Slots {
    static let todSin = FeatureLayout.require("time.tod_sin")
    static let todCos = FeatureLayout.require("time.tod_cos")
    static let dowSin = FeatureLayout.require("time.dow_sin")
    static let dowCos = FeatureLayout.require("time.dow_cos")
    static let weekend = FeatureLayout.require("time.weekend")
    static let daylight = FeatureLayout.require("time.daylight")
    static let speed = FeatureLayout.require("movement.speed")
    static let moving = FeatureLayout.require("movement.moving")
    static let accuracy = FeatureLayout.require("location.accuracy")
    static let place = FeatureLayout.require("place.\(FeatureLayout.placeCategories[0])")
    static let learnedPlace = FeatureLayout.require("place.p0")
    static let temp = FeatureLayout.require("weather.temp")
    static let wind = FeatureLayout.require("weather.wind")
    static let clouds = FeatureLayout.require("weather.clouds")
    static let humidity = FeatureLayout.require("weather.humidity")
    static let precip = FeatureLayout.require("weather.precip")
    static let weatherCondition = FeatureLayout.require("weather.cond_\(FeatureLayout.weatherGroups[0])")
    static let calendar = FeatureLayout.require("calendar.\(FeatureLayout.calendarCategories[0])")
    static let busy = FeatureLayout.require("calendar.busy")
    static let nextSoon = FeatureLayout.require("calendar.next_soon")
    static let bluetooth = FeatureLayout.require("bluetooth.\(FeatureLayout.bluetoothKinds[0])")
    static let activity = FeatureLayout.require("motion.\(FeatureLayout.activities[0])")
    static let cadence = FeatureLayout.require("motion.cadence")
    static let hrZone = FeatureLayout.require("motion.hr_zone")
    static let stepsToday = FeatureLayout.require("motion.steps_today")
    static let audioRoute = FeatureLayout.require("audio.\(FeatureLayout.audioRoutes[0])")
    static let volume = FeatureLayout.volumeSlot
    static let tags = FeatureLayout.require("tags.t0")

}

// Positions of enum cases within their slot lists. The enums declare their cases in the
// order of the FeatureLayout lists (a test checks), so a case's position is its slot offset.

extension PlaceCategory {
    var ordinal: Int {
        switch self {
        case .home: 0
        case .work: 1
        case .school: 2
        case .library: 3
        case .gym: 4
        case .cafe: 5
        case .outdoors: 6
        case .shop: 7
        case .transit: 8
        case .other: 9
        }
    }
}

extension EventCategory {
    var ordinal: Int {
        switch self {
        case .workout: 0
        case .study: 1
        case .work: 2
        case .social: 3
        case .travel: 4
        case .rest: 5
        case .other: 6
        }
    }
}

extension DeviceKind {
    var ordinal: Int {
        switch self {
        case .car: 0
        case .headphones: 1
        case .speaker: 2
        case .watch: 3
        case .other: 4
        }
    }
}

extension Activity {
    var ordinal: Int {
        switch self {
        case .stationary: 0
        case .walking: 1
        case .running: 2
        case .cycling: 3
        case .automotive: 4
        case .unknown: 5
        }
    }
}

extension AudioRoute {
    var ordinal: Int {
        switch self {
        case .speaker: 0
        case .headphones: 1
        case .bluetooth: 2
        case .car: 3
        case .airplay: 4
        case .other: 5
        }
    }
}

extension WeatherCondition {
    /// The `weather.cond_*` group: clear, cloudy, wet, snow, murky or other.
    var group: String {
        switch self {
        case .clear: "clear"
        case .clouds: "cloudy"
        case .rain, .drizzle, .thunderstorm: "wet"
        case .snow: "snow"
        case .fog, .mist, .haze, .dust: "murky"
        case .other: "other"
        }
    }

    /// The offset of ``group`` within the `weather.cond_*` slots.
    var groupOrdinal: Int {
        switch self {
        case .clear: 0
        case .clouds: 1
        case .rain, .drizzle, .thunderstorm: 2
        case .snow: 3
        case .fog, .mist, .haze, .dust: 4
        case .other: 5
        }
    }
}
