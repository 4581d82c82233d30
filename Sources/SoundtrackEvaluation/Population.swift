import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

/// One moment a simulated person listens to music: the snapshot their phone sends and the
/// ground-truth context.
public struct ListeningSlot: Sendable {
    /// The person (index into ``Population/users``).
    public var user: Int
    /// The slot's number within the person's timeline (0-based, in time order).
    public var number: Int
    /// The simulated day (0-based).
    public var day: Int
    /// What the person is doing: the ground truth the engine never sees.
    public var context: ContextLabel
    /// The episode (a run of slots in one context) the slot belongs to, numbered per person.
    public var episode: Int
    /// The snapshot the phone sends.
    public var snapshot: Snapshot
    /// The playback volume the person wants here (``SimulatedUser/volume(in:)``): the truth a
    /// pick's suggested volume is scored against.
    public var volume: Double
}

/// A synthetic population for development and benchmarks (`soundtrack simulate`).
///
/// Each person lives in one of four cities, with a home, a workplace or university, a gym, a park,
/// a supermarket, a café and a friend's place on the map; follows a weekly routine (wake up,
/// commute, work or study, gym evenings, weekend runs and errands, Friday or Saturday nights out,
/// evenings at home); has a calendar with titled events, Bluetooth devices (headphones, a car, a home
/// speaker, a watch at the gym), steps and heart rate that fit the activity, and weather that
/// changes by the hour. Each person has a hidden ``Taste`` per context. Everything derives from
/// the seed: the same seed, sizes and catalog give the same population, snapshots and answers.
///
/// ```swift
/// let population = Population(users: 20, days: 7, seed: 1, catalog: index)
/// let (events, truth) = population.feedbackLog()
/// ```
public struct Population: Sendable {
    /// The people.
    public let users: [SimulatedUser]
    /// How many days are simulated.
    public let days: Int
    /// The seed everything derives from.
    public let seed: UInt64
    /// The catalog tracks are drawn from.
    public let catalog: CatalogIndex
    /// The first simulated day, Monday 2 March 2026 (local midnight in each person's city).
    public static let firstDay = Timestamp(rfc3339: "2026-03-02T00:00:00+00:00")!.date

    /// Minutes between two plays of an episode.
    public static let minutesPerPlay = 4

    /// Generates a population.
    /// - Parameters:
    ///   - users: how many people (≥ 1).
    ///   - days: how many days (≥ 1).
    ///   - seed: the seed.
    ///   - catalog: the catalog (tastes, libraries and answers refer to its tracks).
    public init(users: Int, days: Int, seed: UInt64, catalog: CatalogIndex) {
        self.days = days
        self.seed = seed
        self.catalog = catalog
        var counts: [String: Int] = [:]
        for t in catalog.tracks { for g in t.genres { counts[g, default: 0] += 1 } }
        let top = counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(30).map(\.key)
        let scenes = Self.scenes(seed: seed, catalog: catalog)
        self.users = (0..<users).map { SimulatedUser.generate(index: $0, seed: seed, catalog: catalog, topGenres: top, scenes: scenes) }
    }

    /// The share of the listening slots of ``feedbackLog()`` that play from the charts (``charts``)
    /// instead of the person's library.
    public static let chartShare = 0.25
    /// The catalog's 300 most popular tracks (ties: the lower row), by row.
    public var charts: [Int] {
        Array(catalog.tracks.indices.sorted { (catalog.tracks[$0].popularity ?? 0, $1) > (catalog.tracks[$1].popularity ?? 0, $0) }.prefix(300))
    }

    /// How many scenes the population has, and how many tracks each scene's people like.
    public static let sceneCount = 8
    public static let sceneSize = 120

