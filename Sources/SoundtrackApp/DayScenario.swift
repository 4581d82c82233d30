import Foundation
import SoundtrackCatalog
import SoundtrackContext

/// A scene of a simulated day: a context the phone reports and the taste the listener has there.
public struct Scene: Sendable {
    /// A short name (`library`).
    public var name: String
    /// How the story introduces it.
    public var headline: String
    /// Minutes after midnight, local time.
    public var minuteOfDay: Int
    /// How many picks the listener hears in this scene.
    public var picks: Int
    /// The snapshot the phone sends at a time.
    public var snapshot: @Sendable (_ user: String, _ at: Timestamp) -> Snapshot
    /// The listener's hidden taste here: does she like the track?
    public var likes: @Sendable (Track) -> Bool
}

/// The demo's day in a user's life: home, a commute by car, the library, the gym, an evening at home.
public enum DayScenario {
    /// The offset of the demo's local time (Central European Time).
    public static let offset = 3600
    /// Midnight of the first demo day, Monday 9 March 2026, local time.
    public static let firstDay = Timestamp(rfc3339: "2026-03-09T00:00:00+01:00")!.date

    /// The time `minute` minutes after midnight of day `day` (0-based), in the demo's offset.
    public static func time(day: Int, minute: Int) -> Timestamp {
        Timestamp(date: firstDay.addingTimeInterval(Double(day) * 86400 + Double(minute) * 60), offsetSeconds: offset)
    }

    static func weather(_ at: Timestamp, temp: Double, condition: WeatherCondition, clouds: Double, precip: Double = 0) -> Weather {
        let midnight = at.date.addingTimeInterval(-Double(at.localMinuteOfDay) * 60)
        return Weather(
            tempC: temp, windMps: 3.4, cloudPct: clouds, humidityPct: 70, precipMmH: precip, condition: condition,
            sunrise: Timestamp(date: midnight.addingTimeInterval(6.6 * 3600), offsetSeconds: at.offsetSeconds),
            sunset: Timestamp(date: midnight.addingTimeInterval(18.4 * 3600), offsetSeconds: at.offsetSeconds))
    }

    static func feature(_ t: Track, _ key: KeyPath<AudioFeatures, Double?>) -> Double { t.audio[keyPath: key] ?? 0.5 }

