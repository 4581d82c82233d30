import Foundation

// The fast path of `Snapshot.decode` and `FeedbackEvent.decode`: reads the bytes straight
// into the model, without building a `JSONValue` tree or a String per key.
//
// It accepts a subset of what the general path accepts and must return the same value for
// it. It gives up (`Bail`) on anything unusual — any error, escaped or non-ASCII keys, an
// unknown field holding an array or object, strict mode meeting an unknown field — and the
// caller then runs the general path, which produces the value or the precise error. So error
// messages come from one place only.

/// The fast path gave up; the general path decides.
struct Bail: Error {}

/// Byte spellings of enum raw values, for matching without making Strings.
struct ByteNames<E: Sendable>: Sendable {
    let entries: [([UInt8], E)]

    init(_ cases: [E], _ name: (E) -> String) {
        entries = cases.map { (Array(name($0).utf8), $0) }
    }
}

enum FastNames {
    static let conditions = ByteNames(WeatherCondition.allCases, \.rawValue)
    static let categories = ByteNames(EventCategory.allCases, \.rawValue)
    static let kinds = ByteNames(DeviceKind.allCases, \.rawValue)
    static let activities = ByteNames(Activity.allCases, \.rawValue)
    static let routes = ByteNames(AudioRoute.allCases, \.rawValue)
    static let signals = ByteNames(Signal.allCases, \.rawValue)
}

extension ByteParser {
    // MARK: Structure

    /// Skips whitespace and a `{`.
    mutating func fastBeginObject() throws(Bail) {
        skipWhitespace()
        guard index < count, bytes[index] == Byte.openBrace else { throw Bail() }
        index += 1
    }

    /// The next key of an object (its bytes, unquoted) with the `:` after it consumed, or
    /// `nil` at the closing `}`. Gives up on escapes and non-ASCII keys.
    mutating func fastNextKey(first: inout Bool) throws(Bail) -> Range<Int>? {
        skipWhitespace()
        guard index < count else { throw Bail() }
        if bytes[index] == Byte.closeBrace {
            index += 1
            return nil
        }
        if first {
            first = false
        } else {
            guard bytes[index] == Byte.comma else { throw Bail() }
            index += 1
            skipWhitespace()
        }
        guard index < count, bytes[index] == Byte.quote else { throw Bail() }
        index += 1
        let start = index
        while index < count {
            let b = bytes[index]
            if b == Byte.quote { break }
            if b == Byte.backslash || b < 0x20 || b >= 0x80 { throw Bail() }
            index += 1
        }
        guard index < count else { throw Bail() }
        let key = start..<index
        index += 1
        skipWhitespace()
        guard index < count, bytes[index] == Byte.colon else { throw Bail() }
        index += 1
        skipWhitespace()
        guard index < count else { throw Bail() }
        return key
    }

    /// Whether the bytes of a key spell `name`.
    @inline(__always)
    func fastKeyIs(_ key: Range<Int>, _ name: StaticString) -> Bool {
        let n = name.utf8CodeUnitCount
        guard key.count == n else { return false }
        let p = name.utf8Start
        var k = 0
        while k < n {
            if bytes[key.lowerBound + k] != p[k] { return false }
            k += 1
        }
        return true
    }

    /// Records a key as seen; gives up on a duplicate (the general path reports it).
    @inline(__always)
    func fastMark(_ bit: Int, _ seen: inout UInt64) throws(Bail) {
        let mask: UInt64 = 1 << UInt64(bit)
        guard seen & mask == 0 else { throw Bail() }
        seen |= mask
    }

