import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

/// A place on a simulated person's map.
public struct SimPlace: Sendable, Equatable {
    /// What the place is (`home`, `office`, `university`, `gym`, `park`, `supermarket`, `cafe`, `friends`).
    public var kind: String
    /// Latitude in degrees.
    public var lat: Double
    /// Longitude in degrees.
    public var lon: Double
}

/// A city the simulation places people in: a centre, a UTC offset and a climate.
public struct SimCity: Sendable, Equatable {
    /// The city's name.
    public var name: String
    /// Centre latitude.
    public var lat: Double
    /// Centre longitude.
    public var lon: Double
    /// Local offset from UTC in seconds (no daylight saving).
    public var offsetSeconds: Int
    /// Mean daily temperature in °C over the simulated weeks.
    public var meanTemp: Double
    /// Chance of a wet hour when the sky is overcast.
    public var wetness: Double

    /// The cities of the simulation.
    public static let all: [SimCity] = [
        SimCity(name: "Berlin", lat: 52.5200, lon: 13.4050, offsetSeconds: 3600, meanTemp: 7, wetness: 0.35),
        SimCity(name: "Madrid", lat: 40.4168, lon: -3.7038, offsetSeconds: 3600, meanTemp: 13, wetness: 0.2),
        SimCity(name: "New York", lat: 40.7128, lon: -74.0060, offsetSeconds: -18000, meanTemp: 8, wetness: 0.3),
        SimCity(name: "Tokyo", lat: 35.6762, lon: 139.6503, offsetSeconds: 32400, meanTemp: 11, wetness: 0.3)
    ]
}

/// One simulated person: a map, a weekly routine, devices, what they share, and a hidden taste per context.
public struct SimulatedUser: Sendable {
    /// How a person gets to work or school.
    public enum Commute: String, Sendable { case car, transit, bike }

    /// The user id (`sim-0001`).
    public var id: String
    /// The city (index into ``SimCity/all``).
    public var city: SimCity
    /// A student (studies at a university) or a worker (works at an office).
    public var student: Bool
    /// Home, workplace or university, gym, park, supermarket, café, a friend's place.
    public var places: [String: SimPlace]
    /// How they commute.
    public var commute: Commute
    /// Weekdays (Monday = 0) with an evening at the gym.
    public var gymDays: Set<Int>
    /// Whether they run in the park on weekend mornings.
    public var runner: Bool
    /// Whether the phone shares the calendar.
    public var sharesCalendar: Bool
    /// Whether the app knows place labels (else only coordinates are sent).
    public var labelsPlaces: Bool
    /// Headphones, car (when commuting by car), home speaker and watch names.
    public var headphones: String
    /// The car's Bluetooth name, when they drive.
    public var carName: String?
    /// The Bluetooth speaker at home.
    public var speaker: String
    /// The hidden taste per context.
    public var tastes: [ContextLabel: Taste]
    /// Like when utility + noise exceeds this.
    public var threshold: Double
    /// Rows of the catalog the person plays music from themselves (their library).
    public var library: [Int]
    /// Average steps per waking minute.
    public var stepRate: Double
    /// Tracks the person likes in every context beyond what their sound says (ids): what they liked
    /// before and come back to (25 drawn from their library).
    public var favourites: Set<String> = []
    /// The scene the person belongs to, and the tracks its people like (ids): what people with
    /// the same taste like (``Population/scenes``).
    public var scene = 0
    public var sceneFavourites: Set<String> = []
    /// The playback volume the person wants in each context (0.05…1, in steps of 0.05): the
    /// context's usual volume (``baseVolume(_:)``) moved by the person's own loudness and a little
    /// more in each context. What the phone reports is this volume once the person has set it, and
    /// the last context's before (``Population/slots(user:)``); `eval --online` scores a pick's
    /// suggested volume against it.
    public var volumes: [ContextLabel: Double] = [:]

    /// The volume most people want in a context, before their own preference.
    public func baseVolume(_ context: ContextLabel) -> Double {
        switch context {
        case .wake: return 0.35
        case .commute: return commute == .car ? 0.6 : commute == .transit ? 0.55 : 0.5
        case .work, .study: return 0.35
        case .workout: return 0.8
        case .run: return 0.75
        case .relax: return 0.3
        case .social: return 0.7
        case .errand: return 0.5
        }
    }

    /// The person's volume in a context (``volumes``).
    public func volume(in context: ContextLabel) -> Double { volumes[context] ?? baseVolume(context) }

    /// Draws the person's volumes from `rng`: a loudness of their own in −0.15…0.15, and −0.1…0.1 more
    /// in each context.
    mutating func drawVolumes(_ rng: inout SeededGenerator) {
        let loudness = (rng.unit() - 0.5) * 0.3
        for c in ContextLabel.allCases {
            let v = baseVolume(c) + loudness + (rng.unit() - 0.5) * 0.2
            volumes[c] = min(1, max(0.05, (v * 20).rounded() / 20))
        }
    }

