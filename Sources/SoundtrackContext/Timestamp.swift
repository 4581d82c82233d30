import Foundation

/// An instant with the UTC offset it was recorded in, as written in RFC 3339.
///
/// Local time (hour of day, weekday) is the time in ``offsetSeconds``, which is how the
/// formats define it. Fractional seconds are kept to the microsecond.
///
/// ```swift
/// let t = Timestamp(rfc3339: "2026-03-14T07:42:10+01:00")!
/// t.localHour      // 7.7027…
/// t.localWeekday   // 5 (Saturday)
/// t.rfc3339        // "2026-03-14T07:42:10+01:00"
/// ```
public struct Timestamp: Sendable, Equatable, Hashable {
    /// The instant.
    public var date: Date
    /// The offset from UTC, in seconds east of Greenwich (`+01:00` is 3600).
    public var offsetSeconds: Int

    /// A timestamp from an instant and an offset.
    ///
    /// - Parameters:
    ///   - date: the instant.
    ///   - offsetSeconds: the offset from UTC in seconds (within ±23:59).
    public init(date: Date, offsetSeconds: Int) {
        self.date = date
        self.offsetSeconds = offsetSeconds
    }

    /// Parses an RFC 3339 date-time with a mandatory offset.
    ///
    /// Accepts `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; `T` and `Z` may be lower case.
    /// Rejects impossible dates (February 30, month 13), hours past 23, leap seconds (`:60`),
    /// missing offsets and anything after the offset. Fractions are rounded to the microsecond.
    ///
    /// - Parameter rfc3339: the text, such as `2026-03-14T07:42:10.250+01:00`.
    /// - Returns: the timestamp, or `nil` when the text is not a valid RFC 3339 date-time.
    public init?(rfc3339: String) {
        let parsed: Timestamp?
        if let fast = rfc3339.utf8.withContiguousStorageIfAvailable({ Timestamp.parse($0) }) {
            parsed = fast
        } else {
            parsed = Array(rfc3339.utf8).withUnsafeBufferPointer { Timestamp.parse($0) }
        }
        guard let parsed else { return nil }
        self = parsed
    }

