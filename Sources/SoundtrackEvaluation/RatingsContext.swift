import Foundation
import SoundtrackCatalog
import SoundtrackContext

/// How the context columns of a contextual-ratings data set become a snapshot, so that the engine
/// meets a rating's context the way it meets a phone's (docs/evaluation.md, "Contextual ratings").
///
/// A column whose name says what it is maps to that field of the snapshot; every other column
/// becomes a tag named after it (lower-cased), its value the tag's value; `NA` leaves the field out.
///
/// | column name (any case) | values | snapshot |
/// | --- | --- | --- |
/// | `time`, `daytime`, `timeofday` | morning, afternoon, evening, night… / weekday, weekend | the hour of `at` / its day |
/// | `weekday`, `day`, `dayofweek` | weekday, weekend, Monday…Sunday | the day of `at` |
/// | `season` | spring, summer, autumn (fall), winter | the month of `at` |
/// | `weather` | sunny, clear, cloudy, rainy, snowing… | `weather.condition` |
/// | `temperature` | cold, cool, mild, warm, hot, or °C | `weather.temp_c` |
/// | `location`, `place` | home, cinema… | `location.place` (a label) |
/// | `transport` | walking, car, bicycle, public transport… | `motion.activity` |
/// | `companion`, `company` | alone, partner, family… | the tag `company` |
/// | `mood` | happy, sad… | the tag `mood` |
///
/// `at` is a placeholder built from what the row says (a Wednesday or a Saturday at the hour of the
/// part of the day, in the month of the season); parts the row leaves unknown are marked in
/// ``Snapshot/unknownTime`` and give no features.
public struct RatingsContext: Sendable {
    /// What each column becomes.
    enum Role: Equatable {
        case daypartOrDay, day, season, weather, temperature, place, transport, tag(String)
    }

    let roles: [Role]

    /// The mapping of a data set's context columns.
    public init(columns: [String]) {
        roles = columns.map { name in
            switch name.lowercased().replacingOccurrences(of: "_", with: "") {
            case "time", "daytime", "timeofday": .daypartOrDay
            case "weekday", "day", "dayofweek": .day
            case "season": .season
            case "weather": .weather
            case "temperature": .temperature
            case "location", "place": .place
            case "transport": .transport
            case "companion", "company": .tag("company")
            default: .tag(name.lowercased())
            }
        }
    }

    /// The snapshot of a row's context for a user.
    /// - Parameters:
    ///   - values: the row's context values (`nil` = NA), one per column.
    ///   - user: the user.
    ///   - ordinal: makes the placeholder time of different rows differ by minutes (rows far apart
    ///     in a file land in different listening sessions).
    public func snapshot(_ values: [String?], user: String, ordinal: Int) -> Snapshot {
        var hour: Int? = nil
        var weekend: Bool? = nil
        var weekday: Int? = nil
        var month = 3
        var weather: Weather? = nil
        var location: Location? = nil
        var motion: Motion? = nil
        var tags: [String: String] = [:]
        for (role, raw) in zip(roles, values) {
            guard let raw, !raw.isEmpty else { continue }
            let v = raw.lowercased().replacingOccurrences(of: "_", with: " ")
            switch role {
            case .daypartOrDay:
                if let h = Self.hour(v) { hour = h } else if let d = Self.day(v) { weekend = d.weekend; weekday = d.weekday } else { tags["time"] = v }
            case .day:
                if let d = Self.day(v) { weekend = d.weekend; weekday = d.weekday } else { tags["day"] = v }
            case .season:
                switch v {
                case "spring": month = 4
                case "summer": month = 7
                case "autumn", "fall": month = 10
                case "winter": month = 1
                default: tags["season"] = v
                }
            case .weather:
                weather = weather ?? Weather()
                weather!.condition = Self.condition(v)
            case .temperature:
                weather = weather ?? Weather()
                weather!.tempC = Double(v) ?? Self.temperature(v)
                if weather!.tempC == nil { tags["temperature"] = v }
            case .place:
                location = Location(place: v)
            case .transport:
                if let a = Self.activity(v) { motion = Motion(activity: a) } else { tags["transport"] = v }
            case .tag(let key):
                tags[key] = v
            }
        }
        // A placeholder time: 2024, the season's month, a Wednesday (or the named day) or a Saturday.
        var unknown: Snapshot.TimeParts = []
        if hour == nil { unknown.insert(.hour) }
        if weekend == nil && weekday == nil { unknown.insert(.day) }
        var components = DateComponents()
        components.year = 2024
        components.month = month
        components.day = 1
        components.hour = hour ?? 12
        components.minute = ordinal % 60
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        var date = calendar.date(from: components)!
        // Move to the wanted weekday (Monday = 0), within the first week of the month.
        let wanted = weekday ?? (weekend == true ? 5 : 2)
        let have = (calendar.component(.weekday, from: date) + 5) % 7
        date = date.addingTimeInterval(Double((wanted - have + 7) % 7) * 86_400)
        var s = Snapshot(
            user: user, at: Timestamp(date: date, offsetSeconds: 0), location: location, weather: weather, motion: motion,
            tags: tags.isEmpty ? nil : tags)
        s.unknownTime = unknown
        return s
    }

    static func hour(_ v: String) -> Int? {
        switch v {
        case "early morning": 6
        case "morning": 9
        case "noon", "midday", "lunch", "lunchtime": 12
        case "afternoon": 15
        case "evening": 19
        case "night", "late night": 23
        default: nil
        }
    }

    static func day(_ v: String) -> (weekend: Bool, weekday: Int?)? {
        let names = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        if let i = names.firstIndex(of: v) { return (i >= 5, i) }
        switch v {
        case "weekday", "working day", "workday": return (false, nil)
        case "weekend", "holiday": return (true, nil)
        default: return nil
        }
    }

    static func condition(_ v: String) -> WeatherCondition {
        switch v {
        case "sunny", "clear", "clear sky", "sun": .clear
        case "cloudy", "clouds", "overcast": .clouds
        case "rainy", "rain", "raining": .rain
        case "drizzle": .drizzle
        case "thunderstorm", "storm", "stormy": .thunderstorm
        case "snowing", "snow", "snowy": .snow
        case "fog", "foggy": .fog
        default: .other
        }
    }

    static func temperature(_ v: String) -> Double? {
        switch v {
        case "freezing", "very cold": -5
        case "cold": 3
        case "cool": 10
        case "mild": 16
        case "warm": 23
        case "hot": 30
        default: nil
        }
    }

    static func activity(_ v: String) -> Activity? {
        switch v {
        case "walking", "walk", "on foot": .walking
        case "running": .running
        case "bicycle", "bike", "cycling": .cycling
        case "car", "driving", "public transport", "bus", "train", "tram": .automotive
        case "no transportation", "none", "stationary": .stationary
        default: nil
        }
    }
}