    /// The five scenes, in the order of the day.
    public static let scenes: [Scene] = [
        Scene(
            name: "home-morning", headline: "Home, waking up", minuteOfDay: 7 * 60 + 10, picks: 3,
            snapshot: { user, at in
                Snapshot(
                    user: user, at: at,
                    location: Location(lat: 52.5163, lon: 13.3777, accuracyM: 15, speedMps: 0, place: "home"),
                    weather: weather(at, temp: 3.5, condition: .clear, clouds: 10),
                    calendar: CalendarInfo(events: [
                        CalendarEvent(
                            title: "Study group – algorithms", start: time(day: 0, minute: 9 * 60 + 30).shifted(toDayOf: at),
                            end: time(day: 0, minute: 11 * 60).shifted(toDayOf: at))
                    ]),
                    motion: Motion(activity: .stationary, stepsPerMin: 0, stepsToday: 120, heartRateBpm: 62),
                    audio: AudioState(route: .speaker, volume: 0.4))
            },
            likes: { t in feature(t, \.valence) >= 0.45 && feature(t, \.energy) <= 0.75 }),
        Scene(
            name: "commute", headline: "Commute by car", minuteOfDay: 8 * 60 + 15, picks: 4,
            snapshot: { user, at in
                Snapshot(
                    user: user, at: at,
                    location: Location(lat: 52.5200, lon: 13.4050, accuracyM: 8, speedMps: 13.5),
                    weather: weather(at, temp: 4.0, condition: .clouds, clouds: 60),
                    bluetooth: Bluetooth(devices: [BluetoothDevice(name: "VW Golf", kind: .car)]),
                    motion: Motion(activity: .automotive, stepsPerMin: 0, stepsToday: 900, heartRateBpm: 70),
                    audio: AudioState(route: .car, volume: 0.6),
                    tags: ["traffic": "heavy"])
            },
            likes: { t in feature(t, \.danceability) >= 0.6 && feature(t, \.energy) >= 0.55 }),
        Scene(
            name: "library", headline: "Library, study group", minuteOfDay: 9 * 60 + 40, picks: 4,
            snapshot: { user, at in
                Snapshot(
                    user: user, at: at,
                    location: Location(lat: 52.5186, lon: 13.3932, accuracyM: 20, speedMps: 0, place: "library"),
                    weather: weather(at, temp: 5.0, condition: .clouds, clouds: 75),
                    calendar: CalendarInfo(events: [
                        CalendarEvent(title: "Study group – algorithms", start: at.adding(minutes: -10), end: at.adding(minutes: 80))
                    ]),
                    bluetooth: Bluetooth(devices: [BluetoothDevice(name: "WH-1000XM4", kind: .headphones)]),
                    motion: Motion(activity: .stationary, stepsPerMin: 0, stepsToday: 2150, heartRateBpm: 64),
                    audio: AudioState(route: .headphones, volume: 0.35),
                    tags: ["mood": "focused"])
            },
            likes: { t in
                (feature(t, \.acousticness) >= 0.5 || feature(t, \.instrumentalness) >= 0.3)
                    && feature(t, \.energy) <= 0.55 && feature(t, \.speechiness) <= 0.1
            }),
        Scene(
            name: "gym", headline: "Gym, leg day", minuteOfDay: 17 * 60 + 30, picks: 4,
            snapshot: { user, at in
                Snapshot(
                    user: user, at: at,
                    location: Location(lat: 52.5030, lon: 13.4110, accuracyM: 10, speedMps: 2.9, place: "gym"),
                    weather: weather(at, temp: 7.0, condition: .clear, clouds: 20),
                    calendar: CalendarInfo(events: [
                        CalendarEvent(title: "Leg day", start: at.adding(minutes: -5), end: at.adding(minutes: 55))
                    ]),
                    bluetooth: Bluetooth(devices: [BluetoothDevice(name: "Galaxy Buds", kind: .headphones), BluetoothDevice(name: "Forerunner", kind: .watch)]),
                    motion: Motion(activity: .running, stepsPerMin: 165, stepsToday: 9800, heartRateBpm: 152),
                    audio: AudioState(route: .headphones, volume: 0.8))
            },
            likes: { t in feature(t, \.energy) >= 0.7 && feature(t, \.tempo) >= 110 }),
        Scene(
            name: "evening", headline: "Evening at home, rain outside", minuteOfDay: 21 * 60, picks: 3,
            snapshot: { user, at in
                Snapshot(
                    user: user, at: at,
                    location: Location(lat: 52.5163, lon: 13.3777, accuracyM: 15, speedMps: 0, place: "home"),
                    weather: weather(at, temp: 6.0, condition: .rain, clouds: 95, precip: 1.2),
                    calendar: CalendarInfo(events: []),
                    bluetooth: Bluetooth(devices: [BluetoothDevice(name: "Living room", kind: .speaker)]),
                    motion: Motion(activity: .stationary, stepsPerMin: 0, stepsToday: 11200, heartRateBpm: 66),
                    audio: AudioState(route: .bluetooth, volume: 0.3),
                    tags: ["mood": "relaxed"])
            },
            likes: { t in feature(t, \.energy) <= 0.5 && feature(t, \.acousticness) >= 0.25 })
    ]
}

extension Timestamp {
    /// The same instant moved by whole minutes, in the same offset.
    public func adding(minutes: Int) -> Timestamp {
        Timestamp(date: date.addingTimeInterval(Double(minutes) * 60), offsetSeconds: offsetSeconds)
    }

    /// This time of day on the day of `other`.
    func shifted(toDayOf other: Timestamp) -> Timestamp {
        let dayShift = (other.date.timeIntervalSince(DayScenario.firstDay) / 86400).rounded(.down)
        return Timestamp(date: date.addingTimeInterval(dayShift * 86400), offsetSeconds: offsetSeconds)
    }
}
