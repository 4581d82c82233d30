import Foundation

extension Snapshot {
    /// The largest snapshot document ``decode(_:strict:)`` accepts, in bytes (1 MiB).
    public static let maxBytes = 1 << 20
    /// The most calendar events a snapshot may carry.
    public static let maxEvents = 200
    /// The most Bluetooth devices a snapshot may carry.
    public static let maxDevices = 50
    /// The most tags a snapshot may carry.
    public static let maxTags = 64
    /// The longest free-text field (title, place, device name, tag name or value), in characters.
    public static let maxTextLength = 1024

    static let knownFields = ["user", "at", "location", "weather", "calendar", "bluetooth", "motion", "audio", "tags"]

    /// Decodes and validates a snapshot from JSON bytes.
    ///
    /// - Parameters:
    ///   - data: one UTF-8 JSON document of at most ``maxBytes`` bytes.
    ///   - strict: whether unknown fields are errors rather than ignored.
    /// - Throws: ``InputError`` for malformed JSON, a document that is too large, or a field
    ///   that breaks a rule of ``init(json:path:strict:)``.
    public static func decode(_ data: Data, strict: Bool = false) throws(InputError) -> Snapshot {
        try checkSize(data.count)
        if let s = data.withUnsafeBytes({ fastDecode($0, strict: strict) }) { return s }
        return try Snapshot(json: JSONParser.parse(data), strict: strict)
    }

    /// Decodes and validates a snapshot from raw UTF-8 bytes (no copy is made).
    ///
    /// - Parameters:
    ///   - bytes: one UTF-8 JSON document of at most ``maxBytes`` bytes.
    ///   - strict: whether unknown fields are errors rather than ignored.
    /// - Throws: ``InputError`` as ``decode(_:strict:)``.
    public static func decode(bytes: UnsafeRawBufferPointer, strict: Bool = false) throws(InputError) -> Snapshot {
        try checkSize(bytes.count)
        if let s = fastDecode(bytes, strict: strict) { return s }
        return try Snapshot(json: JSONParser.parse(bytes: bytes), strict: strict)
    }

    /// The fast path: the snapshot straight from bytes, or `nil` when the general path must decide.
    static func fastDecode(_ bytes: UnsafeRawBufferPointer, strict: Bool) -> Snapshot? {
        ByteParser.fastDocument(bytes) { (p: inout ByteParser) throws(Bail) in try p.fastSnapshot(strict: strict) }
    }

    /// The one size limit of a snapshot or feedback event document, whichever front end reads it
    /// (the CLI, replay, batch, the HTTP service): ``maxBytes``.
    /// - Throws: ``InputError`` (path `""`, the document) for a larger one.
    public static func checkSize(_ count: Int) throws(InputError) {
        guard count <= maxBytes else {
            throw InputError(path: "", expected: "a document of at most \(maxBytes) bytes", got: "\(count) bytes")
        }
    }

    /// Validates a parsed JSON object as a snapshot.
    ///
    /// `user` and `at` are required; every section is optional, and a missing section or a
    /// `null` optional field is `nil`. A present field of the wrong type or outside its
    /// range is an error that names its dotted path. The rules:
    ///
    /// | field | rule |
    /// | --- | --- |
    /// | `user` | non-empty string, ≤ 128 characters, no control characters |
    /// | `at`, times | RFC 3339 with an offset (`Z` or `±hh:mm`) |
    /// | `location.lat` / `lon` | −90…90 / −180…180, both or neither |
    /// | `location.accuracy_m` | ≥ 0 |
    /// | `location.speed_mps` | 0…150 |
    /// | `weather.temp_c` | −90…60 |
    /// | `weather.wind_mps` | 0…120 |
    /// | `weather.cloud_pct`, `humidity_pct` | 0…100 |
    /// | `weather.precip_mm_h` | 0…500 |
    /// | `weather.sunset` | after `sunrise` when both are given |
    /// | `calendar.events` | ≤ 200; each needs `start`; `end` not before `start` |
    /// | `bluetooth.devices` | ≤ 50; each needs `kind` |
    /// | `motion.steps_per_min` | 0…400 |
    /// | `motion.steps_today` | 0…200000 |
    /// | `motion.heart_rate_bpm` | 20…250 |
    /// | `audio.volume` | 0…1 |
    /// | `tags` | ≤ 64, string to string, non-empty names |
    /// | enums | one of the listed strings (the error lists them) |
    /// | free text | ≤ 1024 characters |
    ///
    /// - Parameters:
    ///   - json: the parsed document.
    ///   - path: the path of this object inside a larger document (`snapshot`), for errors.
    ///   - strict: whether unknown fields are errors (`expected no field 'foo'`) rather than ignored.
    /// - Throws: ``InputError`` for the first field that breaks a rule.
    public init(json: JSONValue, path: String = "", strict: Bool = false) throws(InputError) {
        let r = try JSONObjectReader(json, base: path)
        try r.rejectUnknown(Snapshot.knownFields, strict: strict)
        let user = try r.identifier("user")
        let at = try r.requiredTimestamp("at")
        self.init(user: user, at: at)
        if let v = r.value("location") { location = try Location(json: v, path: r.path(of: "location"), strict: strict) }
        if let v = r.value("weather") { weather = try Weather(json: v, path: r.path(of: "weather"), strict: strict) }
        if let v = r.value("calendar") { calendar = try CalendarInfo(json: v, path: r.path(of: "calendar"), strict: strict) }
        if let v = r.value("bluetooth") { bluetooth = try Bluetooth(json: v, path: r.path(of: "bluetooth"), strict: strict) }
        if let v = r.value("motion") { motion = try Motion(json: v, path: r.path(of: "motion"), strict: strict) }
        if let v = r.value("audio") { audio = try AudioState(json: v, path: r.path(of: "audio"), strict: strict) }
        if let v = r.value("tags") { tags = try Snapshot.decodeTags(v, path: r.path(of: "tags")) }
    }

