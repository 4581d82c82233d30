import Foundation
import SoundtrackContext
import Testing

@testable import SoundtrackEvaluation

@Suite("Splits of each protocol")
struct SplitTests {
    let log = SmallSimulation.log

    func byUser(_ positions: [Int]) -> [String: [Int]] {
        Dictionary(grouping: positions) { log.entries[$0].event.user }
    }

    @Test func chronologicalPutsEveryTestEventAfterEveryTrainingEvent() {
        let splits = Splitter.splits(log, protocol: .chronological, folds: 4, seed: 1)
        #expect(splits.count == 1)
        let s = splits[0]
        #expect(Set(s.train).isDisjoint(with: s.test))
        #expect(s.train.count + s.test.count == log.entries.count)
        let train = byUser(s.train), test = byUser(s.test)
        #expect(test.count == log.users.count)
        for (user, tests) in test {
            let firstTest = tests.map { log.entries[$0].event.at.date }.min()!
            let lastTrain = (train[user] ?? []).map { log.entries[$0].event.at.date }.max() ?? .distantPast
            #expect(lastTrain < firstTest, "user \(user)")
            let all = tests.count + (train[user]?.count ?? 0)
            #expect(tests.count >= all / 4)
        }
    }

    @Test func chronologicalMovesTiesToTheTestSet() {
        let events = [
            handEvent("e1", user: "u", hour: 1, track: "t", .like), handEvent("e2", user: "u", hour: 2, track: "t", .like),
            handEvent("e3", user: "u", hour: 3, track: "t", .like), handEvent("e4", user: "u", hour: 3, track: "t", .like)
        ]
        let s = Splitter.splits(LabelledLog(events), protocol: .chronological, folds: 4, seed: 1)[0]
        // The last quarter is e4, but e3 has the same time: both are tested.
        #expect(s.test == [2, 3])
        #expect(s.train == [0, 1])
    }

    @Test func leaveLastOutTestsExactlyTheLastLikedEventPerUser() {
        let s = Splitter.splits(log, protocol: .leaveLastOut, folds: 4, seed: 1)[0]
        let test = byUser(s.test)
        #expect(test.count == log.users.count)
        for user in log.users {
            let mine = log.entries.indices.filter { log.entries[$0].event.user == user }
            let lastLiked = mine.last { log.entries[$0].event.isLike }!
            #expect(test[user] == [lastLiked])
            #expect(byUser(s.train)[user] == mine.filter { $0 < lastLiked })
        }
    }

    @Test func randomFoldsCoverEachEventExactlyOnce() {
        let splits = Splitter.splits(log, protocol: .random, folds: 3, seed: 9)
        #expect(splits.count == 3)
        var seen = [Int](repeating: 0, count: log.entries.count)
        for s in splits {
            for i in s.test { seen[i] += 1 }
            #expect(Set(s.train) == Set(log.entries.indices).subtracting(s.test))
            #expect(abs(s.test.count - log.entries.count / 3) <= 1)
        }
        #expect(seen.allSatisfy { $0 == 1 })
        // Seeded: the same seed deals the same folds, another seed others.
        #expect(Splitter.splits(log, protocol: .random, folds: 3, seed: 9) == splits)
        #expect(Splitter.splits(log, protocol: .random, folds: 3, seed: 10) != splits)
    }
}
