import Foundation
import SoundtrackContext

/// An iCalendar (RFC 5545) file's events, parsed by hand: `VEVENT`s with `DTSTART`/`DTEND` or
/// `DURATION` (UTC `Z`, `TZID=`, floating, and all-day `VALUE=DATE`), `SUMMARY`, `UID`, `STATUS`,
/// line unfolding, escaped text, `RRULE` (`FREQ=DAILY|WEEKLY|MONTHLY`, `INTERVAL`, `COUNT`, `UNTIL`,
/// `BYDAY`, `BYMONTHDAY`), `EXDATE`, and `RECURRENCE-ID` overrides.
///
/// ```swift
/// let cal = try ICSCalendar.parse(text, defaultTimeZone: TimeZone(identifier: "Europe/Berlin")!)
/// let week = cal.occurrences(from: monday, to: nextMonday)   // recurring events expanded
/// ```
public struct ICSCalendar: Sendable {
    /// The events, recurring ones unexpanded.
    public var events: [ICSEvent]
    /// Events that could not be read, each with its line and field; the others are kept.
    public var errors: [InputError]

    /// Every occurrence overlapping `[from, to)`, in start order (recurring events expanded, `EXDATE`s
    /// and overridden instances removed, cancelled events left out).
    public func occurrences(from: Date, to: Date) -> [CalendarOccurrence] {
        var out: [CalendarOccurrence] = []
        for e in events where !e.cancelled {
            out.append(contentsOf: e.occurrences(from: from, to: to))
        }
        return out.sorted { ($0.start.date, $0.uid) < ($1.start.date, $1.uid) }
    }

    /// Parses a whole file.
    ///
    /// - Parameters:
    ///   - text: the file's text (CRLF or LF line ends).
    ///   - defaultTimeZone: the zone of floating times and all-day dates (the user's zone).
    /// - Throws: ``InputError`` when the text is not an iCalendar file at all (no `BEGIN:VCALENDAR`);
    ///   a bad event is recorded in ``errors`` and skipped.
    public static func parse(_ text: String, defaultTimeZone: TimeZone = TimeZone(identifier: "UTC")!) throws(InputError) -> ICSCalendar {
        let lines = unfold(text)
        guard lines.contains(where: { $0.text.uppercased() == "BEGIN:VCALENDAR" }) else {
            throw InputError(
                path: "", expected: "an iCalendar file (BEGIN:VCALENDAR)", got: lines.first.map { "'\($0.text.prefix(40))'" } ?? "an empty file", line: lines.first?.line)
        }
        var events: [ICSEvent] = []
        var errors: [InputError] = []
        var current: [ContentLine]? = nil
        var startLine = 0
        var nested = 0
        for l in lines {
            guard let c = ContentLine(l.text, line: l.line) else { continue }
            if c.name == "BEGIN", c.value.uppercased() == "VEVENT" {
                current = []
                startLine = l.line
                nested = 0
                continue
            }
            guard current != nil else { continue }
            if c.name == "BEGIN" { nested += 1; continue }
            if c.name == "END" {
                if nested > 0 { nested -= 1; continue }
                if c.value.uppercased() == "VEVENT" {
                    do {
                        events.append(try ICSEvent(lines: current!, startLine: startLine, zone: defaultTimeZone))
                    } catch {
                        errors.append(error)
                    }
                    current = nil
                }
                continue
            }
            if nested == 0 { current!.append(c) }
        }
        // RECURRENCE-ID overrides replace one instance of their series: drop it from the master.
        var overrides: [String: [Date]] = [:]
        for e in events { if let r = e.recurrenceID { overrides[e.uid, default: []].append(r) } }
        for i in events.indices where events[i].recurrenceID == nil && events[i].rule != nil {
            events[i].exdates.append(contentsOf: overrides[events[i].uid] ?? [])
        }
        return ICSCalendar(events: events, errors: errors)
    }

    /// Lines with folding undone (a line starting with a space or tab continues the one before),
    /// with the 1-based number of the physical line each starts on.
    static func unfold(_ text: String) -> [(line: Int, text: String)] {
        var out: [(line: Int, text: String)] = []
        var n = 0
        // "\r\n" is one Character in Swift: split on it as well as on a bare "\n".
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            n += 1
            var s = Substring(raw)
            if s.hasSuffix("\r") { s = s.dropLast() }
            if let first = s.first, first == " " || first == "\t", !out.isEmpty {
                out[out.count - 1].text += s.dropFirst()
            } else if !s.isEmpty {
                out.append((n, String(s)))
            }
        }
        return out
    }
}