    static func decodeTags(_ v: JSONValue, path: String) throws(InputError) -> [String: String] {
        guard case .object(let pairs) = v else {
            throw InputError(path: path, expected: "an object of string values", got: Got.type(v))
        }
        guard pairs.count <= maxTags else {
            throw InputError(path: path, expected: "at most \(maxTags) tags", got: "\(pairs.count)")
        }
        var tags: [String: String] = [:]
        tags.reserveCapacity(pairs.count)
        for (k, value) in pairs {
            if k.isEmpty {
                throw InputError(path: path, expected: "non-empty tag names", got: "\"\"")
            }
            try Validate.length(k, max: maxTextLength, path: path + "." + k, expected: "a tag name of at most \(maxTextLength) characters")
            switch value {
            case .null:
                continue
            case .string(let s):
                try Validate.length(s, max: maxTextLength, path: path + "." + k)
                tags[k] = s
            default:
                throw InputError(path: path + "." + k, expected: "a string", got: Got.type(value))
            }
        }
        return tags
    }
}

extension Location {
    static let knownFields = ["lat", "lon", "accuracy_m", "speed_mps", "place"]

    /// Validates a parsed `location` object (see ``Snapshot/init(json:path:strict:)`` for the rules).
    ///
    /// - Parameters:
    ///   - json: the object.
    ///   - path: its path, for errors (`location`).
    ///   - strict: whether unknown fields are errors.
    /// - Throws: ``InputError`` for the first field that breaks a rule.
    public init(json: JSONValue, path: String = "location", strict: Bool = false) throws(InputError) {
        let r = try JSONObjectReader(json, base: path)
        try r.rejectUnknown(Location.knownFields, strict: strict)
        let lat = try r.number("lat", .closed(-90, 90))
        let lon = try r.number("lon", .closed(-180, 180))
        if lat != nil, lon == nil {
            throw InputError(path: r.path(of: "lon"), expected: "a number in -180...180 (lat and lon come together)", got: "nothing")
        }
        if lon != nil, lat == nil {
            throw InputError(path: r.path(of: "lat"), expected: "a number in -90...90 (lat and lon come together)", got: "nothing")
        }
        self.init(
            lat: lat, lon: lon,
            accuracyM: try r.number("accuracy_m", .atLeast(0)),
            speedMps: try r.number("speed_mps", .closed(0, 150)),
            place: try r.string("place"))
    }
}

extension Weather {
    static let knownFields = ["temp_c", "wind_mps", "cloud_pct", "humidity_pct", "precip_mm_h", "condition", "sunrise", "sunset"]

    /// Validates a parsed `weather` object (see ``Snapshot/init(json:path:strict:)`` for the rules).
    ///
    /// - Parameters:
    ///   - json: the object.
    ///   - path: its path, for errors (`weather`).
    ///   - strict: whether unknown fields are errors.
    /// - Throws: ``InputError`` for the first field that breaks a rule.
    public init(json: JSONValue, path: String = "weather", strict: Bool = false) throws(InputError) {
        let r = try JSONObjectReader(json, base: path)
        try r.rejectUnknown(Weather.knownFields, strict: strict)
        self.init(
            tempC: try r.number("temp_c", .closed(-90, 60)),
            windMps: try r.number("wind_mps", .closed(0, 120)),
            cloudPct: try r.number("cloud_pct", .closed(0, 100)),
            humidityPct: try r.number("humidity_pct", .closed(0, 100)),
            precipMmH: try r.number("precip_mm_h", .closed(0, 500)),
            condition: try r.enumeration("condition", WeatherCondition.self),
            sunrise: try r.timestamp("sunrise"),
            sunset: try r.timestamp("sunset"))
        if let sunrise, let sunset, sunset.date <= sunrise.date {
            throw InputError(
                path: r.path(of: "sunset"), expected: "a time after sunrise (\(sunrise.rfc3339))", got: sunset.rfc3339)
        }
    }
}

extension CalendarInfo {
    static let knownFields = ["events"]