    /// The scenes: groups of people who like the same tracks (``SimulatedUser/sceneFavourites``),
    /// each ``sceneSize`` tracks drawn from the catalog's tracks of popularity 30 or more (all
    /// tracks if fewer than that), seeded.
    static func scenes(seed: UInt64, catalog: CatalogIndex) -> [Set<String>] {
        let known = catalog.tracks.indices.filter { (catalog.tracks[$0].popularity ?? 0) >= 30 }
        let pool = known.count >= sceneSize ? known : Array(catalog.tracks.indices)
        guard !pool.isEmpty else { return [] }
        var rng = SeededGenerator(seed: seed, user: "sim-scenes", counter: 0)
        return (0..<sceneCount).map { _ in
            Set((0..<sceneSize).map { _ in catalog.tracks[pool[Int(rng.next() % UInt64(pool.count))]].id })
        }
    }

    // MARK: - Timeline

    struct Episode {
        var context: ContextLabel
        var minute: Int
        var plays: Int
    }

    /// The routine of a person on one day: episodes in time order.
    func plan(user u: SimulatedUser, index: Int, day: Int) -> [Episode] {
        var rng = SeededGenerator(seed: seed ^ 0x706c_616e, user: u.id, counter: Int64(day))
        let weekday = day % 7
        var eps: [Episode] = []
        func add(_ c: ContextLabel, _ base: Int, jitter: Int, plays: ClosedRange<Int>, p: Double = 1) {
            guard rng.unit() < p else { return }
            let m = base + Int(rng.next() % UInt64(jitter + 1))
            let n = plays.lowerBound + Int(rng.next() % UInt64(plays.count))
            eps.append(Episode(context: c, minute: m, plays: n))
        }
        if weekday < 5 {
            add(.wake, 6 * 60 + 30, jitter: 40, plays: 2...4, p: 0.9)
            add(.commute, 8 * 60 + 5, jitter: 25, plays: 3...5)
            add(u.student ? .study : .work, 9 * 60 + 45, jitter: 40, plays: 3...5)
            add(u.student ? .study : .work, 14 * 60, jitter: 60, plays: 2...4, p: 0.6)
            if u.gymDays.contains(weekday) { add(.workout, 18 * 60, jitter: 45, plays: 3...5, p: 0.9) }
            let out = eps.count
            if weekday == 4 { add(.social, 20 * 60, jitter: 30, plays: 2...4, p: 0.6) }
            if eps.count == out { add(.relax, 21 * 60 + 15, jitter: 45, plays: 2...4, p: 0.8) }
        } else {
            add(.wake, 8 * 60 + 45, jitter: 50, plays: 2...4, p: 0.9)
            if u.runner { add(.run, 10 * 60 + 30, jitter: 30, plays: 3...5, p: 0.7) }
            add(.errand, 12 * 60 + 30, jitter: 60, plays: 2...3, p: weekday == 5 ? 0.6 : 0.3)
            let out = eps.count
            if weekday == 5 { add(.social, 20 * 60, jitter: 30, plays: 2...4, p: 0.6) }
            if eps.count == out { add(.relax, 21 * 60 + 15, jitter: 45, plays: 2...4, p: 0.8) }
        }
        return eps
    }

    /// Every listening slot of a person, in time order.
    public func slots(user index: Int) -> [ListeningSlot] {
        let u = users[index]
        var out: [ListeningSlot] = []
        var episode = 0
        // The phone's volume: where the person left it in the last context, until they set this one's.
        var phoneVolume = 0.5
        for day in 0..<days {
            let weather = HourlyWeather(city: u.city, day: day, seed: seed)
            for ep in plan(user: u, index: index, day: day) {
                var rng = SeededGenerator(seed: seed ^ 0x736e_6170, user: u.id, counter: Int64(episode))
                let wanted = u.volume(in: ep.context)
                for i in 0..<ep.plays {
                    let minute = ep.minute + i * Self.minutesPerPlay
                    var snapshot = makeSnapshot(u, day: day, minute: minute, episode: ep, play: i, weather: weather, rng: &rng)
                    snapshot.audio?.volume = phoneVolume
                    out.append(
                        ListeningSlot(
                            user: index, number: out.count, day: day, context: ep.context, episode: episode, snapshot: snapshot, volume: wanted))
                    phoneVolume = wanted  // set during the first play
                }
                episode += 1
            }
        }
        return out
    }

