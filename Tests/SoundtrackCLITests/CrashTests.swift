import Foundation
import SoundtrackApp
import SoundtrackContext
import SoundtrackEngine
import SoundtrackRules
import SoundtrackTestSupport
import Testing

@testable import SoundtrackStore

@Suite("Durability", .serialized)
struct CrashTests {
    /// A log of `n` feedback events with embedded snapshots over the small catalog.
    static func eventLog(_ n: Int) throws -> String {
        let csv = try String(contentsOf: CLI.root.appendingPathComponent("datasets/catalog-small.csv"), encoding: .utf8)
        let ids = csv.split(separator: "\n").dropFirst().map { String($0.prefix { $0 != "," }) }
        let places = ["library", "gym", "home", "work"]
        let signals = ["like", "skip", "complete", "dislike", "dislike", "like"]
        var lines: [String] = []
        let base = Timestamp(rfc3339: "2026-03-09T07:00:00+01:00")!
        for i in 0..<n {
            let at = Timestamp(date: base.date.addingTimeInterval(Double(i) * 600), offsetSeconds: 3600).rfc3339
            let place = places[(i / 7) % places.count]
            let snapshot =
                #"{"user":"u-1","at":"\#(at)","location":{"place":"\#(place)","speed_mps":\#(place == "gym" ? 2.5 : 0)},"motion":{"activity":"\#(place == "gym" ? "running" : "stationary")","heart_rate_bpm":\#(place == "gym" ? 150 : 65)}}"#
            lines.append(#"{"id":"ev-\#(i)","user":"u-1","at":"\#(at)","track":"\#(ids[(i * 37) % ids.count])","signal":"\#(signals[i % signals.count])","snapshot":\#(snapshot)}"#)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func state(_ db: String) throws -> UserState {
        let service = SoundtrackService(
            store: try Store(path: db),
            engine: Recommender(
                config: try Models.bundled().config, catalog: IndexCatalog(.init(tracks: [])), priors: try Models.bundled().priors))
        return try service.state(user: "u-1")
    }

    static func feedbackCount(_ db: String) throws -> Int {
        try Store(path: db).user("u-1")?.feedback ?? 0
    }

    @Test("A process killed in the middle of feedback writes leaves a consistent database that resumes to the clean result")
    func killMidFeedback() async throws {
        let n = 400
        let log = try Self.eventLog(n)
        let (dir, db) = try await CLI.smallDatabase()
        let file = dir.appendingPathComponent("events.jsonl")
        try log.write(to: file, atomically: true, encoding: .utf8)
        // Reference: a clean run into a copy of the same starting database.
        let clean = dir.appendingPathComponent("clean.sqlite").path
        try FileManager.default.copyItem(atPath: db, toPath: clean)
        let ref = try await CLI.run(["feedback", "--quiet", "--db", clean, file.path])
        #expect(ref.status == 0, "\(ref.stderr)")

        let running = try CLI.start(["feedback", "--quiet", "--db", db, file.path])
        let deadline = Date().addingTimeInterval(60)
        while try Self.feedbackCount(db) < 40 && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        kill(running.child.processIdentifier, SIGKILL)
        await offPool { [running] in running.child.waitUntilExit() }
        #expect(running.child.terminationReason == .uncaughtSignal)

        let store = try Store(path: db)
        #expect(try store.check() == [])
        let applied = try Self.feedbackCount(db)
        #expect(applied >= 40 && applied < n, "killed after \(applied) of \(n) events")

        let resumed = try await CLI.run(["feedback", "--quiet", "--db", db, file.path])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("\(n - applied) applied, \(applied) duplicates skipped, 0 rejected"), "\(resumed.stderr)")
        let a = try Self.state(db), b = try Self.state(clean)
        #expect(a.bins == b.bins)
        #expect(a.weights == b.weights)
        #expect(a.session == b.session)
        #expect(a.places == b.places)
        #expect(try Self.feedbackCount(db) == n)
    }

    @Test("Replaying a whole log twice changes nothing the second time")
    func replayTwice() async throws {
        let (dir, db) = try await CLI.smallDatabase()
        let file = dir.appendingPathComponent("events.jsonl")
        try Self.eventLog(60).write(to: file, atomically: true, encoding: .utf8)
        #expect(try await CLI.run(["feedback", "--quiet", "--db", db, file.path]).status == 0)
        let once = try Self.state(db)
        let again = try await CLI.run(["feedback", "--quiet", "--db", db, file.path])
        #expect(again.stderr.contains("0 applied, 60 duplicates skipped"), "\(again.stderr)")
        let twice = try Self.state(db)
        #expect(once.bins == twice.bins)
        #expect(once.weights == twice.weights)
    }
}