/// One occurrence of a calendar event (a recurring event has many), from an ICS file or Google Calendar.
public struct CalendarOccurrence: Sendable, Equatable {
    /// The event's id (`UID` of an ICS file, the event id of Google Calendar).
    public var uid: String
    /// The unescaped `SUMMARY`.
    public var title: String?
    /// When it starts, in its zone's offset at that instant.
    public var start: Timestamp
    /// When it ends.
    public var end: Timestamp
    /// Whether it is an all-day event.
    public var allDay: Bool

    /// Creates an occurrence.
    public init(uid: String, title: String?, start: Timestamp, end: Timestamp, allDay: Bool) {
        self.uid = uid
        self.title = title
        self.start = start
        self.end = end
        self.allDay = allDay
    }
}

/// One `VEVENT`.
public struct ICSEvent: Sendable {
    /// `UID` (a generated one when missing).
    public var uid: String
    /// The unescaped `SUMMARY`.
    public var title: String?
    /// `DTSTART` as a local date-time in its zone.
    var start: LocalDateTime
    /// Duration in seconds (all-day events: whole days).
    var duration: Int
    /// The zone of `start`.
    var zone: ICSZone
    /// Whether `DTSTART` is a `VALUE=DATE`.
    public var allDay: Bool
    /// The `RRULE`, if recurring.
    var rule: RecurrenceRule?
    /// Instants excluded by `EXDATE` (and by overrides).
    var exdates: [Date]
    /// `RECURRENCE-ID` of an override.
    var recurrenceID: Date?
    /// `STATUS:CANCELLED`.
    public var cancelled: Bool

    init(lines: [ContentLine], startLine: Int, zone defaultZone: TimeZone) throws(InputError) {
        func prop(_ name: String) -> ContentLine? { lines.first { $0.name == name } }
        guard let ds = prop("DTSTART") else {
            throw InputError(path: "VEVENT.DTSTART", expected: "a DTSTART property", got: "nothing", line: startLine)
        }
        let (start, zone, isDate) = try Self.dateTime(ds, defaultZone: defaultZone)
        self.start = start
        self.zone = zone
        allDay = isDate
        uid = prop("UID")?.value ?? "line-\(startLine)"
        title = prop("SUMMARY").map { ICSText.unescape($0.value) }
        cancelled = prop("STATUS")?.value.uppercased() == "CANCELLED"
        let startInstant = zone.instant(start).date
        if let de = prop("DTEND") {
            let (end, endZone, _) = try Self.dateTime(de, defaultZone: defaultZone)
            let d = Int(endZone.instant(end).date.timeIntervalSince(startInstant))
            guard d >= 0 else {
                throw InputError(path: "VEVENT.DTEND", expected: "a time not before DTSTART", got: "'\(de.value)'", line: de.line)
            }
            // All-day spans are whole days of wall-clock time (a day across a DST change has 23 or 25 hours).
            duration = isDate ? Int((Double(d) / 86_400).rounded()) * 86_400 : d
        } else if let du = prop("DURATION") {
            guard let d = ICSText.duration(du.value), d >= 0 else {
                throw InputError(path: "VEVENT.DURATION", expected: "an RFC 5545 duration such as PT1H30M", got: "'\(du.value)'", line: du.line)
            }
            duration = d
        } else {
            duration = isDate ? 86_400 : 0
        }
        if let r = prop("RRULE") {
            rule = try RecurrenceRule(r, defaultZone: defaultZone)
        }
        exdates = []
        for ex in lines where ex.name == "EXDATE" {
            for part in ex.value.split(separator: ",") {
                var single = ex
                single.value = String(part)
                let (t, z, _) = try Self.dateTime(single, defaultZone: defaultZone)
                exdates.append(z.instant(t).date)
            }
        }
        if let rid = prop("RECURRENCE-ID") {
            let (t, z, _) = try Self.dateTime(rid, defaultZone: defaultZone)
            recurrenceID = z.instant(t).date
        }
    }

    /// A date or date-time property: its local value, zone, and whether it is a `VALUE=DATE`.
    static func dateTime(_ c: ContentLine, defaultZone: TimeZone) throws(InputError) -> (LocalDateTime, ICSZone, Bool) {
        let v = c.value.trimmingCharacters(in: .whitespaces)
        let isDate = c.params["VALUE"]?.uppercased() == "DATE" || (v.count == 8 && !v.contains("T"))
        guard let local = LocalDateTime(ics: v, dateOnly: isDate) else {
            throw InputError(path: "VEVENT.\(c.name)", expected: isDate ? "a date YYYYMMDD" : "a date-time YYYYMMDDTHHMMSS[Z]", got: "'\(v.prefix(40))'", line: c.line)
        }
        if v.hasSuffix("Z") || v.hasSuffix("z") { return (local, .utc, isDate) }
        if let tzid = c.params["TZID"] {
            guard let tz = TimeZone(identifier: tzid) else {
                throw InputError(path: "VEVENT.\(c.name).TZID", expected: "a known time-zone identifier (Olson name)", got: "'\(tzid.prefix(40))'", line: c.line)
            }
            return (local, .zone(tz), isDate)
        }
        return (local, .zone(defaultZone), isDate)
    }