    /// The shares of the utility: the context's taste (sound and genres), the track's popularity,
    /// and the person's affinity to it (their favourites count 1, their scene's 0.6). Real people
    /// like what sounds right, but also what they liked before, what people like them like and
    /// what is popular; a blend fitted on a simulation without these parts learns that sound alone
    /// decides (docs/evaluation.md, "The simulated population").
    public static let utilityShares = (taste: 0.7, popularity: 0.15, affinity: 0.15)

    /// The utility of a track in a context, in [0, 1] (``utilityShares``): `nil` for a context the
    /// person does not have.
    public func utility(_ track: Track, in context: ContextLabel) -> Double? {
        guard let taste = tastes[context] else { return nil }
        let shares = Self.utilityShares
        let popularity = Double(track.popularity ?? 50) / 100
        let affinity = favourites.contains(track.id) ? 1 : sceneFavourites.contains(track.id) ? 0.6 : 0
        return shares.taste * taste.utility(track) + shares.popularity * popularity + shares.affinity * affinity
    }

    /// The contexts this person's routine has.
    public var contexts: [ContextLabel] {
        var c: [ContextLabel] = [.wake, .commute, student ? .study : .work, .relax, .social, .errand]
        if !gymDays.isEmpty { c.append(.workout) }
        if runner { c.append(.run) }
        return c.sorted()
    }

    /// Whether the person likes a track in a context, given the noise draw `noise` (a standard normal).
    public func likes(_ track: Track, in context: ContextLabel, noise: Double) -> Bool {
        guard let u = utility(track, in: context) else { return false }
        return u + 0.07 * noise > threshold
    }
}

extension SimulatedUser {
    /// Generates person number `index` of a population, deterministically from the seed.
    ///
    /// - Parameters:
    ///   - index: 0-based; the id is `sim-<index+1, 4 digits>`.
    ///   - seed: the population seed.
    ///   - catalog: the catalog tastes and libraries are drawn from.
    ///   - topGenres: the catalog's most common genres (favourite genres are drawn from them).
    static func generate(index: Int, seed: UInt64, catalog: CatalogIndex, topGenres: [String], scenes: [Set<String>] = []) -> SimulatedUser {
        var rng = SeededGenerator(seed: seed, user: "sim-user", counter: Int64(index))
        let id = String(format: "sim-%04d", index + 1)
        let city = SimCity.all[Int(rng.next() % UInt64(SimCity.all.count))]
        let student = rng.unit() < 0.4
        func around(_ lat: Double, _ lon: Double, km: ClosedRange<Double>, rng: inout SeededGenerator) -> (Double, Double) {
            let r = km.lowerBound + rng.unit() * (km.upperBound - km.lowerBound)
            let a = rng.unit() * 2 * .pi
            let dlat = r * cos(a) / 111.0
            let dlon = r * sin(a) / (111.0 * cos(lat * .pi / 180))
            return (((lat + dlat) * 1e5).rounded() / 1e5, ((lon + dlon) * 1e5).rounded() / 1e5)
        }
        let home = around(city.lat, city.lon, km: 1...8, rng: &rng)
        var places: [String: SimPlace] = [:]
        places["home"] = SimPlace(kind: "home", lat: home.0, lon: home.1)
        let w = around(home.0, home.1, km: 3...10, rng: &rng)
        places["work"] = SimPlace(kind: student ? "university" : "office", lat: w.0, lon: w.1)
        for (key, kind, km) in [
            ("gym", "gym", 0.5...3.0), ("park", "park", 0.4...2.0), ("shop", "supermarket", 0.3...1.5), ("cafe", "cafe", 0.5...4.0), ("friend", "friends", 2.0...8.0)
        ] {
            let p = around(home.0, home.1, km: km, rng: &rng)
            places[key] = SimPlace(kind: kind, lat: p.0, lon: p.1)
        }
        let commuteDraw = rng.unit()
        let commute: Commute = commuteDraw < 0.4 ? .car : (commuteDraw < 0.8 ? .transit : .bike)
        var gymDays = Set<Int>()
        if rng.unit() < 0.75 {
            let n = 2 + Int(rng.next() % 2)
            var days = [0, 1, 2, 3, 4]
            days.shuffle(using: &rng)
            gymDays = Set(days.prefix(n))
        }
        let runner = rng.unit() < 0.5
        let sharesCalendar = rng.unit() < 0.8
        let labelsPlaces = rng.unit() < 0.7
        let headphones = ["WH-1000XM4", "AirPods Pro", "Galaxy Buds", "Bose QC45", "Jabra Elite"][Int(rng.next() % 5)]
        let carName = commute == .car ? ["VW Golf", "Toyota Corolla", "Ford Focus", "Honda Civic"][Int(rng.next() % 4)] : nil
        let speaker = ["Living room", "Sonos One", "JBL Flip", "Echo"][Int(rng.next() % 4)]

        var tastes: [ContextLabel: Taste] = [:]
        for c in ContextLabel.allCases {
            let target = c.archetype.map { min(1, max(0, $0 + 0.08 * rng.normal())) }
            let importance = (0..<5).map { _ in 0.5 + rng.unit() }
            var pool = topGenres
            pool.shuffle(using: &rng)
            tastes[c] = Taste(target: target, importance: importance, genres: Array(pool.prefix(3)).sorted())
        }
        // 0.1 below the utility's old scale of taste alone, so that people like about as often.
        let threshold = 0.45 + 0.1 * rng.unit()

        // The library: for each context, tracks drawn from the best-fitting of a random sample, plus random tracks.
        var library = Set<Int>()
        let n = catalog.count
        if n > 0 {
            for c in ContextLabel.allCases {
                let taste = tastes[c]!
                var sample: [(Double, Int)] = []
                for _ in 0..<min(n, 400) {
                    let r = Int(rng.next() % UInt64(n))
                    sample.append((taste.utility(catalog.tracks[r]), r))
                }
                sample.sort { $0.0 != $1.0 ? $0.0 > $1.0 : $0.1 < $1.1 }
                for (_, r) in sample.prefix(30) { library.insert(r) }
            }
            for _ in 0..<min(n, 80) { library.insert(Int(rng.next() % UInt64(n))) }
        }
        var user = SimulatedUser(
            id: id, city: city, student: student, places: places, commute: commute, gymDays: gymDays, runner: runner,
            sharesCalendar: sharesCalendar, labelsPlaces: labelsPlaces, headphones: headphones, carName: carName,
            speaker: speaker, tastes: tastes, threshold: threshold, library: library.sorted(), stepRate: 5 + 7 * rng.unit())
        // Drawn apart, so that everything drawn above is what it was before these parts existed.
        var affinity = SeededGenerator(seed: seed, user: "sim-affinity", counter: Int64(index))
        var own = user.library
        own.shuffle(using: &affinity)
        user.favourites = Set(own.prefix(25).map { catalog.tracks[$0].id })
        if !scenes.isEmpty {
            user.scene = Int(affinity.next() % UInt64(scenes.count))
            user.sceneFavourites = scenes[user.scene]
            // The scene's music is part of the person's own: 20 of its tracks join the library.
            var shared = scenes[user.scene].sorted()
            shared.shuffle(using: &affinity)
            user.library = Array(Set(user.library).union(shared.prefix(20).compactMap { catalog.row(of: $0) })).sorted()
        }
        // Drawn apart as well: the volumes came after everything above.
        var loudness = SeededGenerator(seed: seed, user: "sim-volume", counter: Int64(index))
        user.drawVolumes(&loudness)
        return user
    }

