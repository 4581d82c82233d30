import Foundation

/// What a phone knows about its user's context at one moment: the input of a pick.
///
/// Only ``user`` and ``at`` are required. Every section is optional because a phone may
/// deny any permission, and a missing section is `nil`, never zero: it must not count as
/// evidence. Decoding validates every field (see ``init(json:path:strict:)`` for the rules).
///
/// ```swift
/// let s = try Snapshot.decode(Data(#"{"user":"u-1","at":"2026-03-14T07:42:10+01:00"}"#.utf8))
/// s.weather == nil  // true: the section was not sent
/// ```
public struct Snapshot: Sendable, Equatable {
    /// The user's id: a non-empty string of at most 128 characters without control characters.
    public var user: String
    /// When the snapshot was taken, in the phone's offset.
    public var at: Timestamp
    /// Where the phone is.
    public var location: Location?
    /// The weather where the phone is.
    public var weather: Weather?
    /// Calendar events around ``at``.
    public var calendar: CalendarInfo?
    /// Connected Bluetooth devices.
    public var bluetooth: Bluetooth?
    /// Activity and body signals.
    public var motion: Motion?
    /// The audio output.
    public var audio: AudioState?
    /// Any other categorical context, name to value (`mood`, `traffic`…).
    public var tags: [String: String]?
    /// Parts of ``at`` that stand for nothing known (not part of the interchange format: a snapshot
    /// read from JSON always has a known time). Data sets of contextual ratings leave the time of
    /// day or the day unknown for some ratings; their snapshots carry a placeholder `at` and mark
    /// it here, so that the feature extractor leaves those slots missing instead of inventing them.
    public var unknownTime: TimeParts = []

    /// Parts of a snapshot's time.
    public struct TimeParts: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// The time of day.
        public static let hour = TimeParts(rawValue: 1)
        /// The day (of the week).
        public static let day = TimeParts(rawValue: 2)
    }

    /// A snapshot from its parts (not validated; use ``init(json:path:strict:)`` for input).
    public init(
        user: String, at: Timestamp, location: Location? = nil, weather: Weather? = nil,
        calendar: CalendarInfo? = nil, bluetooth: Bluetooth? = nil, motion: Motion? = nil,
        audio: AudioState? = nil, tags: [String: String]? = nil
    ) {
        self.user = user
        self.at = at
        self.location = location
        self.weather = weather
        self.calendar = calendar
        self.bluetooth = bluetooth
        self.motion = motion
        self.audio = audio
        self.tags = tags
    }
}

/// The `location` section: coordinates and/or a place label the app already knows.
public struct Location: Sendable, Equatable {
    /// Latitude in degrees (−90…90); present together with ``lon``.
    public var lat: Double?
    /// Longitude in degrees (−180…180); present together with ``lat``.
    public var lon: Double?
    /// Horizontal accuracy in metres (≥ 0).
    public var accuracyM: Double?
    /// Ground speed in metres per second (0…150).
    public var speedMps: Double?
    /// A label such as `library` or a user-named place.
    public var place: String?

    /// A location from its fields.
    public init(lat: Double? = nil, lon: Double? = nil, accuracyM: Double? = nil, speedMps: Double? = nil, place: String? = nil) {
        self.lat = lat
        self.lon = lon
        self.accuracyM = accuracyM
        self.speedMps = speedMps
        self.place = place
    }
}

/// The `weather` section.
public struct Weather: Sendable, Equatable {
    /// Air temperature in °C (−90…60).
    public var tempC: Double?
    /// Wind speed in m/s (0…120).
    public var windMps: Double?
    /// Cloud cover in percent (0…100).
    public var cloudPct: Double?
    /// Relative humidity in percent (0…100).
    public var humidityPct: Double?
    /// Precipitation in mm per hour (0…500).
    public var precipMmH: Double?
    /// The condition group.
    public var condition: WeatherCondition?
    /// Today's sunrise.
    public var sunrise: Timestamp?
    /// Today's sunset (after ``sunrise``).
    public var sunset: Timestamp?

