import Foundation
import PostgresNIO
import SoundtrackContext
import SoundtrackEngine
import SoundtrackPostgres
import SoundtrackRules
import SoundtrackStore
import SoundtrackTestSupport
import Synchronization
import Testing

/// Two PostgreSQL stores on one database, as two service processes would have, judging and
/// committing feedback of the same people at once (issue 44).
@Suite("Two PostgreSQL stores, one database")
struct PostgresConcurrencyTests {
    /// What the threads sent and were answered.
    struct Tally {
        var applied: [String: Int] = [:]
        var duplicates = 0
        var taken = 0
        var failures: [String] = []
    }

    /// The tally the threads share.
    final class Box: Sendable {
        private let value: Mutex<Tally>
        init(_ tally: Tally) { value = Mutex(tally) }
        func withLock<R: Sendable>(_ body: (inout Tally) -> R) -> R { value.withLock { body(&$0) } }
    }

    @Test(
        "Feedback of the same people through two stores at once, retried ids sent to both and one id used by two people: every event acknowledged as new is stored once, none is lost, each person's sequence has no gap and no repeat"
    )
    func twoStoresOnePerson() async throws {
        guard try Backend.postgresConfigured() else { return }
        try await TestDatabase.withFreshDatabase { endpoint in
            let a = try await PostgresStore.open(endpoint, connections: 3, logger: TestDatabase.logger)
            let b = try await PostgresStore.open(endpoint, connections: 3, logger: TestDatabase.logger)
            defer {
                a.close()
                b.close()
            }
            let people = (1...4).map { "p-\($0)" }
            for p in people { try a.addUser(NewUser(id: p), at: Date(timeIntervalSince1970: 0)) }
            // Each person's events: one timestamp (so none is out of time order whichever commits
            // first), a snapshot as context; every third id also sent through the other store (a
            // retry landing elsewhere), and the id "shared" used by p-1 and p-2.
            let perPerson = 30
            var lists: [[(store: Int, event: FeedbackEvent)]] = [[], [], [], []]
            for (k, p) in people.enumerated() {
                let snapshot = Person.snapshot(["gym", "library", "home", "cafe"][k], "2026-03-11T08:00:00+01:00", user: p)
                for j in 0..<perPerson {
                    let track = Person.tracks[(k * 37 + j * 11) % Person.tracks.count].id
                    let event = FeedbackEvent(
                        id: "\(p)-e\(j)", user: p, at: snapshot.at, track: track, signal: j % 3 == 0 ? .like : .skip, snapshot: snapshot)
                    // Four threads: two a store. The thread of (person, j) alternates so that both
                    // stores write every person.
                    let thread = (k + j) % 4
                    lists[thread].append((thread / 2, event))
                    if j % 3 == 0 { lists[(thread + 2) % 4].append(((thread / 2 + 1) % 2, event)) }
                }
                if k < 2 {
                    let shared = FeedbackEvent(id: "shared", user: p, at: snapshot.at, track: Person.tracks[k].id, signal: .like, snapshot: snapshot)
                    lists[k * 2].append((k, shared))
                }
            }
            let stores = [a, b]
            let tally = Box(Tally())
            let sent = lists.reduce(0) { $0 + $1.count }
            await withTaskGroup(of: Void.self) { group in
                for list in lists {
                    group.addTask {
                        await offPool {
                            for (index, event) in list {
                                do {
                                    let verdict = try Person.feedback(stores[index], event)
                                    tally.withLock { t in
                                        if case .applied = verdict { t.applied[event.id, default: 0] += 1 } else { t.duplicates += 1 }
                                    }
                                } catch RuleError.eventIdTaken {
                                    tally.withLock { $0.taken += 1 }
                                } catch {
                                    tally.withLock { $0.failures.append("\(event.id): \(error)") }
                                }
                            }
                        }
                    }
                }
            }
            let t = tally.withLock { $0 }
            #expect(t.failures.isEmpty, "\(t.failures)")
            let acknowledged = t.applied.values.reduce(0, +)
            let distinct = Set(lists.flatMap { $0.map(\.event.id) })
            print(
                "two stores: \(sent) events sent for \(distinct.count) ids, \(acknowledged) acknowledged as new, \(t.duplicates) as duplicates, "
                    + "\(t.taken) refused as another person's id")
            #expect(t.applied.values.allSatisfy { $0 == 1 }, "an id acknowledged as new twice: \(t.applied.filter { $0.value > 1 })")
            #expect(acknowledged == distinct.count, "every id acknowledged once (none lost)")
            #expect(t.taken == 1, "the shared id: one person's, the other's refused")
            #expect(acknowledged + t.duplicates + t.taken == sent)
            // What the database holds.
            try await endpoint.withConnection(logger: TestDatabase.logger) { c in
                let logger = TestDatabase.logger
                var rows = 0, ids = 0, owners = 0
                for try await (n, d) in try await c.query("SELECT count(*), count(DISTINCT id) FROM feedback", logger: logger).decode((Int, Int).self) {
                    (rows, ids) = (n, d)
                }
                for try await n in try await c.query("SELECT count(*) FROM event_ids", logger: logger).decode(Int.self) { owners = n }
                #expect(rows == acknowledged, "stored rows = events acknowledged as new")
                #expect(ids == rows, "no event stored twice")
                #expect(owners == rows, "one owner row an event")
                var stored = Set<String>()
                for try await id in try await c.query("SELECT id FROM feedback", logger: logger).decode(String.self) { stored.insert(id) }
                #expect(stored == distinct, "none lost")
                // Each person's events took turns: applied_seq 1...n, no gap, no repeat.
                for p in people {
                    var seqs: [Int] = []
                    for try await s in try await c.query("SELECT applied_seq FROM feedback WHERE user_id = \(p) ORDER BY applied_seq", logger: logger)
                        .decode(Int.self)
                    {
                        seqs.append(s)
                    }
                    #expect(seqs == Array(1...seqs.count), "\(p): \(seqs)")
                }
            }
            // And each person's stored state is at their last event: no event's change was lost.
            for p in people {
                let cached = try #require(try a.loadCachedState(user: p, defaults: Person.defaults))
                #expect(cached.feedbackSeq == Int64(try #require(try b.user(p)).feedback))
            }
        }
    }
}