    /// The occurrences overlapping `[from, to)`.
    func occurrences(from: Date, to: Date) -> [CalendarOccurrence] {
        var out: [CalendarOccurrence] = []
        let excluded = Set(exdates.map { $0.timeIntervalSince1970 })
        func emit(_ local: LocalDateTime) {
            let s = zone.instant(start.with(day: local.dayIndex))
            let e = zone.instant(start.with(day: local.dayIndex).adding(seconds: duration))
            guard !excluded.contains(s.date.timeIntervalSince1970) else { return }
            guard e.date > from || (duration == 0 && s.date >= from), s.date < to else { return }
            out.append(CalendarOccurrence(uid: uid, title: title, start: s, end: e, allDay: allDay))
        }
        guard let rule else {
            emit(start)
            return out
        }
        rule.expand(start: start, zone: zone, until: to) { emit($0) }
        return out
    }
}

/// The zone of an iCalendar time: UTC (`Z`) or a named zone (`TZID`, or the default for floating times).
enum ICSZone: Sendable {
    case utc
    case zone(TimeZone)

    /// The instant of a local date-time in this zone, as a timestamp in the zone's offset then.
    func instant(_ l: LocalDateTime) -> Timestamp {
        let naive = Double(l.dayIndex) * 86_400 + Double(l.secondOfDay)
        switch self {
        case .utc:
            return Timestamp(date: Date(timeIntervalSince1970: naive), offsetSeconds: 0)
        case let .zone(tz):
            // The offset at the naive instant, then corrected once (right except inside a DST gap).
            var offset = tz.secondsFromGMT(for: Date(timeIntervalSince1970: naive))
            offset = tz.secondsFromGMT(for: Date(timeIntervalSince1970: naive - Double(offset)))
            return Timestamp(date: Date(timeIntervalSince1970: naive - Double(offset)), offsetSeconds: offset)
        }
    }
}

/// A wall-clock date and time without a zone: days since 1970-01-01 and seconds into the day.
struct LocalDateTime: Sendable, Equatable {
    var dayIndex: Int
    var secondOfDay: Int

    init(dayIndex: Int, secondOfDay: Int) {
        self.dayIndex = dayIndex
        self.secondOfDay = secondOfDay
    }

    /// `YYYYMMDD` or `YYYYMMDDTHHMMSS[Z]`.
    init?(ics v: String, dateOnly: Bool) {
        let b = Array(v.utf8)
        func num(_ i: Int, _ n: Int) -> Int? {
            guard i + n <= b.count else { return nil }
            var x = 0
            for k in i..<(i + n) {
                guard b[k] >= 48, b[k] <= 57 else { return nil }
                x = x * 10 + Int(b[k] - 48)
            }
            return x
        }
        guard let y = num(0, 4), let m = num(4, 2), let d = num(6, 2), (1...12).contains(m), d >= 1, d <= CivilDate.daysIn(year: y, month: m) else { return nil }
        dayIndex = CivilDate.days(year: y, month: m, day: d)
        if dateOnly {
            guard b.count == 8 else { return nil }
            secondOfDay = 0
            return
        }
        guard b.count == 15 || (b.count == 16 && (b[15] == UInt8(ascii: "Z") || b[15] == UInt8(ascii: "z"))),
            b[8] == UInt8(ascii: "T") || b[8] == UInt8(ascii: "t"),
            let h = num(9, 2), let mi = num(11, 2), let s = num(13, 2), h < 24, mi < 60, s < 61
        else { return nil }
        secondOfDay = h * 3600 + mi * 60 + min(s, 59)
    }

    /// The same time of day on another day.
    func with(day: Int) -> LocalDateTime { LocalDateTime(dayIndex: day, secondOfDay: secondOfDay) }

    /// Wall-clock arithmetic (days carry over).
    func adding(seconds: Int) -> LocalDateTime {
        let total = secondOfDay + seconds
        let days = total >= 0 ? total / 86_400 : -((-total + 86_399) / 86_400)
        return LocalDateTime(dayIndex: dayIndex + days, secondOfDay: total - days * 86_400)
    }