    /// Weather from its fields.
    public init(
        tempC: Double? = nil, windMps: Double? = nil, cloudPct: Double? = nil, humidityPct: Double? = nil,
        precipMmH: Double? = nil, condition: WeatherCondition? = nil, sunrise: Timestamp? = nil, sunset: Timestamp? = nil
    ) {
        self.tempC = tempC
        self.windMps = windMps
        self.cloudPct = cloudPct
        self.humidityPct = humidityPct
        self.precipMmH = precipMmH
        self.condition = condition
        self.sunrise = sunrise
        self.sunset = sunset
    }
}

/// A weather condition: the OpenWeather main groups, lower-cased.
public enum WeatherCondition: String, Sendable, Equatable, CaseIterable {
    case clear, clouds, rain, drizzle, thunderstorm, snow, fog, mist, haze, dust, other
}

/// The `calendar` section: events around the snapshot's time (current and upcoming).
public struct CalendarInfo: Sendable, Equatable {
    /// The events, at most 200.
    public var events: [CalendarEvent]

    /// A calendar from its events.
    public init(events: [CalendarEvent] = []) {
        self.events = events
    }
}

/// One calendar event.
public struct CalendarEvent: Sendable, Equatable {
    /// The title, classified by ``CalendarClassifier`` when ``category`` is missing.
    public var title: String?
    /// When the event starts.
    public var start: Timestamp
    /// When it ends (not before ``start``); a timed event without an end lasts 60 minutes.
    public var end: Timestamp?
    /// Whether it is an all-day event.
    public var allDay: Bool
    /// The category the calendar app already knows.
    public var category: EventCategory?

    /// An event from its fields.
    public init(title: String? = nil, start: Timestamp, end: Timestamp? = nil, allDay: Bool = false, category: EventCategory? = nil) {
        self.title = title
        self.start = start
        self.end = end
        self.allDay = allDay
        self.category = category
    }
}

/// What a calendar event is for.
public enum EventCategory: String, Sendable, Equatable, CaseIterable {
    case workout, study, work, social, travel, rest, other
}

/// The `bluetooth` section: connected devices.
public struct Bluetooth: Sendable, Equatable {
    /// The devices, at most 50.
    public var devices: [BluetoothDevice]

    /// A Bluetooth section from its devices.
    public init(devices: [BluetoothDevice] = []) {
        self.devices = devices
    }
}

/// One connected Bluetooth device.
public struct BluetoothDevice: Sendable, Equatable {
    /// The device's name (sensitive: not stored by default).
    public var name: String?
    /// What kind of device it is.
    public var kind: DeviceKind

    /// A device from its fields.
    public init(name: String? = nil, kind: DeviceKind) {
        self.name = name
        self.kind = kind
    }
}

/// The kind of a Bluetooth device.
public enum DeviceKind: String, Sendable, Equatable, CaseIterable {
    case car, headphones, speaker, watch, other
}

/// The `motion` section: activity and body signals.
public struct Motion: Sendable, Equatable {
    /// Core Motion's activity class.
    public var activity: Activity?
    /// Steps per minute (0…400).
    public var stepsPerMin: Double?
    /// Steps so far today (0…200000).
    public var stepsToday: Double?
    /// Heart rate in beats per minute (20…250).
    public var heartRateBpm: Double?

    /// Motion from its fields.
    public init(activity: Activity? = nil, stepsPerMin: Double? = nil, stepsToday: Double? = nil, heartRateBpm: Double? = nil) {
        self.activity = activity
        self.stepsPerMin = stepsPerMin
        self.stepsToday = stepsToday
        self.heartRateBpm = heartRateBpm
    }
}

/// Core Motion's activity classes.
public enum Activity: String, Sendable, Equatable, CaseIterable {
    case stationary, walking, running, cycling, automotive, unknown
}

/// The `audio` section: where sound goes and how loud.
public struct AudioState: Sendable, Equatable {
    /// The output route.
    public var route: AudioRoute?
    /// The output volume (0…1).
    public var volume: Double?

    /// An audio section from its fields.
    public init(route: AudioRoute? = nil, volume: Double? = nil) {
        self.route = route
        self.volume = volume
    }
}

/// Audio output routes.
public enum AudioRoute: String, Sendable, Equatable, CaseIterable {
    case speaker, headphones, bluetooth, car, airplay, other
}