    /// The RFC 3339 text in this timestamp's own offset (`Z` for UTC); fractional seconds
    /// appear only when nonzero, with trailing zeros trimmed (at most six digits).
    public var rfc3339: String {
        var out: [UInt8] = []
        out.reserveCapacity(32)
        writeRFC3339 { out.append($0) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Hands the bytes of ``rfc3339`` to `put`, one by one, without building a string.
    @inline(__always)
    public func writeRFC3339(_ emit: (UInt8) -> Void) {
        let (seconds, micros) = unixSecondsAndMicros
        let local = seconds + offsetSeconds
        let days = Timestamp.floorDiv(local, 86_400)
        let secondOfDay = local - days * 86_400
        let (y, m, d) = Timestamp.civil(fromDays: days)
        func put(_ b: UInt8) { emit(b) }
        func put(_ v: Int, _ width: Int) {
            var power = 1
            for _ in 1..<width { power *= 10 }
            var v = v
            while power > 0 {
                emit(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v / power % 10))
                v %= power
                power /= 10
            }
        }
        if y < 0 || y > 9999 {
            for b in String(y).utf8 { put(b) }
        } else {
            put(y, 4)
        }
        put(UInt8(ascii: "-"))
        put(m, 2)
        put(UInt8(ascii: "-"))
        put(d, 2)
        put(UInt8(ascii: "T"))
        put(secondOfDay / 3600, 2)
        put(UInt8(ascii: ":"))
        put(secondOfDay / 60 % 60, 2)
        put(UInt8(ascii: ":"))
        put(secondOfDay % 60, 2)
        if micros > 0 {
            var digits = 6
            var f = micros
            while f % 10 == 0 {
                f /= 10
                digits -= 1
            }
            put(UInt8(ascii: "."))
            put(f, digits)
        }
        let offsetMinutes = offsetSeconds / 60
        if offsetMinutes == 0 {
            put(UInt8(ascii: "Z"))
        } else {
            put(offsetMinutes < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
            let a = abs(offsetMinutes)
            put(a / 60, 2)
            put(UInt8(ascii: ":"))
            put(a % 60, 2)
        }
    }

    /// The fractional hour of day in the timestamp's offset, in `0..<24` (07:30 is 7.5).
    public var localHour: Double {
        let (seconds, micros) = unixSecondsAndMicros
        let local = seconds + offsetSeconds
        let secondOfDay = local - Timestamp.floorDiv(local, 86_400) * 86_400
        return (Double(secondOfDay) + Double(micros) / 1e6) / 3600
    }

    /// The whole minute of the day in the timestamp's offset, in `0..<1440`.
    public var localMinuteOfDay: Int {
        let local = unixSecondsAndMicros.seconds + offsetSeconds
        let secondOfDay = local - Timestamp.floorDiv(local, 86_400) * 86_400
        return secondOfDay / 60
    }

    /// The weekday in the timestamp's offset: 0 = Monday … 6 = Sunday.
    public var localWeekday: Int {
        let local = unixSecondsAndMicros.seconds + offsetSeconds
        let days = Timestamp.floorDiv(local, 86_400)
        // 1970-01-01 was a Thursday (3 with Monday = 0).
        let w = (days + 3) % 7
        return w < 0 ? w + 7 : w
    }

    /// Whole seconds since 1970 (floored) and the microseconds past them.
    var unixSecondsAndMicros: (seconds: Int, micros: Int) {
        let t = date.timeIntervalSince1970
        var seconds = t.rounded(.down)
        var micros = ((t - seconds) * 1e6).rounded()
        if micros >= 1e6 {
            seconds += 1
            micros -= 1e6
        }
        return (Int(seconds), Int(micros))
    }

    // MARK: Parsing

    static func parse(_ p: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        let n = p.count
        guard n >= 20 else { return nil }
        @inline(__always) func digit(_ i: Int) -> Int? {
            let v = Int(p[i]) - 48
            return v >= 0 && v <= 9 ? v : nil
        }
        @inline(__always) func number(_ i: Int, _ width: Int) -> Int? {
            var v = 0
            for k in i..<(i + width) {
                guard let d = digit(k) else { return nil }
                v = v * 10 + d
            }
            return v
        }
        guard let year = number(0, 4), p[4] == UInt8(ascii: "-"),
            let month = number(5, 2), p[7] == UInt8(ascii: "-"),
            let day = number(8, 2),
            p[10] == UInt8(ascii: "T") || p[10] == UInt8(ascii: "t"),
            let hour = number(11, 2), p[13] == UInt8(ascii: ":"),
            let minute = number(14, 2), p[16] == UInt8(ascii: ":"),
            let second = number(17, 2)
        else { return nil }
        guard month >= 1, month <= 12, day >= 1, day <= daysInMonth(year: year, month: month),
            hour <= 23, minute <= 59, second <= 59
        else { return nil }

        var i = 19
        var micros = 0
        if p[i] == UInt8(ascii: ".") {
            i += 1
            var digits = 0
            var roundUp = false
            while i < n, let d = digit(i) {
                if digits < 6 {
                    micros = micros * 10 + d
                } else if digits == 6 {
                    roundUp = d >= 5
                }
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            while digits < 6 {
                micros *= 10
                digits += 1
            }
            if roundUp { micros += 1 }
        }
        guard i < n else { return nil }
        var offset = 0
        switch p[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            i += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard i + 6 <= n, let oh = number(i + 1, 2), p[i + 3] == UInt8(ascii: ":"), let om = number(i + 4, 2),
                oh <= 23, om <= 59
            else { return nil }
            offset = (oh * 3600 + om * 60) * (p[i] == UInt8(ascii: "-") ? -1 : 1)
            i += 6
        default:
            return nil
        }
        guard i == n else { return nil }

        let days = daysFromCivil(year: year, month: month, day: day)
        let unix = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Timestamp(unixSeconds: unix, micros: micros, offsetSeconds: offset)
    }

    /// A timestamp from whole Unix seconds and microseconds (the canonical construction:
    /// parsing and formatting round-trip exactly through it).
    init(unixSeconds: Int, micros: Int, offsetSeconds: Int) {
        let reference = Double(unixSeconds - 978_307_200) + Double(micros) / 1e6
        self.init(date: Date(timeIntervalSinceReferenceDate: reference), offsetSeconds: offsetSeconds)
    }

    static func isLeapYear(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    /// The number of days of a month (1…12) of a proleptic Gregorian year.
    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func floorDiv(_ a: Int, _ b: Int) -> Int {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (era-based day counting).
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = floorDiv(y, 400)
        let yearOfEra = y - era * 400
        let shiftedMonth = month > 2 ? month - 3 : month + 9  // March = 0
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01 (inverse of ``daysFromCivil``).
    public static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}
