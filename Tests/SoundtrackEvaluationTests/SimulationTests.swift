import Foundation
import SoundtrackCatalog
import SoundtrackContext
import Testing

@testable import SoundtrackEvaluation

@Suite("The simulated population")
struct SimulationTests {
    @Test func deterministicForASeed() {
        let one = Population(users: 3, days: 3, seed: 5, catalog: Repo.smallCatalog).feedbackLog()
        let two = Population(users: 3, days: 3, seed: 5, catalog: Repo.smallCatalog).feedbackLog()
        let other = Population(users: 3, days: 3, seed: 6, catalog: Repo.smallCatalog).feedbackLog()
        #expect(!one.events.isEmpty)
        #expect(one.events.map { $0.json().serialized() } == two.events.map { $0.json().serialized() })
        #expect(one.truth == two.truth)
        #expect(one.events.map { $0.json().serialized() } != other.events.map { $0.json().serialized() })
    }

    @Test func snapshotsValidateStrictlyAndRoundTrip() throws {
        let (events, _) = SmallSimulation.population.feedbackLog()
        for e in events {
            let text = e.json().serialized()
            let back = try FeedbackEvent.decode(Data(text.utf8), strict: true)
            #expect(back.snapshot != nil)
            #expect(back.json().serialized() == text)
        }
        // The whole log parses as a labelled log against the catalog, in time order per user.
        let data = Data(events.map { $0.json().serialized() }.joined(separator: "\n").utf8)
        let log = try LabelledLog.parse(data, catalog: Repo.smallCatalog, strict: true)
        #expect(log.entries.count == events.count)
    }

    @Test func groundTruthForEverySnapshotFitsTheSensors() {
        let population = SmallSimulation.population
        let (events, truth) = population.feedbackLog()
        #expect(truth.count == events.count)
        for (e, t) in zip(events, truth) {
            #expect(t.event == e.id && t.user == e.user && t.at == e.snapshot!.at)
            let user = population.users.first { $0.id == e.user }!
            #expect(user.contexts.contains(t.context))
            let s = e.snapshot!
            switch t.context {
            case .workout, .run:
                #expect(s.motion?.activity == .running)
                #expect((s.motion?.heartRateBpm ?? 0) >= 120)
                #expect(s.bluetooth?.devices.contains { $0.kind == .headphones } == true)
            case .commute:
                #expect((s.location?.speedMps ?? 0) >= 4)
            case .work, .study, .wake, .relax, .social:
                #expect(s.motion?.activity == .stationary)
            case .errand:
                #expect(s.motion?.activity == .walking)
            }
            #expect(s.weather?.tempC != nil && s.weather?.condition != nil)
        }
        // Every day has snapshots, at plausible local hours.
        #expect(Set(truth.map(\.day)) == Set(0..<4))
        #expect(events.allSatisfy { (5...23).contains(Int($0.snapshot!.at.localHour)) })
    }

    @Test func weatherChangesByTheHourAndTastesDependOnContext() {
        let population = SmallSimulation.population
        let slots = population.slots(user: 0)
        let temps = Set(slots.compactMap { $0.snapshot.weather?.tempC })
        #expect(temps.count > 5)
        // The same track is not liked equally in every context: hidden tastes differ per context.
        let u = population.users[0]
        let tracks = Repo.smallCatalog.tracks
        let workout = u.tastes[.workout]!, relax = u.tastes[.relax]!
        let disagreements = tracks.filter { (workout.utility($0) > u.threshold) != (relax.utility($0) > u.threshold) }.count
        #expect(disagreements > tracks.count / 10)
        // Likes are neither all nor nothing.
        let (events, _) = population.feedbackLog()
        let liked = Double(events.filter(\.isLike).count) / Double(events.count)
        #expect(liked > 0.2 && liked < 0.9)
    }
}