    /// Skips the value of a field this schema does not know, in lenient mode; remembers its
    /// key so that a repeated unknown key is still caught.
    mutating func fastSkipUnknown(_ key: Range<Int>, strict: Bool, unknown: inout [Range<Int>]) throws(Bail) {
        guard !strict else { throw Bail() }
        for other in unknown where other.count == key.count {
            if bytes[other].elementsEqual(bytes[key]) { throw Bail() }
        }
        unknown.append(key)
        switch bytes[index] {
        case Byte.quote:
            _ = try fastString()
        case Byte.minus, Byte.zero...Byte.nine:
            _ = try fastPlainNumber()
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            _ = try fastBoolOrNull()
        default:
            throw Bail()  // containers (and garbage) go to the general path
        }
    }

    // MARK: Values

    /// Consumes `null` if it is next.
    @inline(__always)
    mutating func fastNull() throws(Bail) -> Bool {
        guard bytes[index] == UInt8(ascii: "n") else { return false }
        do throws(InputError) { try expectLiteral("null") } catch { throw Bail() }
        return true
    }

    /// `true`, `false`, or `nil` for `null`.
    mutating func fastBoolOrNull() throws(Bail) -> Bool? {
        let literal: StaticString
        let value: Bool?
        switch bytes[index] {
        case UInt8(ascii: "t"): literal = "true"; value = true
        case UInt8(ascii: "f"): literal = "false"; value = false
        case UInt8(ascii: "n"): literal = "null"; value = nil
        default: throw Bail()
        }
        do throws(InputError) { try expectLiteral(literal) } catch { throw Bail() }
        return value
    }

    mutating func fastPlainNumber() throws(Bail) -> Double {
        let b = bytes[index]
        guard b == Byte.minus || isDigit(b) else { throw Bail() }
        do throws(InputError) { return try parseNumber() } catch { throw Bail() }
    }

    /// A number in bounds, or `nil` for `null`.
    mutating func fastNumber(_ bounds: Bounds) throws(Bail) -> Double? {
        if try fastNull() { return nil }
        let x = try fastPlainNumber()
        guard bounds.contains(x) else { throw Bail() }
        return x
    }

    mutating func fastString() throws(Bail) -> String {
        guard bytes[index] == Byte.quote else { throw Bail() }
        do throws(InputError) { return try parseString() } catch { throw Bail() }
    }

    /// A free-text field of at most `maxLength` characters, or `nil` for `null`.
    mutating func fastText(maxLength: Int = Snapshot.maxTextLength) throws(Bail) -> String? {
        if try fastNull() { return nil }
        let s = try fastString()
        guard s.utf8.count <= maxLength || s.count <= maxLength else { throw Bail() }
        return s
    }

    /// An identifier (non-empty, at most 128 characters, no control characters).
    mutating func fastIdentifier() throws(Bail) -> String {
        let s = Identifier.normalized(try fastString())
        guard !s.isEmpty, !Validate.hasControlCharacter(s), s.utf8.count <= 128 || s.count <= 128 else { throw Bail() }
        return s
    }

    /// The raw bytes of an ASCII string without escapes (timestamps, enum values).
    mutating func fastASCIIString() throws(Bail) -> Range<Int> {
        guard bytes[index] == Byte.quote else { throw Bail() }
        index += 1
        let start = index
        while index < count {
            let b = bytes[index]
            if b == Byte.quote {
                index += 1
                return start..<(index - 1)
            }
            if b == Byte.backslash || b < 0x20 || b >= 0x80 { throw Bail() }
            index += 1
        }
        throw Bail()
    }

    /// A timestamp, or `nil` for `null`.
    mutating func fastTimestamp() throws(Bail) -> Timestamp? {
        if try fastNull() { return nil }
        let r = try fastASCIIString()
        guard let t = Timestamp.parse(UnsafeBufferPointer(rebasing: bytes[r])) else { throw Bail() }
        return t
    }

    /// An enum value, or `nil` for `null`.
    mutating func fastEnum<E>(_ names: ByteNames<E>) throws(Bail) -> E? {
        if try fastNull() { return nil }
        let r = try fastASCIIString()
        for (name, value) in names.entries where name.count == r.count {
            if bytes[r].elementsEqual(name) { return value }
        }
        throw Bail()
    }