    /// Local time `minute` after midnight of `day` in a city.
    static func time(_ city: SimCity, day: Int, minute: Int) -> Timestamp {
        Timestamp(
            date: firstDay.addingTimeInterval(Double(day) * 86400 + Double(minute) * 60 - Double(city.offsetSeconds)),
            offsetSeconds: city.offsetSeconds)
    }

    // MARK: - Snapshots

    func makeSnapshot(_ u: SimulatedUser, day: Int, minute: Int, episode ep: Episode, play: Int, weather: HourlyWeather, rng: inout SeededGenerator) -> Snapshot {
        let at = Self.time(u.city, day: day, minute: minute)
        func round1(_ x: Double) -> Double { (x * 10).rounded() / 10 }
        func round5(_ x: Double) -> Double { (x * 1e5).rounded() / 1e5 }
        func near(_ key: String, speed: Double, rng: inout SeededGenerator) -> Location {
            let p = u.places[key]!
            return Location(
                lat: round5(p.lat + (rng.unit() - 0.5) * 0.0004), lon: round5(p.lon + (rng.unit() - 0.5) * 0.0004),
                accuracyM: round1(5 + 20 * rng.unit()), speedMps: round1(speed), place: u.labelsPlaces ? p.kind : nil)
        }
        func calendar(_ events: [(String, Int, Int)]) -> CalendarInfo? {
            guard u.sharesCalendar else { return nil }
            return CalendarInfo(
                events: events.map { title, start, end in
                    CalendarEvent(title: title, start: Self.time(u.city, day: day, minute: start), end: Self.time(u.city, day: day, minute: end))
                })
        }
        func pickTitle(_ titles: [String]) -> String { titles[(day + ep.minute) % titles.count] }
        let headphones = BluetoothDevice(name: u.headphones, kind: .headphones)
        let awake = Double(max(0, minute - 7 * 60))
        var steps = u.stepRate * awake
        var location: Location
        var calendarInfo: CalendarInfo?
        var devices: [BluetoothDevice] = []
        var motion: Motion
        var audio: AudioState
        var tags: [String: String]?
        func hr(_ lo: Double, _ hi: Double) -> Double { (lo + (hi - lo) * rng.unit()).rounded() }
        let epEnd = ep.minute + ep.plays * Self.minutesPerPlay + 10
        let firstTitle =
            u.student ? pickTitle(["Lecture – linear algebra", "Lecture – databases", "Seminar: machine learning"]) : pickTitle(["Team standup", "Project planning", "Client call"])

        switch ep.context {
        case .wake:
            location = near("home", speed: 0, rng: &rng)
            calendarInfo = calendar(day % 7 < 5 ? [(firstTitle, 9 * 60 + 30, 11 * 60)] : [])
            motion = Motion(activity: .stationary, stepsPerMin: 0, stepsToday: steps, heartRateBpm: hr(56, 68))
            audio = AudioState(route: .speaker, volume: 0.35)
        case .commute:
            let home = u.places["home"]!, work = u.places["work"]!
            let f = Double(play + 1) / Double(ep.plays + 1)
            let speed: Double
            let activity: Activity
            switch u.commute {
            case .car:
                speed = 8 + 8 * rng.unit(); activity = .automotive
                devices = [BluetoothDevice(name: u.carName, kind: .car)]
                audio = AudioState(route: .car, volume: 0.6)
            case .transit:
                speed = 6 + 6 * rng.unit(); activity = .automotive
                devices = [headphones]
                audio = AudioState(route: .headphones, volume: 0.55)
            case .bike:
                speed = 4 + 2 * rng.unit(); activity = .cycling
                devices = [headphones]
                audio = AudioState(route: .headphones, volume: 0.5)
            }
            location = Location(
                lat: round5(home.lat + f * (work.lat - home.lat)), lon: round5(home.lon + f * (work.lon - home.lon)),
                accuracyM: round1(5 + 15 * rng.unit()), speedMps: round1(speed))
            calendarInfo = calendar([(firstTitle, 9 * 60 + 30, 11 * 60)])
            motion = Motion(activity: activity, stepsPerMin: 0, stepsToday: steps, heartRateBpm: hr(u.commute == .bike ? 100 : 64, u.commute == .bike ? 125 : 78))
            if rng.unit() < 0.5 { tags = ["traffic": rng.unit() < 0.5 ? "heavy" : "light"] }
        case .work, .study:
            location = near("work", speed: 0, rng: &rng)
            let title =
                ep.context == .study
                ? pickTitle(["Study group – algorithms", "Exam prep", "Lecture – statistics", "Homework"])
                : pickTitle(["Project work", "Code review", "Quarterly report", "Team meeting"])
            calendarInfo = calendar([(title, ep.minute - 10, epEnd + 60)])
            devices = [headphones]
            motion = Motion(activity: .stationary, stepsPerMin: 0, stepsToday: steps, heartRateBpm: hr(60, 74))
            audio = AudioState(route: .headphones, volume: 0.35)
            if rng.unit() < 0.3 { tags = ["mood": "focused"] }
        case .workout:
            location = near("gym", speed: 0.3, rng: &rng)
            calendarInfo = calendar([(pickTitle(["Leg day", "Gym", "Spin class", "Upper body workout"]), ep.minute - 5, epEnd + 40)])
            devices = [headphones, BluetoothDevice(name: "Forerunner", kind: .watch)]
            steps += Double(minute - ep.minute + 5) * 150
            motion = Motion(activity: .running, stepsPerMin: hr(145, 175), stepsToday: steps, heartRateBpm: hr(130, 170))
            audio = AudioState(route: .headphones, volume: 0.8)
        case .run:
            let speed = 2.6 + 1.0 * rng.unit()
            location = near("park", speed: speed, rng: &rng)
            calendarInfo = calendar([(pickTitle(["Morning run", "Long run", "Run with Alex"]), ep.minute - 5, epEnd + 30)])
            devices = [headphones, BluetoothDevice(name: "Forerunner", kind: .watch)]
            steps += Double(minute - ep.minute + 5) * 165
            motion = Motion(activity: .running, stepsPerMin: hr(155, 180), stepsToday: steps, heartRateBpm: hr(140, 175))
            audio = AudioState(route: .headphones, volume: 0.75)
        case .relax:
            location = near("home", speed: 0, rng: &rng)
            calendarInfo = calendar([])
            devices = [BluetoothDevice(name: u.speaker, kind: .speaker)]
            motion = Motion(activity: .stationary, stepsPerMin: 0, stepsToday: steps, heartRateBpm: hr(56, 68))
            audio = AudioState(route: .bluetooth, volume: 0.3)
            if rng.unit() < 0.5 { tags = ["mood": "relaxed"] }
        case .social:
            location = near("friend", speed: 0, rng: &rng)
            location.place = nil
            calendarInfo = calendar([(pickTitle(["Dinner with Sam", "Drinks with friends", "Birthday party"]), ep.minute - 30, epEnd + 120)])
            devices = [BluetoothDevice(name: "Party speaker", kind: .speaker)]
            motion = Motion(activity: .stationary, stepsPerMin: 0, stepsToday: steps, heartRateBpm: hr(72, 92))
            audio = AudioState(route: .bluetooth, volume: 0.7)
            tags = ["company": "friends"]
        case .errand:
            let speed = 1.1 + 0.5 * rng.unit()
            location = near("shop", speed: speed, rng: &rng)
            calendarInfo = calendar([(pickTitle(["Groceries", "Errands"]), ep.minute - 10, epEnd + 20)])
            devices = [headphones]
            steps += Double(minute - ep.minute + 5) * 105
            motion = Motion(activity: .walking, stepsPerMin: hr(95, 118), stepsToday: steps, heartRateBpm: hr(82, 100))
            audio = AudioState(route: .headphones, volume: 0.5)
        }
        motion.stepsToday = min(150_000, steps.rounded())
        return Snapshot(
            user: u.id, at: at, location: location, weather: weather.at(minute: minute, city: u.city, day: day),
            calendar: calendarInfo, bluetooth: Bluetooth(devices: devices), motion: motion, audio: audio, tags: tags)
    }