    /// Validates a parsed `calendar` object; a missing `events` array means no events.
    ///
    /// - Parameters:
    ///   - json: the object.
    ///   - path: its path, for errors (`calendar`).
    ///   - strict: whether unknown fields are errors.
    /// - Throws: ``InputError`` for the first field that breaks a rule.
    public init(json: JSONValue, path: String = "calendar", strict: Bool = false) throws(InputError) {
        let r = try JSONObjectReader(json, base: path)
        try r.rejectUnknown(CalendarInfo.knownFields, strict: strict)
        var events: [CalendarEvent] = []
        if let elements = try r.array("events", max: Snapshot.maxEvents, noun: "events") {
            events.reserveCapacity(elements.count)
            let base = r.path(of: "events")
            for (i, e) in elements.enumerated() {
                events.append(try CalendarEvent(json: e, base: base, index: i, strict: strict))
            }
        }
        self.init(events: events)
    }
}

extension CalendarEvent {
    static let knownFields = ["title", "start", "end", "all_day", "category"]

    /// Validates a parsed calendar event.
    ///
    /// - Parameters:
    ///   - json: the object.
    ///   - path: its path, for errors (`calendar.events[0]`).
    ///   - strict: whether unknown fields are errors.
    /// - Throws: ``InputError`` for the first field that breaks a rule.
    public init(json: JSONValue, path: String, strict: Bool = false) throws(InputError) {
        try self.init(json: json, base: path, index: nil, strict: strict)
    }

    init(json: JSONValue, base: String, index: Int?, strict: Bool) throws(InputError) {
        let r = try JSONObjectReader(json, base: base, index: index)
        try r.rejectUnknown(CalendarEvent.knownFields, strict: strict)
        let start = try r.requiredTimestamp("start")
        let end = try r.timestamp("end")
        if let end, end.date < start.date {
            throw InputError(path: r.path(of: "end"), expected: "a time not before start (\(start.rfc3339))", got: end.rfc3339)
        }
        self.init(
            title: try r.string("title"), start: start, end: end,
            allDay: try r.bool("all_day") ?? false,
            category: try r.enumeration("category", EventCategory.self))
    }
}

extension Bluetooth {
    static let knownFields = ["devices"]

    /// Validates a parsed `bluetooth` object; a missing `devices` array means no devices.
    ///
    /// - Parameters:
    ///   - json: the object.
    ///   - path: its path, for errors (`bluetooth`).
    ///   - strict: whether unknown fields are errors.
    /// - Throws: ``InputError`` for the first field that breaks a rule.
    public init(json: JSONValue, path: String = "bluetooth", strict: Bool = false) throws(InputError) {
        let r = try JSONObjectReader(json, base: path)
        try r.rejectUnknown(Bluetooth.knownFields, strict: strict)
        var devices: [BluetoothDevice] = []
        if let elements = try r.array("devices", max: Snapshot.maxDevices, noun: "devices") {
            devices.reserveCapacity(elements.count)
            let base = r.path(of: "devices")
            for (i, e) in elements.enumerated() {
                let d = try JSONObjectReader(e, base: base, index: i)
                try d.rejectUnknown(["name", "kind"], strict: strict)
                devices.append(BluetoothDevice(name: try d.string("name"), kind: try d.requiredEnumeration("kind", DeviceKind.self)))
            }
        }
        self.init(devices: devices)
    }
}

extension Motion {
    static let knownFields = ["activity", "steps_per_min", "steps_today", "heart_rate_bpm"]

    /// Validates a parsed `motion` object (see ``Snapshot/init(json:path:strict:)`` for the rules).
    ///
    /// - Parameters:
    ///   - json: the object.
    ///   - path: its path, for errors (`motion`).
    ///   - strict: whether unknown fields are errors.
    /// - Throws: ``InputError`` for the first field that breaks a rule.
    public init(json: JSONValue, path: String = "motion", strict: Bool = false) throws(InputError) {
        let r = try JSONObjectReader(json, base: path)
        try r.rejectUnknown(Motion.knownFields, strict: strict)
        self.init(
            activity: try r.enumeration("activity", Activity.self),
            stepsPerMin: try r.number("steps_per_min", .closed(0, 400)),
            stepsToday: try r.number("steps_today", .closed(0, 200_000)),
            heartRateBpm: try r.number("heart_rate_bpm", .closed(20, 250)))
    }
}

extension AudioState {
    static let knownFields = ["route", "volume"]

    /// Validates a parsed `audio` object (see ``Snapshot/init(json:path:strict:)`` for the rules).
    ///
    /// - Parameters:
    ///   - json: the object.
    ///   - path: its path, for errors (`audio`).
    ///   - strict: whether unknown fields are errors.
    /// - Throws: ``InputError`` for the first field that breaks a rule.
    public init(json: JSONValue, path: String = "audio", strict: Bool = false) throws(InputError) {
        let r = try JSONObjectReader(json, base: path)
        try r.rejectUnknown(AudioState.knownFields, strict: strict)
        self.init(route: try r.enumeration("route", AudioRoute.self), volume: try r.number("volume", .closed(0, 1)))
    }
}
