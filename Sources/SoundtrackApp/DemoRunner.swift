import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackRules
import SoundtrackStore

/// Runs the demo: a simulated listener lives through ``DayScenario`` for some days, hears
/// Soundtrack's picks and answers them; the story of what was picked and why comes back as text.
public struct DemoRunner: Sendable {
    /// The service the demo talks to (a real SQLite database).
    public let service: SoundtrackService
    /// The demo user's id; the user is forgotten and added afresh at the start.
    public let user: String
    /// Seed of the listener's behaviour (the engine has its own).
    public let seed: UInt64
    /// How many days to live through.
    public let days: Int

    /// Creates a runner.
    public init(service: SoundtrackService, user: String = "demo", seed: UInt64 = 42, days: Int = 2) {
        self.service = service
        self.user = user
        self.seed = seed
        self.days = days
    }

    /// What a run produced.
    public struct Report: Sendable {
        /// The story, line by line.
        public var lines: [String]
        /// Every feedback event the listener gave, with its embedded snapshot (a replayable log).
        public var events: [FeedbackEvent]
        /// The snapshot of every scene of the first day, by scene name.
        public var examples: [(String, Snapshot)]
        /// Share of liked picks per day.
        public var likeRateByDay: [Double]
    }

    /// Lives through the days and returns the story.
    public func run() throws -> Report {
        let store = service.store
        try store.forget(user: user)
        try service.addUser(NewUser(id: user, age: 24, region: "DE"), at: DayScenario.firstDay)
        var lines: [String] = []
        var events: [FeedbackEvent] = []
        var examples: [(String, Snapshot)] = []
        var likeRates: [Double] = []
        var rng = SeededGenerator(seed: seed)
        var eventNumber = 0
        let weekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

        for day in 0..<days {
            let date = DayScenario.time(day: day, minute: 0)
            lines.append("")
            lines.append("\(weekdays[date.localWeekday]) \(date.rfc3339.prefix(10))")
            var liked = 0
            var heard = 0
            for scene in DayScenario.scenes {
                var at = DayScenario.time(day: day, minute: scene.minuteOfDay)
                let first = scene.snapshot(user, at)
                if day == 0 { examples.append((scene.name, first)) }
                lines.append("  \(at.clock)  \(scene.headline) · \(Self.describe(first))")
                var lastBin = ""
                for _ in 0..<scene.picks {
                    let snapshot = scene.snapshot(user, at)
                    let pick = try service.pick(snapshot)
                    if pick.bin.id != lastBin {
                        let verb = pick.bin.created ? "new bin" : "bin"
                        let why = pick.why.prefix(3).map { "\($0.feature) \(String(format: "%.2f", $0.weight))" }.joined(separator: ", ")
                        lines.append("         → \(verb) \(pick.bin.id) “\(pick.bin.label)” (score \(String(format: "%.2f", pick.bin.score)); why: \(why))")
                        lastBin = pick.bin.id
                    }
                    let track = try store.tracks(ids: [pick.track.id])[pick.track.id]
                    let likes = track.map(scene.likes) ?? false
                    heard += 1
                    if likes { liked += 1 }
                    let signal: Signal = likes ? (rng.unit() < 0.5 ? .like : .complete) : (rng.unit() < 0.5 ? .skip : .dislike)
                    eventNumber += 1
                    let event = FeedbackEvent(
                        id: String(format: "ev-%@-%05d", user, eventNumber), user: user, at: at.adding(minutes: 3),
                        track: pick.track.id, signal: signal,
                        playedMs: likes ? (track?.durationMs ?? 200_000) : 12_000 + Int(rng.unit() * 20_000),
                        pickId: pick.pickId, snapshot: snapshot)
                    let verdict = try service.feedback(event)
                    events.append(event)
                    var note = signal.rawValue
                    if let to = verdict.outcome?.switchedTo {
                        note += " — third dislike in a row: switching to b-\(to)"
                        lastBin = ""
                    }
                    let profile = track.map(Self.audioSummary) ?? ""
                    lines.append(
                        "         ♪ \(pick.track.title) — \(pick.track.artist)\(pick.source == "catalog" ? " [similar catalog track]" : "")  \(profile)  \(likes ? "✓" : "✗") \(note)"
                    )
                    at = at.adding(minutes: 4)
                }
            }
            likeRates.append(heard == 0 ? 0 : Double(liked) / Double(heard))
            lines.append(String(format: "  liked %d of %d picks (%.0f%%)", liked, heard, likeRates.last! * 100))
        }
        lines.append("")
        lines.append("Bins of \(user) after \(days) day\(days == 1 ? "" : "s"):")
        lines += try BinTable.render(service.bins(user: user), store: store)
        return Report(lines: lines, events: events, examples: examples, likeRateByDay: likeRates)
    }

    static func describe(_ s: Snapshot) -> String {
        var parts: [String] = []
        if let w = s.weather, let c = w.condition, let t = w.tempC { parts.append("\(c.rawValue) \(Int(t.rounded()))°C") }
        if let kinds = s.bluetooth?.devices.map(\.kind.rawValue), !kinds.isEmpty { parts.append("bluetooth: \(kinds.joined(separator: "+"))") }
        if let a = s.motion?.activity { parts.append(a.rawValue) }
        if let hr = s.motion?.heartRateBpm, hr > 100 { parts.append("\(Int(hr)) bpm") }
        if let e = s.calendar?.events.first?.title { parts.append("“\(e)”") }
        return parts.joined(separator: " · ")
    }

    static func audioSummary(_ t: Track) -> String {
        let a = t.audio
        return String(format: "(energy %.2f, tempo %.0f, acoustic %.2f)", a.energy ?? .nan, a.tempo ?? .nan, a.acousticness ?? .nan)
    }
}

extension Timestamp {
    /// `HH:MM` in the timestamp's own offset.
    public var clock: String {
        let m = localMinuteOfDay
        return String(format: "%02d:%02d", m / 60, m % 60)
    }
}