    // MARK: - Answers

    /// The standard normal noise of a person's answer in a slot (the same in the log and online).
    public func answerNoise(user: Int, slot: Int) -> Double {
        var rng = SeededGenerator(seed: seed ^ 0x616e_7377, user: users[user].id, counter: Int64(slot))
        return rng.normal()
    }

    /// The feedback event a person gives to a track in a slot: like or complete when the hidden
    /// taste likes it, skip or dislike otherwise; `at` is three minutes after the snapshot.
    public func answer(slot: ListeningSlot, track row: Int, eventId: String, pickId: String? = nil) -> FeedbackEvent {
        let u = users[slot.user]
        let track = catalog.tracks[row]
        let liked = u.likes(track, in: slot.context, noise: answerNoise(user: slot.user, slot: slot.number))
        var rng = SeededGenerator(seed: seed ^ 0x7369_676e, user: u.id, counter: Int64(slot.number))
        let signal: Signal = liked ? (rng.unit() < 0.5 ? .like : .complete) : (rng.unit() < 0.6 ? .skip : .dislike)
        let played = liked ? (track.durationMs ?? 200_000) : 5_000 + Int(rng.unit() * 35_000)
        // Three minutes in, the person has set the phone to the volume they want here.
        var snapshot = slot.snapshot
        snapshot.audio?.volume = slot.volume
        return FeedbackEvent(
            id: eventId, user: u.id, at: slot.snapshot.at.advanced(minutes: 3), track: track.id, signal: signal,
            playedMs: played, pickId: pickId, snapshot: snapshot)
    }