    /// Calls `element` for each element of an array of at most `max` elements; `false` for `null`.
    mutating func fastArray(max: Int, _ element: (inout ByteParser) throws(Bail) -> Void) throws(Bail) -> Bool {
        if try fastNull() { return false }
        guard bytes[index] == Byte.openBracket else { throw Bail() }
        index += 1
        skipWhitespace()
        guard index < count else { throw Bail() }
        if bytes[index] == Byte.closeBracket {
            index += 1
            return true
        }
        var n = 0
        while true {
            n += 1
            guard n <= max else { throw Bail() }
            skipWhitespace()
            guard index < count else { throw Bail() }
            try element(&self)
            skipWhitespace()
            guard index < count else { throw Bail() }
            let b = bytes[index]
            index += 1
            if b == Byte.comma { continue }
            if b == Byte.closeBracket { return true }
            throw Bail()
        }
    }

    // MARK: Snapshot

    mutating func fastSnapshot(strict: Bool) throws(Bail) -> Snapshot {
        try fastBeginObject()
        var user: String? = nil
        var at: Timestamp? = nil
        var location: Location? = nil
        var weather: Weather? = nil
        var calendar: CalendarInfo? = nil
        var bluetooth: Bluetooth? = nil
        var motion: Motion? = nil
        var audio: AudioState? = nil
        var tags: [String: String]? = nil
        var seen: UInt64 = 0
        var unknown: [Range<Int>] = []
        var first = true
        while let key = try fastNextKey(first: &first) {
            if fastKeyIs(key, "user") {
                try fastMark(0, &seen)
                user = try fastIdentifier()
            } else if fastKeyIs(key, "at") {
                try fastMark(1, &seen)
                at = try fastTimestamp()
            } else if fastKeyIs(key, "location") {
                try fastMark(2, &seen)
                location = try fastNull() ? nil : try fastLocation(strict: strict)
            } else if fastKeyIs(key, "weather") {
                try fastMark(3, &seen)
                weather = try fastNull() ? nil : try fastWeather(strict: strict)
            } else if fastKeyIs(key, "calendar") {
                try fastMark(4, &seen)
                calendar = try fastNull() ? nil : try fastCalendar(strict: strict)
            } else if fastKeyIs(key, "bluetooth") {
                try fastMark(5, &seen)
                bluetooth = try fastNull() ? nil : try fastBluetooth(strict: strict)
            } else if fastKeyIs(key, "motion") {
                try fastMark(6, &seen)
                motion = try fastNull() ? nil : try fastMotion(strict: strict)
            } else if fastKeyIs(key, "audio") {
                try fastMark(7, &seen)
                audio = try fastNull() ? nil : try fastAudio(strict: strict)
            } else if fastKeyIs(key, "tags") {
                try fastMark(8, &seen)
                tags = try fastNull() ? nil : try fastTags()
            } else {
                try fastSkipUnknown(key, strict: strict, unknown: &unknown)
            }
        }
        guard let user, let at else { throw Bail() }
        return Snapshot(
            user: user, at: at, location: location, weather: weather, calendar: calendar, bluetooth: bluetooth,
            motion: motion, audio: audio, tags: tags)
    }

    mutating func fastLocation(strict: Bool) throws(Bail) -> Location {
        try fastBeginObject()
        var l = Location()
        var seen: UInt64 = 0
        var unknown: [Range<Int>] = []
        var first = true
        while let key = try fastNextKey(first: &first) {
            if fastKeyIs(key, "lat") {
                try fastMark(0, &seen)
                l.lat = try fastNumber(.closed(-90, 90))
            } else if fastKeyIs(key, "lon") {
                try fastMark(1, &seen)
                l.lon = try fastNumber(.closed(-180, 180))
            } else if fastKeyIs(key, "accuracy_m") {
                try fastMark(2, &seen)
                l.accuracyM = try fastNumber(.atLeast(0))
            } else if fastKeyIs(key, "speed_mps") {
                try fastMark(3, &seen)
                l.speedMps = try fastNumber(.closed(0, 150))
            } else if fastKeyIs(key, "place") {
                try fastMark(4, &seen)
                l.place = try fastText()
            } else {
                try fastSkipUnknown(key, strict: strict, unknown: &unknown)
            }
        }
        guard (l.lat == nil) == (l.lon == nil) else { throw Bail() }
        return l
    }

