import Foundation

/// Builds the pairs of a JSON object, skipping `nil` fields.
struct ObjectBuilder {
    var pairs: [(String, JSONValue)] = []

    init(capacity: Int) { pairs.reserveCapacity(capacity) }

    mutating func add(_ key: String, _ value: JSONValue?) {
        if let value { pairs.append((key, value)) }
    }

    mutating func add(_ key: String, _ x: Double?) {
        if let x { pairs.append((key, .number(x))) }
    }

    mutating func add(_ key: String, _ s: String?) {
        if let s { pairs.append((key, .string(s))) }
    }

    mutating func add(_ key: String, _ t: Timestamp?) {
        if let t { pairs.append((key, .string(t.rfc3339))) }
    }

    mutating func add<E: RawRepresentable>(_ key: String, _ e: E?) where E.RawValue == String {
        if let e { pairs.append((key, .string(e.rawValue))) }
    }

    var object: JSONValue { .object(pairs) }
}

extension Snapshot {
    /// The snapshot in the interchange format (docs/formats.md); absent sections are left out and
    /// tags are written in key order. `Snapshot(json: s.json()) == s`.
    public func json() -> JSONValue {
        var o = ObjectBuilder(capacity: 9)
        o.add("user", user)
        o.add("at", at)
        o.add("location", location?.json())
        o.add("weather", weather?.json())
        o.add("calendar", calendar?.json())
        o.add("bluetooth", bluetooth?.json())
        o.add("motion", motion?.json())
        o.add("audio", audio?.json())
        if let tags {
            o.add("tags", .object(tags.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) }))
        }
        return o.object
    }
}

extension Location {
    /// The `location` object of the interchange format.
    public func json() -> JSONValue {
        var o = ObjectBuilder(capacity: 5)
        o.add("lat", lat)
        o.add("lon", lon)
        o.add("accuracy_m", accuracyM)
        o.add("speed_mps", speedMps)
        o.add("place", place)
        return o.object
    }
}

extension Weather {
    /// The `weather` object of the interchange format.
    public func json() -> JSONValue {
        var o = ObjectBuilder(capacity: 8)
        o.add("temp_c", tempC)
        o.add("wind_mps", windMps)
        o.add("cloud_pct", cloudPct)
        o.add("humidity_pct", humidityPct)
        o.add("precip_mm_h", precipMmH)
        o.add("condition", condition)
        o.add("sunrise", sunrise)
        o.add("sunset", sunset)
        return o.object
    }
}

extension CalendarInfo {
    /// The `calendar` object of the interchange format.
    public func json() -> JSONValue {
        .object([("events", .array(events.map { $0.json() }))])
    }
}

extension CalendarEvent {
    /// One event of the `calendar.events` array.
    public func json() -> JSONValue {
        var o = ObjectBuilder(capacity: 5)
        o.add("title", title)
        o.add("start", start)
        o.add("end", end)
        o.add("all_day", JSONValue.bool(allDay))
        o.add("category", category)
        return o.object
    }
}

extension Bluetooth {
    /// The `bluetooth` object of the interchange format.
    public func json() -> JSONValue {
        .object([
            (
                "devices",
                .array(
                    devices.map { d in
                        var o = ObjectBuilder(capacity: 2)
                        o.add("name", d.name)
                        o.add("kind", d.kind)
                        return o.object
                    })
            )
        ])
    }
}

extension Motion {
    /// The `motion` object of the interchange format.
    public func json() -> JSONValue {
        var o = ObjectBuilder(capacity: 4)
        o.add("activity", activity)
        o.add("steps_per_min", stepsPerMin)
        o.add("steps_today", stepsToday)
        o.add("heart_rate_bpm", heartRateBpm)
        return o.object
    }
}

extension AudioState {
    /// The `audio` object of the interchange format.
    public func json() -> JSONValue {
        var o = ObjectBuilder(capacity: 2)
        o.add("route", route)
        o.add("volume", volume)
        return o.object
    }
}
