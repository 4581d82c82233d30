import Foundation
import Testing

@testable import SoundtrackContext

@Suite("Timestamp")
struct TimestampTests {
    @Test func parsesTheFormatsExample() throws {
        let t = try #require(Timestamp(rfc3339: "2026-03-14T07:42:10+01:00"))
        // 2026-03-14T06:42:10Z
        #expect(t.date.timeIntervalSince1970 == 1_773_470_530)
        #expect(t.offsetSeconds == 3600)
        #expect(abs(t.localHour - (7 + 42.0 / 60 + 10.0 / 3600)) < 1e-12)
        #expect(t.localMinuteOfDay == 7 * 60 + 42)
        #expect(t.localWeekday == 5)  // Saturday
        #expect(t.rfc3339 == "2026-03-14T07:42:10+01:00")
    }

    @Test(arguments: [
        ("2026-03-14T06:42:10Z", 1_773_470_530.0, 0, "2026-03-14T06:42:10Z"),
        ("2026-03-14t06:42:10z", 1_773_470_530.0, 0, "2026-03-14T06:42:10Z"),
        ("2026-03-14T06:42:10+00:00", 1_773_470_530.0, 0, "2026-03-14T06:42:10Z"),
        ("2026-03-14T06:42:10-00:00", 1_773_470_530.0, 0, "2026-03-14T06:42:10Z"),
        ("2026-03-14T01:12:10-05:30", 1_773_470_530.0, -19_800, "2026-03-14T01:12:10-05:30"),
        ("2026-03-14T20:42:10+14:00", 1_773_470_530.0, 50_400, "2026-03-14T20:42:10+14:00"),
        ("2026-03-14T06:42:10.5Z", 1_773_470_530.5, 0, "2026-03-14T06:42:10.5Z"),
        ("2026-03-14T06:42:10.250+01:00", 1_773_466_930.25, 3600, "2026-03-14T06:42:10.25+01:00"),
        ("2026-03-14T06:42:10.000Z", 1_773_470_530.0, 0, "2026-03-14T06:42:10Z"),
        ("2026-03-14T06:42:10.123456Z", 1_773_470_530.123456, 0, "2026-03-14T06:42:10.123456Z"),
        ("2026-03-14T06:42:10.1234567Z", 1_773_470_530.123457, 0, "2026-03-14T06:42:10.123457Z"),
        ("2026-03-14T06:42:10.9999999Z", 1_773_470_531.0, 0, "2026-03-14T06:42:11Z"),
        ("1970-01-01T00:00:00Z", 0.0, 0, "1970-01-01T00:00:00Z"),
        ("1969-12-31T23:59:59.5Z", -0.5, 0, "1969-12-31T23:59:59.5Z"),
        ("2024-02-29T12:00:00Z", 1_709_208_000.0, 0, "2024-02-29T12:00:00Z"),
        ("2000-02-29T00:00:00Z", 951_782_400.0, 0, "2000-02-29T00:00:00Z"),
        ("0001-01-01T00:00:00Z", -62_135_596_800.0, 0, "0001-01-01T00:00:00Z"),
        ("9999-12-31T23:59:59Z", 253_402_300_799.0, 0, "9999-12-31T23:59:59Z")
    ])
    func parsesAndFormats(text: String, unix: Double, offset: Int, formatted: String) throws {
        let t = try #require(Timestamp(rfc3339: text))
        #expect(abs(t.date.timeIntervalSince1970 - unix) < 1e-6)
        #expect(t.offsetSeconds == offset)
        #expect(t.rfc3339 == formatted)
        #expect(Timestamp(rfc3339: formatted) == t)
    }

    @Test(arguments: [
        "", "2026-03-14", "2026-03-14T07:42:10", "2026-03-14T07:42Z", "2026-03-14T07:42:10+0100",
        "2026-03-14T07:42:10+01", "2026-03-14T07:42:10 +01:00", "2026-03-14 07:42:10Z", " 2026-03-14T07:42:10Z",
        "2026-03-14T07:42:10Zjunk", "2026-03-14T07:42:10Z ", "2026-02-30T00:00:00Z", "2026-02-29T00:00:00Z",
        "1900-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z",
        "2026-03-00T00:00:00Z", "2026-03-14T24:00:00Z", "2026-03-14T07:60:00Z", "2026-03-14T07:42:60Z",
        "2026-03-14T07:42:10.Z", "2026-03-14T07:42:10+24:00", "2026-03-14T07:42:10+01:60", "2026-3-14T07:42:10Z",
        "26-03-14T07:42:10Z", "2026-03-14T07:42:1aZ", "２０２６-03-14T07:42:10Z", "2026/03/14T07:42:10Z",
        "+2026-03-14T07:42:10Z", "2026-03-14T07:42:10,5Z"
    ])
    func rejectsInvalidTimestamps(text: String) {
        #expect(Timestamp(rfc3339: text) == nil)
    }

    @Test(arguments: [
        ("2026-03-16T00:00:00+01:00", 0, 0.0),  // Monday midnight
        ("2026-03-15T23:59:00+01:00", 6, 23 + 59.0 / 60),  // Sunday
        ("2026-03-15T23:30:00Z", 6, 23.5),
        ("2026-03-15T23:30:00-02:00", 6, 23.5),  // Monday 01:30 in UTC, still Sunday locally
        ("2026-03-16T01:30:00+14:00", 0, 1.5),  // Sunday in UTC, Monday locally
        ("1969-12-31T18:00:00Z", 2, 18)  // a Wednesday before the epoch
    ])
    func localTimeIsInTheTimestampsOffset(text: String, weekday: Int, hour: Double) throws {
        let t = try #require(Timestamp(rfc3339: text))
        #expect(t.localWeekday == weekday)
        #expect(abs(t.localHour - hour) < 1e-9)
    }

    @Test func agreesWithFoundationOnRandomInstants() throws {
        var rng = SplitMix(seed: 7)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        for _ in 0..<2000 {
            let seconds = Int(rng.next() % 4_000_000_000) - 1_000_000_000
            let micros = Int(rng.next() % 1_000_000)
            let offset = (Int(rng.next() % 57) - 28) * 1800
            let t = Timestamp(unixSeconds: seconds, micros: micros, offsetSeconds: offset)
            let text = t.rfc3339
            #expect(Timestamp(rfc3339: text) == t, "\(text)")
            formatter.timeZone = TimeZone(secondsFromGMT: offset)
            let foundation = try #require(formatter.date(from: String(text.prefix(19)) + String(text.suffix(text.hasSuffix("Z") ? 1 : 6))))
            #expect(foundation.timeIntervalSince1970 == Double(seconds), "\(text)")
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(secondsFromGMT: offset)!
            let c = calendar.dateComponents([.hour, .minute, .weekday], from: foundation)
            #expect(t.localMinuteOfDay == c.hour! * 60 + c.minute!, "\(text)")
            #expect(t.localWeekday == (c.weekday! + 5) % 7, "\(text)")
        }
    }
}