    /// The id of the event of a person's slot: `ev-<user>-<slot+1, 5 digits>`.
    public func eventId(_ slot: ListeningSlot) -> String {
        String(format: "ev-%@-%05d", users[slot.user].id, slot.number + 1)
    }

    /// The log of the population listening on its own: in each slot the person plays a track of
    /// their library (or, in ``chartShare`` of the slots, of the ``charts``), chosen with
    /// probability ∝ exp(8 · utility in the slot's context)
    /// (``SimulatedUser/utility(_:in:)``: sound, popularity, favourites and scene), and answers
    /// it by their hidden taste. Events are in time order (ties by user), each with its snapshot;
    /// `truth` holds the ground-truth context of each event, in the same order.
    public func feedbackLog() -> (events: [FeedbackEvent], truth: [GroundTruth]) {
        var all: [(Date, Int, Int, FeedbackEvent, GroundTruth)] = []
        let charts = self.charts
        for ui in users.indices {
            let u = users[ui]
            // What the person plays from: their library, or (a share ``chartShare`` of the slots) the
            // catalog's most popular tracks, as the radio and the charts bring them.
            let sources = [u.library, charts]
            var cumulative: [ContextLabel: [[Double]]] = [:]
            for c in u.contexts {
                cumulative[c] = sources.map { rows in
                    var acc = 0.0
                    return rows.map { row in
                        acc += exp(8 * (u.utility(catalog.tracks[row], in: c) ?? 0))
                        return acc
                    }
                }
            }
            var rng = SeededGenerator(seed: seed ^ 0x706c_6179, user: u.id, counter: 0)
            var chartsRng = SeededGenerator(seed: seed ^ 0x6368_6172, user: u.id, counter: 0)
            for slot in slots(user: ui) {
                let source = !charts.isEmpty && chartsRng.unit() < Self.chartShare ? 1 : 0
                guard let cum = cumulative[slot.context]?[source], let total = cum.last, total > 0 else { continue }
                let x = rng.unit() * total
                var lo = 0, hi = cum.count - 1
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if cum[mid] > x { hi = mid } else { lo = mid + 1 }
                }
                let id = eventId(slot)
                let event = answer(slot: slot, track: sources[source][lo], eventId: id)
                let truth = GroundTruth(event: id, user: u.id, at: slot.snapshot.at, day: slot.day, episode: slot.episode, context: slot.context)
                all.append((event.at.date, ui, slot.number, event, truth))
            }
        }
        all.sort { ($0.0, $0.1, $0.2) < ($1.0, $1.1, $1.2) }
        return (all.map(\.3), all.map(\.4))
    }
}