    /// Monday = 0 … Sunday = 6.
    var weekday: Int { ((dayIndex + 3) % 7 + 7) % 7 }
}

/// Proleptic Gregorian day counting (``Timestamp``'s, under the names the recurrence code uses).
enum CivilDate {
    static func days(year: Int, month: Int, day: Int) -> Int {
        Timestamp.daysFromCivil(year: year, month: month, day: day)
    }

    static func civil(_ days: Int) -> (year: Int, month: Int, day: Int) {
        Timestamp.civil(fromDays: days)
    }

    static func daysIn(year: Int, month: Int) -> Int {
        Timestamp.daysInMonth(year: year, month: month)
    }
}

/// An `RRULE` of the supported subset.
struct RecurrenceRule: Sendable {
    enum Frequency: String, Sendable { case daily = "DAILY", weekly = "WEEKLY", monthly = "MONTHLY" }
    var frequency: Frequency
    var interval: Int
    var count: Int?
    /// The last instant an occurrence may start at.
    var until: Date?
    /// `BYDAY`: weekday (Monday = 0) with an optional ordinal (`2TU`, `-1FR`; monthly rules only).
    var byDay: [(ordinal: Int?, weekday: Int)]
    var byMonthDay: [Int]

    static let weekdays = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]

    init(_ c: ContentLine, defaultZone: TimeZone) throws(InputError) {
        func bad(_ part: String, _ expected: String) -> InputError {
            InputError(path: "VEVENT.RRULE.\(part)", expected: expected, got: "'\(c.value.prefix(60))'", line: c.line)
        }
        var parts: [String: String] = [:]
        for p in c.value.split(separator: ";") {
            let kv = p.split(separator: "=", maxSplits: 1)
            guard kv.count == 2 else { throw bad("", "NAME=VALUE parts") }
            parts[kv[0].uppercased()] = String(kv[1])
        }
        guard let f = parts["FREQ"].flatMap({ Frequency(rawValue: $0.uppercased()) }) else {
            throw bad("FREQ", "DAILY, WEEKLY or MONTHLY")
        }
        frequency = f
        interval = 1
        if let i = parts["INTERVAL"] {
            guard let n = Int(i), n >= 1 else { throw bad("INTERVAL", "a positive integer") }
            interval = n
        }
        if let n = parts["COUNT"] {
            guard let k = Int(n), k >= 1 else { throw bad("COUNT", "a positive integer") }
            count = k
        }
        if let u = parts["UNTIL"] {
            var line = c
            line.value = u
            line.params = [:]
            let (t, z, _) = try ICSEvent.dateTime(line, defaultZone: defaultZone)
            // A date UNTIL includes that whole day.
            until = z.instant(u.count == 8 ? t.adding(seconds: 86_399) : t).date
        }
        byDay = []
        if let d = parts["BYDAY"] {
            for item in d.split(separator: ",") {
                let s = item.uppercased()
                guard s.count >= 2, let w = Self.weekdays.firstIndex(of: String(s.suffix(2))) else { throw bad("BYDAY", "weekdays such as MO,WE or 2TU") }
                let prefix = s.dropLast(2)
                if prefix.isEmpty {
                    byDay.append((nil, w))
                } else {
                    guard let n = Int(prefix.hasPrefix("+") ? String(prefix.dropFirst()) : String(prefix)), n != 0, abs(n) <= 5 else {
                        throw bad("BYDAY", "an ordinal in -5...5 before the weekday")
                    }
                    byDay.append((n, w))
                }
            }
        }
        byMonthDay = []
        if let d = parts["BYMONTHDAY"] {
            for item in d.split(separator: ",") {
                guard let n = Int(item), n != 0, abs(n) <= 31 else { throw bad("BYMONTHDAY", "days in -31...31") }
                byMonthDay.append(n)
            }
        }
    }

    /// Calls `emit` with each occurrence's local start (DTSTART first), in order, until COUNT, UNTIL
    /// or `limit` stops it; at most 50,000 candidates are looked at.
    func expand(start: LocalDateTime, zone: ICSZone, until limit: Date, emit: (LocalDateTime) -> Void) {
        var emitted = 0
        var examined = 0
        func take(_ day: Int) -> Bool {  // false: stop
            examined += 1
            if examined > 50_000 { return false }
            guard day >= start.dayIndex else { return true }
            let l = start.with(day: day)
            let t = zone.instant(l).date
            if let until, t > until { return false }
            if t >= limit { return false }
            if let count, emitted >= count { return false }
            emitted += 1
            emit(l)
            return true
        }
        switch frequency {
        case .daily:
            var day = start.dayIndex
            while true {
                let w = ((day + 3) % 7 + 7) % 7
                if byDay.isEmpty || byDay.contains(where: { $0.weekday == w }) {
                    if !take(day) { return }
                } else {
                    examined += 1
                    if examined > 50_000 { return }
                }
                day += interval
            }
        case .weekly:
            let days = byDay.isEmpty ? [start.weekday] : Array(Set(byDay.map(\.weekday))).sorted()
            var monday = start.dayIndex - start.weekday
            while true {
                for w in days where !take(monday + w) { return }
                monday += 7 * interval
            }
        case .monthly:
            let (y0, m0, d0) = CivilDate.civil(start.dayIndex)
            var k = 0
            while true {
                let mi = (m0 - 1) + k * interval
                let y = y0 + mi / 12, m = mi % 12 + 1
                let first = CivilDate.days(year: y, month: m, day: 1)
                let n = CivilDate.daysIn(year: y, month: m)
                var candidates: [Int] = []
                if !byDay.isEmpty {
                    for (ordinal, w) in byDay {
                        let firstW = ((first + 3) % 7 + 7) % 7
                        let all = stride(from: first + (w - firstW + 7) % 7, to: first + n, by: 7).map { $0 }
                        if let ordinal {
                            let i = ordinal > 0 ? ordinal - 1 : all.count + ordinal
                            if all.indices.contains(i) { candidates.append(all[i]) }
                        } else {
                            candidates.append(contentsOf: all)
                        }
                    }
                } else if !byMonthDay.isEmpty {
                    for d in byMonthDay {
                        let day = d > 0 ? d : n + d + 1
                        if (1...n).contains(day) { candidates.append(first + day - 1) }
                    }
                } else if d0 <= n {
                    candidates.append(first + d0 - 1)
                }
                if candidates.isEmpty {
                    examined += 1
                    if examined > 50_000 { return }
                }
                for day in Set(candidates).sorted() where !take(day) { return }
                k += 1
            }
        }
    }
}

