import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import Testing

@testable import SoundtrackEvaluation

/// The simulated people's volumes and `eval --online`'s volume error (issue 43, item 2).
@Suite struct OnlineVolumeTests {
    @Test("Each person wants a volume of their own in each context; the phone reports the last context's until it is set")
    func simulatedVolumes() {
        let population = Population(users: 4, days: 5, seed: 3, catalog: Repo.smallCatalog)
        let people = population.users
        #expect(Set(people.map { $0.volume(in: .workout) }).count > 1, "people differ")
        for u in people.indices {
            let slots = population.slots(user: u)
            for (i, slot) in slots.enumerated() {
                #expect((0.05...1).contains(slot.volume) && slot.volume == people[u].volume(in: slot.context))
                let reported = slot.snapshot.audio?.volume
                if i > 0 { #expect(reported == (slots[i - 1].episode == slot.episode ? slot.volume : slots[i - 1].volume)) }
            }
        }
    }

    @Test("The engine's suggested volume beats the person's last volume on mean absolute error, above all where the context changes")
    func suggestionBeatsLastVolume() throws {
        let population = Population(users: 4, days: 7, seed: 3, catalog: Repo.smallCatalog)
        let report = OnlineEvaluator(engine: Repo.engine(), population: population).run(k: 10)
        let v = try #require(report.online?.volumeError)
        #expect(v.engine < v.lastVolume, "\(v)")
        #expect(v.engineAtStart < v.lastVolumeAtStart, "\(v)")
    }
}