/// The ground-truth context of one simulated snapshot (`truth.jsonl`).
public struct GroundTruth: Sendable, Equatable {
    /// The id of the feedback event the snapshot belongs to.
    public var event: String
    /// The person.
    public var user: String
    /// The snapshot's time.
    public var at: Timestamp
    /// The simulated day (0-based).
    public var day: Int
    /// The episode of the person (0-based).
    public var episode: Int
    /// What the person was doing.
    public var context: ContextLabel

    /// One line of `truth.jsonl`: `{"event","user","at","day","episode","context"}`.
    public func json() -> JSONValue {
        .object([
            ("event", .string(event)), ("user", .string(user)), ("at", .string(at.rfc3339)),
            ("day", .number(Double(day))), ("episode", .number(Double(episode))), ("context", .string(context.rawValue))
        ])
    }
}

/// Weather of one city and day, hour by hour: a daily mean, a daily cycle, clouds that drift,
/// rain from overcast skies.
struct HourlyWeather {
    var temp: [Double] = []
    var clouds: [Double] = []
    var precip: [Double] = []
    var wind: [Double] = []
    var humidity: [Double] = []

    init(city: SimCity, day: Int, seed: UInt64) {
        var dayRng = SeededGenerator(seed: seed ^ 0x7765_6174, user: city.name, counter: Int64(day))
        var prev = SeededGenerator(seed: seed ^ 0x7765_6174, user: city.name, counter: Int64(day - 1))
        // The daily mean drifts: half of yesterday's anomaly plus a fresh one.
        let anomaly = 0.5 * 4 * prev.normal() + 3 * dayRng.normal()
        let mean = city.meanTemp + Double(day) * 0.15 + anomaly
        var c = 100 * dayRng.unit()
        for h in 0..<24 {
            temp.append(((mean + 4 * sin(2 * .pi * (Double(h) - 9) / 24) + 0.5 * dayRng.normal()) * 10).rounded() / 10)
            c = min(100, max(0, c + 15 * dayRng.normal()))
            clouds.append(c.rounded())
            let wet = c > 75 && dayRng.unit() < city.wetness * 2
            precip.append(wet ? ((0.2 + 3 * dayRng.unit()) * 10).rounded() / 10 : 0)
            wind.append(((1 + 8 * dayRng.unit()) * 10).rounded() / 10)
            humidity.append(min(100, (50 + 0.4 * c + 10 * dayRng.unit()).rounded()))
        }
    }

    func at(minute: Int, city: SimCity, day: Int) -> Weather {
        let h = min(23, max(0, minute / 60))
        let condition: WeatherCondition
        if precip[h] > 0 {
            condition = temp[h] < 0.5 ? .snow : (precip[h] < 0.6 ? .drizzle : .rain)
        } else if clouds[h] > 85 && humidity[h] > 92 {
            condition = .mist
        } else if clouds[h] > 40 {
            condition = .clouds
        } else {
            condition = .clear
        }
        return Weather(
            tempC: temp[h], windMps: wind[h], cloudPct: clouds[h], humidityPct: humidity[h], precipMmH: precip[h],
            condition: condition,
            sunrise: Population.time(city, day: day, minute: 6 * 60 + 45 - 2 * min(day, 60)),
            sunset: Population.time(city, day: day, minute: 18 * 60 + 15 + 2 * min(day, 60)))
    }
}

extension Timestamp {
    /// The same instant moved by whole minutes, in the same offset.
    func advanced(minutes: Int) -> Timestamp {
        Timestamp(date: date.addingTimeInterval(Double(minutes) * 60), offsetSeconds: offsetSeconds)
    }
}
