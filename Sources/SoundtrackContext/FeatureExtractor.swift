import Foundation

/// Turns a ``Snapshot`` into a ``FeatureVector`` of the current ``FeatureLayout``.
///
/// A slot is marked present only when the data it comes from was in the snapshot: a
/// missing section leaves its slots at value 0 and mask 0. What each slot holds:
///
/// | slots | value | present when |
/// | --- | --- | --- |
/// | `time.tod_sin/cos` | sin/cos(2π · local hour / 24) | always |
/// | `time.dow_sin/cos` | sin/cos(2π · weekday / 7), Monday = 0 | always |
/// | `time.weekend` | 1 on Saturday and Sunday | always |
/// | `time.daylight` | 1 when sunrise ≤ at < sunset | both sunrise and sunset given |
/// | `movement.speed` | clamp(log1p(v) / log1p(40), 0, 1) | `speed_mps` given |
/// | `movement.moving` | 1 when v ≥ 0.5 m/s | `speed_mps` given |
/// | `place.<category>` | one-hot of ``PlaceClassifier`` | a label given |
/// | `place.h0…h7` | one-hot of fnv1a(place key) % 8 | a label or coordinates given |
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
/// | `tags.h0…h15` | 1 at fnv1a(lowercased "key=value") % 16 for each tag | at least one tag |
///
/// The place key is `label:<normalised label>` when the snapshot has a place label (one
/// with letters or digits), else the id of the learned place its coordinates resolve to in
/// the user's ``PlaceBook`` (which learns from them). The current event is a timed event
/// with start ≤ at < end (a missing end means start + 60 minutes), the latest-starting one
/// if several overlap; else an all-day event covering `at` (a missing end means start + 24 h).
///
/// ```swift
/// var places = PlaceBook()
/// let v = FeatureExtractor().extract(snapshot, places: &places)
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
    /// - Returns: a vector of ``FeatureLayout/dimension`` slots with its presence mask.
    public func extract(_ s: Snapshot, places: inout PlaceBook) -> FeatureVector {
        var v = FeatureVector()
        addTime(s, to: &v)
        addLocation(s.location, to: &v, places: &places)
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
        if let tags = s.tags, !tags.isEmpty {
            for k in 0..<FeatureLayout.tagSlots { v.set(Slots.tags + k, 0) }
            for (key, value) in tags {
                v.values[Slots.tags + FeatureExtractor.tagSlot(key: key, value: value)] = 1
            }
        }
        return v
    }

    /// The `tags.h*` slot (0..<16) a tag sets: fnv1a of lower-cased `key=value`, modulo 16.
    ///
    /// - Parameters:
    ///   - key: the tag's name.
    ///   - value: the tag's value.
    /// - Returns: the offset of the slot within the `tags` group.
    public static func tagSlot(key: String, value: String) -> Int {
        let hash: UInt64
        if let h = asciiLowercasedHash(key, StableHash.fnv1a("")).flatMap({ asciiLowercasedHash("=", $0) })
            .flatMap({ asciiLowercasedHash(value, $0) }) {
            hash = h  // the same as hashing the lower-cased text, without building it
        } else {
            hash = StableHash.fnv1a("\(key)=\(value)".lowercased())
        }
        return Int(hash % UInt64(FeatureLayout.tagSlots))
    }

    /// FNV-1a of the ASCII-lower-cased bytes of `s` continuing from `seed`; `nil` if `s` is not ASCII.
    static func asciiLowercasedHash(_ s: String, _ seed: UInt64) -> UInt64? {
        var h = seed
        for var b in s.utf8 {
            guard b < 0x80 else { return nil }
            if b >= 0x41, b <= 0x5A { b += 0x20 }
            h ^= UInt64(b)
            h = h &* 0x100_0000_01b3
        }
        return h
    }

    static func slot(_ placeHash: UInt64) -> Int {
        Int(placeHash % UInt64(FeatureLayout.learnedPlaceSlots))
    }

    /// fnv1a of `label:<tokens joined by spaces>`, without building the string.
    static func labelHash(_ tokens: [String]) -> UInt64 {
        var h = StableHash.fnv1a("label:")
        for (k, t) in tokens.enumerated() {
            if k > 0 { h = StableHash.fnv1a(" ", seed: h) }
            h = StableHash.fnv1a(t, seed: h)
        }
        return h
    }

    // MARK: Sections

    private func addTime(_ s: Snapshot, to v: inout FeatureVector) {
        let hourAngle = 2 * Double.pi * s.at.localHour / 24
        let weekday = s.at.localWeekday
        let dayAngle = 2 * Double.pi * Double(weekday) / 7
        v.set(Slots.todSin, Float(sin(hourAngle)))
        v.set(Slots.todCos, Float(cos(hourAngle)))
        v.set(Slots.dowSin, Float(sin(dayAngle)))
        v.set(Slots.dowCos, Float(cos(dayAngle)))
        v.set(Slots.weekend, weekday >= 5 ? 1 : 0)
    }

    private func addLocation(_ location: Location?, to v: inout FeatureVector, places: inout PlaceBook) {
        guard let location else { return }
        if let speed = location.speedMps {
            v.set(Slots.speed, Float(clamp(log1p(speed) / log1p(40))))
            v.set(Slots.moving, speed >= 0.5 ? 1 : 0)
        }
        var placeHash: UInt64? = nil
        if let label = location.place {
            let tokens = TextNormalizer.tokens(label)
            if !tokens.isEmpty {
                let category = PlaceClassifier.classify(tokens: tokens)
                setOneHot(&v, base: Slots.place, count: FeatureLayout.placeCategories.count, hot: category.ordinal)
                placeHash = FeatureExtractor.labelHash(tokens)
            }
        }
        if placeHash == nil, let lat = location.lat, let lon = location.lon {
            placeHash = StableHash.fnv1a(places.resolve(lat: lat, lon: lon, radiusMeters: placeRadiusMeters))
        }
        if let placeHash {
            setOneHot(&v, base: Slots.learnedPlace, count: FeatureLayout.learnedPlaceSlots, hot: FeatureExtractor.slot(placeHash))
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
    static let place = FeatureLayout.require("place.\(FeatureLayout.placeCategories[0])")
    static let learnedPlace = FeatureLayout.require("place.h0")
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
    static let volume = FeatureLayout.require("audio.volume")
    static let tags = FeatureLayout.require("tags.h0")

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