/// One content line: `NAME;PARAM=VALUE;…:value`.
struct ContentLine: Sendable {
    var name: String
    var params: [String: String]
    var value: String
    var line: Int

    init?(_ text: String, line: Int) {
        var inQuotes = false
        var colon: String.Index?
        for i in text.indices {
            let ch = text[i]
            if ch == "\"" { inQuotes.toggle() } else if ch == ":" && !inQuotes { colon = i; break }
        }
        guard let colon else { return nil }
        let head = text[..<colon]
        value = String(text[text.index(after: colon)...])
        var parts = head.split(separator: ";").map(String.init)
        guard !parts.isEmpty else { return nil }
        name = parts.removeFirst().uppercased()
        params = [:]
        for p in parts {
            let kv = p.split(separator: "=", maxSplits: 1)
            if kv.count == 2 { params[kv[0].uppercased()] = kv[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        }
        self.line = line
    }
}

/// iCalendar text values and durations.
enum ICSText {
    /// Undoes TEXT escaping: `\\`, `\;`, `\,`, `\n`/`\N`.
    static func unescape(_ s: String) -> String {
        guard s.contains("\\") else { return s }
        var out = ""
        var escaping = false
        for ch in s {
            if escaping {
                switch ch {
                case "n", "N": out.append("\n")
                default: out.append(ch)
                }
                escaping = false
            } else if ch == "\\" {
                escaping = true
            } else {
                out.append(ch)
            }
        }
        return out
    }

    /// An RFC 5545 duration (`PT1H30M`, `P1D`, `P2W`, `-PT15M`) in seconds.
    static func duration(_ s: String) -> Int? {
        var t = Substring(s.uppercased())
        var sign = 1
        if t.hasPrefix("-") { sign = -1; t = t.dropFirst() } else if t.hasPrefix("+") { t = t.dropFirst() }
        guard t.hasPrefix("P") else { return nil }
        t = t.dropFirst()
        var total = 0, number = "", inTime = false, sawPart = false
        for ch in t {
            if ch.isNumber { number.append(ch); continue }
            if ch == "T" { inTime = true; continue }
            guard let n = Int(number) else { return nil }
            number = ""
            sawPart = true
            switch (ch, inTime) {
            case ("W", false): total += n * 604_800
            case ("D", false): total += n * 86_400
            case ("H", true): total += n * 3600
            case ("M", true): total += n * 60
            case ("S", true): total += n
            default: return nil
            }
        }
        return sawPart && number.isEmpty ? sign * total : nil
    }
}