    mutating func fastWeather(strict: Bool) throws(Bail) -> Weather {
        try fastBeginObject()
        var w = Weather()
        var seen: UInt64 = 0
        var unknown: [Range<Int>] = []
        var first = true
        while let key = try fastNextKey(first: &first) {
            if fastKeyIs(key, "temp_c") {
                try fastMark(0, &seen)
                w.tempC = try fastNumber(.closed(-90, 60))
            } else if fastKeyIs(key, "wind_mps") {
                try fastMark(1, &seen)
                w.windMps = try fastNumber(.closed(0, 120))
            } else if fastKeyIs(key, "cloud_pct") {
                try fastMark(2, &seen)
                w.cloudPct = try fastNumber(.closed(0, 100))
            } else if fastKeyIs(key, "humidity_pct") {
                try fastMark(3, &seen)
                w.humidityPct = try fastNumber(.closed(0, 100))
            } else if fastKeyIs(key, "precip_mm_h") {
                try fastMark(4, &seen)
                w.precipMmH = try fastNumber(.closed(0, 500))
            } else if fastKeyIs(key, "condition") {
                try fastMark(5, &seen)
                w.condition = try fastEnum(FastNames.conditions)
            } else if fastKeyIs(key, "sunrise") {
                try fastMark(6, &seen)
                w.sunrise = try fastTimestamp()
            } else if fastKeyIs(key, "sunset") {
                try fastMark(7, &seen)
                w.sunset = try fastTimestamp()
            } else {
                try fastSkipUnknown(key, strict: strict, unknown: &unknown)
            }
        }
        if let sunrise = w.sunrise, let sunset = w.sunset, sunset.date <= sunrise.date { throw Bail() }
        return w
    }

    mutating func fastCalendar(strict: Bool) throws(Bail) -> CalendarInfo {
        try fastBeginObject()
        var events: [CalendarEvent] = []
        var seen: UInt64 = 0
        var unknown: [Range<Int>] = []
        var first = true
        while let key = try fastNextKey(first: &first) {
            if fastKeyIs(key, "events") {
                try fastMark(0, &seen)
                _ = try fastArray(max: Snapshot.maxEvents) { (p: inout ByteParser) throws(Bail) in
                    events.append(try p.fastEvent(strict: strict))
                }
            } else {
                try fastSkipUnknown(key, strict: strict, unknown: &unknown)
            }
        }
        return CalendarInfo(events: events)
    }

    mutating func fastEvent(strict: Bool) throws(Bail) -> CalendarEvent {
        try fastBeginObject()
        var title: String? = nil
        var start: Timestamp? = nil
        var end: Timestamp? = nil
        var allDay: Bool? = nil
        var category: EventCategory? = nil
        var seen: UInt64 = 0
        var unknown: [Range<Int>] = []
        var first = true
        while let key = try fastNextKey(first: &first) {
            if fastKeyIs(key, "title") {
                try fastMark(0, &seen)
                title = try fastText()
            } else if fastKeyIs(key, "start") {
                try fastMark(1, &seen)
                start = try fastTimestamp()
            } else if fastKeyIs(key, "end") {
                try fastMark(2, &seen)
                end = try fastTimestamp()
            } else if fastKeyIs(key, "all_day") {
                try fastMark(3, &seen)
                allDay = try fastBoolOrNull()
            } else if fastKeyIs(key, "category") {
                try fastMark(4, &seen)
                category = try fastEnum(FastNames.categories)
            } else {
                try fastSkipUnknown(key, strict: strict, unknown: &unknown)
            }
        }
        guard let start else { throw Bail() }
        if let end, end.date < start.date { throw Bail() }
        return CalendarEvent(title: title, start: start, end: end, allDay: allDay ?? false, category: category)
    }