    /// The person as JSON (`users.jsonl` of `simulate`): map, routine, devices and hidden taste.
    public func json(catalog: CatalogIndex) -> JSONValue {
        func num(_ x: Double) -> JSONValue { .number((x * 1000).rounded() / 1000) }
        let placeList = places.keys.sorted().map { key -> (String, JSONValue) in
            let p = places[key]!
            return (key, .object([("kind", .string(p.kind)), ("lat", .number(p.lat)), ("lon", .number(p.lon))]))
        }
        let tasteList = tastes.keys.sorted().map { c -> (String, JSONValue) in
            let t = tastes[c]!
            return (
                c.rawValue,
                .object([
                    ("target", .object(zip(Taste.featureNames, t.target).map { ($0, num($1)) })),
                    ("importance", .object(zip(Taste.featureNames, t.importance).map { ($0, num($1)) })),
                    ("genres", .array(t.genres.map(JSONValue.string)))
                ])
            )
        }
        return .object([
            ("user", .string(id)), ("city", .string(city.name)), ("offset_seconds", .number(Double(city.offsetSeconds))),
            ("occupation", .string(student ? "student" : "worker")), ("commute", .string(commute.rawValue)),
            ("gym_days", .array(gymDays.sorted().map { .number(Double($0)) })), ("runner", .bool(runner)),
            ("shares_calendar", .bool(sharesCalendar)), ("labels_places", .bool(labelsPlaces)),
            (
                "devices",
                .object([
                    ("headphones", .string(headphones)), ("car", carName.map(JSONValue.string) ?? .null), ("speaker", .string(speaker))
                ])
            ),
            ("places", .object(placeList)), ("contexts", .array(contexts.map { .string($0.rawValue) })),
            ("threshold", num(threshold)), ("tastes", .object(tasteList)), ("scene", .number(Double(scene))),
            ("favourites", .array(favourites.sorted().map { .string($0) })),
            ("volumes", .object(ContextLabel.allCases.map { ($0.rawValue, num(volume(in: $0))) })),
            ("library", .array(library.map { .string(catalog.tracks[$0].id) }))
        ])
    }
}
