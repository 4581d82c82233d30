import Foundation
import SoundtrackCatalog
import SoundtrackContext

@testable import SoundtrackEngine

/// Shared test fixtures: the real catalog, the shipped models and snapshots of the seed scenarios.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The shipped thresholds file decoded with `key` set to `value` (`nil`: without the key): the
    /// tests of an optional field's default, range and error.
    /// - Throws: what ``Thresholds/decode(_:)`` throws for the changed document.
    static func shippedThresholds(setting key: String, to value: Any?) throws -> Thresholds {
        let url = root.appendingPathComponent("Models/thresholds.v2.json")
        var doc = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] ?? [:]
        doc[key] = value
        return try Thresholds.decode(JSONSerialization.data(withJSONObject: doc))
    }

    static let catalog: CatalogIndex = {
        let url = root.appendingPathComponent("datasets/musicoset/catalog.csv")
        let (tracks, _) = try! CatalogReader().read(contentsOf: url)
        return CatalogIndex(tracks: tracks)
    }()

    static let priors: ColdStartPriors = try! ColdStartPriors.load(from: root.appendingPathComponent("Models/priors.v1.json"))

    static let config: EngineConfig = {
        let t = try! Thresholds.load(from: root.appendingPathComponent("Models/thresholds.v2.json"))
        let w = try! DefaultWeights.load(from: root.appendingPathComponent("Models/weights.v2.json"))
        return EngineConfig(thresholds: t, weights: w)
    }()

    static func engine(seed: UInt64 = 7) -> Recommender {
        Recommender(config: config, catalog: IndexCatalog(catalog), priors: priors, seed: seed)
    }

    static func at(_ s: String) -> Timestamp { Timestamp(rfc3339: s)! }

    /// A weekday morning in the library with a study group on the calendar and headphones on.
    static func library(_ user: String = "u-1", at time: String = "2026-03-11T09:40:00+01:00") -> Snapshot {
        let t = at(time)
        return Snapshot(
            user: user, at: t,
            location: Location(lat: 52.5186, lon: 13.3932, accuracyM: 20, speedMps: 0, place: "library"),
            weather: Weather(tempC: 5, windMps: 3, cloudPct: 75, humidityPct: 70, precipMmH: 0, condition: .clouds),
            calendar: CalendarInfo(events: [CalendarEvent(title: "Study group – algorithms", start: t.adding(-10), end: t.adding(80))]),
            bluetooth: Bluetooth(devices: [BluetoothDevice(name: "WH-1000XM4", kind: .headphones)]),
            motion: Motion(activity: .stationary, stepsPerMin: 0, stepsToday: 2150, heartRateBpm: 64),
            audio: AudioState(route: .headphones, volume: 0.35))
    }

    /// A run at the gym: high cadence, high heart rate.
    static func gym(_ user: String = "u-1", at time: String = "2026-03-11T17:30:00+01:00") -> Snapshot {
        let t = at(time)
        return Snapshot(
            user: user, at: t,
            location: Location(lat: 52.5030, lon: 13.4110, accuracyM: 10, speedMps: 2.9, place: "gym"),
            calendar: CalendarInfo(events: [CalendarEvent(title: "Leg day", start: t.adding(-5), end: t.adding(55))]),
            bluetooth: Bluetooth(devices: [BluetoothDevice(name: "Galaxy Buds", kind: .headphones)]),
            motion: Motion(activity: .running, stepsPerMin: 168, stepsToday: 9800, heartRateBpm: 155),
            audio: AudioState(route: .headphones, volume: 0.8))
    }

    /// Driving with the car's Bluetooth connected.
    static func car(_ user: String = "u-1", at time: String = "2026-03-11T08:15:00+01:00") -> Snapshot {
        let t = at(time)
        return Snapshot(
            user: user, at: t,
            location: Location(lat: 52.52, lon: 13.405, accuracyM: 8, speedMps: 13.5),
            bluetooth: Bluetooth(devices: [BluetoothDevice(name: "VW Golf", kind: .car)]),
            motion: Motion(activity: .automotive),
            audio: AudioState(route: .car, volume: 0.6))
    }

    static func meanEnergy(_ bin: Bin) -> Double {
        let e = bin.songs.compactMap { catalog.row(of: $0.trackId).flatMap { catalog.tracks[$0].audio.energy } }
        return e.reduce(0, +) / Double(max(1, e.count))
    }

    static let catalogMeanEnergy: Double = {
        let e = catalog.tracks.compactMap(\.audio.energy)
        return e.reduce(0, +) / Double(e.count)
    }()
}

extension Timestamp {
    func adding(_ minutes: Int) -> Timestamp {
        Timestamp(date: date.addingTimeInterval(Double(minutes) * 60), offsetSeconds: offsetSeconds)
    }
}