    mutating func fastBluetooth(strict: Bool) throws(Bail) -> Bluetooth {
        try fastBeginObject()
        var devices: [BluetoothDevice] = []
        var seen: UInt64 = 0
        var unknown: [Range<Int>] = []
        var first = true
        while let key = try fastNextKey(first: &first) {
            if fastKeyIs(key, "devices") {
                try fastMark(0, &seen)
                _ = try fastArray(max: Snapshot.maxDevices) { (p: inout ByteParser) throws(Bail) in
                    devices.append(try p.fastDevice(strict: strict))
                }
            } else {
                try fastSkipUnknown(key, strict: strict, unknown: &unknown)
            }
        }
        return Bluetooth(devices: devices)
    }

    mutating func fastDevice(strict: Bool) throws(Bail) -> BluetoothDevice {
        try fastBeginObject()
        var name: String? = nil
        var kind: DeviceKind? = nil
        var seen: UInt64 = 0
        var unknown: [Range<Int>] = []
        var first = true
        while let key = try fastNextKey(first: &first) {
            if fastKeyIs(key, "name") {
                try fastMark(0, &seen)
                name = try fastText()
            } else if fastKeyIs(key, "kind") {
                try fastMark(1, &seen)
                kind = try fastEnum(FastNames.kinds)
            } else {
                try fastSkipUnknown(key, strict: strict, unknown: &unknown)
            }
        }
        guard let kind else { throw Bail() }
        return BluetoothDevice(name: name, kind: kind)
    }

    mutating func fastMotion(strict: Bool) throws(Bail) -> Motion {
        try fastBeginObject()
        var m = Motion()
        var seen: UInt64 = 0
        var unknown: [Range<Int>] = []
        var first = true
        while let key = try fastNextKey(first: &first) {
            if fastKeyIs(key, "activity") {
                try fastMark(0, &seen)
                m.activity = try fastEnum(FastNames.activities)
            } else if fastKeyIs(key, "steps_per_min") {
                try fastMark(1, &seen)
                m.stepsPerMin = try fastNumber(.closed(0, 400))
            } else if fastKeyIs(key, "steps_today") {
                try fastMark(2, &seen)
                m.stepsToday = try fastNumber(.closed(0, 200_000))
            } else if fastKeyIs(key, "heart_rate_bpm") {
                try fastMark(3, &seen)
                m.heartRateBpm = try fastNumber(.closed(20, 250))
            } else {
                try fastSkipUnknown(key, strict: strict, unknown: &unknown)
            }
        }
        return m
    }

    mutating func fastAudio(strict: Bool) throws(Bail) -> AudioState {
        try fastBeginObject()
        var a = AudioState()
        var seen: UInt64 = 0
        var unknown: [Range<Int>] = []
        var first = true
        while let key = try fastNextKey(first: &first) {
            if fastKeyIs(key, "route") {
                try fastMark(0, &seen)
                a.route = try fastEnum(FastNames.routes)
            } else if fastKeyIs(key, "volume") {
                try fastMark(1, &seen)
                a.volume = try fastNumber(.closed(0, 1))
            } else {
                try fastSkipUnknown(key, strict: strict, unknown: &unknown)
            }
        }
        return a
    }

    mutating func fastTags() throws(Bail) -> [String: String] {
        try fastBeginObject()
        var tags: [String: String] = [:]
        var keys: [Range<Int>] = []
        var first = true
        while let key = try fastNextKey(first: &first) {
            guard !key.isEmpty, key.count <= Snapshot.maxTextLength, keys.count < Snapshot.maxTags else { throw Bail() }
            for other in keys where other.count == key.count {
                if bytes[other].elementsEqual(bytes[key]) { throw Bail() }
            }
            keys.append(key)
            guard let value = try fastText() else { continue }
            tags[String(decoding: UnsafeBufferPointer(rebasing: bytes[key]), as: UTF8.self)] = value
        }
        return tags
    }

    // MARK: Feedback event

    mutating func fastFeedbackEvent(strict: Bool) throws(Bail) -> FeedbackEvent {
        try fastBeginObject()
        var id: String? = nil
        var user: String? = nil
        var at: Timestamp? = nil
        var track: String? = nil
        var signal: Signal? = nil
        var playedMs: Int? = nil
        var rating: Int? = nil
        var pickId: String? = nil
        var snapshot: Snapshot? = nil
        var seen: UInt64 = 0
        var unknown: [Range<Int>] = []
        var first = true
        while let key = try fastNextKey(first: &first) {
            if fastKeyIs(key, "id") {
                try fastMark(0, &seen)
                id = try fastIdentifier()
            } else if fastKeyIs(key, "user") {
                try fastMark(1, &seen)
                user = try fastIdentifier()
            } else if fastKeyIs(key, "at") {
                try fastMark(2, &seen)
                at = try fastTimestamp()
            } else if fastKeyIs(key, "track") {
                try fastMark(3, &seen)
                guard let t = try fastText(), !t.isEmpty else { throw Bail() }
                track = t
            } else if fastKeyIs(key, "signal") {
                try fastMark(4, &seen)
                signal = try fastEnum(FastNames.signals)
            } else if fastKeyIs(key, "played_ms") {
                try fastMark(5, &seen)
                if let x = try fastNumber(.closed(0, 9_007_199_254_740_992)) {
                    guard x == x.rounded(.towardZero) else { throw Bail() }
                    playedMs = Int(x)
                }
            } else if fastKeyIs(key, "rating") {
                try fastMark(8, &seen)
                if let x = try fastNumber(.closed(1, 5)) {
                    guard x == x.rounded(.towardZero) else { throw Bail() }
                    rating = Int(x)
                }
            } else if fastKeyIs(key, "pick_id") {
                try fastMark(6, &seen)
                pickId = try fastNull() ? nil : try fastIdentifier()
            } else if fastKeyIs(key, "snapshot") {
                try fastMark(7, &seen)
                snapshot = try fastNull() ? nil : try fastSnapshot(strict: strict)
            } else {
                try fastSkipUnknown(key, strict: strict, unknown: &unknown)
            }
        }
        guard let id, let user, let at, let track, let signal else { throw Bail() }
        guard pickId != nil || snapshot != nil else { throw Bail() }
        guard (signal == .rate) == (rating != nil) else { throw Bail() }
        if let snapshot, snapshot.user != user { throw Bail() }
        return FeedbackEvent(
            id: id, user: user, at: at, track: track, signal: signal, rating: rating, playedMs: playedMs, pickId: pickId,
            snapshot: snapshot)
    }

    // MARK: Documents

    /// Runs a fast decoder over a whole document: `nil` unless it took all of the input.
    static func fastDocument<T>(_ raw: UnsafeRawBufferPointer, _ body: (inout ByteParser) throws(Bail) -> T) -> T? {
        guard let base = raw.baseAddress, raw.count > 0 else { return nil }
        var p = ByteParser(
            bytes: UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: raw.count),
            maxDepth: JSONParser.defaultMaxDepth)
        if p.count >= 3, p.bytes[0] == 0xEF, p.bytes[1] == 0xBB, p.bytes[2] == 0xBF { p.index = 3 }
        do throws(Bail) {
            let value = try body(&p)
            p.skipWhitespace()
            return p.index == p.count ? value : nil
        } catch {
            return nil
        }
    }
}
