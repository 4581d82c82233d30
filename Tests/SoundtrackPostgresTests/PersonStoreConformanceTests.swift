import Foundation
import SoundtrackContext
import SoundtrackEngine
import SoundtrackPostgres
import SoundtrackRules
import SoundtrackStore
import Testing

/// The semantics of ``PersonStore``, written once and run on the SQLite store and the PostgreSQL
/// store (docs/architecture.md, "PostgreSQL and sharding by user").
@Suite("A person's store, on SQLite and PostgreSQL")
struct PersonStoreConformanceTests {
    static let t0 = Date(timeIntervalSince1970: 1_773_200_000)

    @Test("A person is added once: a second add is refused; exists and the summary read what was added", arguments: Backend.allCases)
    func users(backend: Backend) async throws {
        try await backend.withStore { s in
            let store = s.store
            try store.addUser(NewUser(id: "u-1", email: "Someone@Example.org", age: 30, region: "DE"), at: Self.t0)
            #expect(throws: RuleError.userExists("u-1")) { try store.addUser(NewUser(id: "u-1"), at: Self.t0) }
            #expect(try store.userExists("u-1"))
            #expect(try !store.userExists("u-2"))
            let summary = try #require(try store.user("u-1"))
            #expect(summary.id == "u-1" && summary.age == 30 && summary.region == "DE")
            #expect(summary.emailHash?.count == 64 && summary.emailHashScheme == .hmacSHA256)
            #expect(summary.createdAt == Self.t0)
            #expect(summary.bins == 0 && summary.feedback == 0 && summary.picks == 0)
            #expect(try store.user("u-2") == nil)
            try store.addUser(NewUser(id: "u-2"), at: Self.t0)
            #expect(try store.user("u-2")?.emailHash == nil)
        }
    }

    @Test("Settings round-trip; a change that throws writes nothing; an unknown person is a typed error", arguments: Backend.allCases)
    func settings(backend: Backend) async throws {
        try await backend.withStore { s in
            let store = s.store
            try store.addUser(NewUser(id: "u-1"), at: Self.t0)
            #expect(try store.settings(user: "u-1") == UserSettings())
            let wanted = UserSettings(locationServices: false, volumeControl: true, keepRawSnapshots: true, calendarTitles: false)
            #expect(try store.updateSettings(user: "u-1") { $0 = wanted } == wanted)
            #expect(try store.settings(user: "u-1") == wanted)
            struct Refused: Error {}
            #expect(throws: Refused.self) {
                try store.updateSettings(user: "u-1") { s in
                    s.volumeControl = false
                    throw Refused()
                }
            }
            #expect(try store.settings(user: "u-1") == wanted)
            #expect(throws: RuleError.unknownUser("nobody")) { try store.settings(user: "nobody") }
            #expect(throws: RuleError.unknownUser("nobody")) { try store.updateSettings(user: "nobody") { _ in } }
            // The settings are the loaded state's.
            #expect(try store.loadCachedState(user: "u-1", defaults: Person.defaults)?.settings == wanted)
        }
    }

    @Test("API keys: stored by hash, looked up, refused twice or for no one, revoked once", arguments: Backend.allCases)
    func keys(backend: Backend) async throws {
        try await backend.withStore { s in
            let store = s.store
            try store.addUser(NewUser(id: "u-1"), at: Self.t0)
            let hash = String(repeating: "ab", count: 32)
            let key = APIKeyRecord(id: "k-user", hash: hash, role: .user, user: "u-1", label: "phone", createdAt: Self.t0)
            try store.insertKey(key)
            #expect(try store.key(hash: hash) == key)
            #expect(try store.key(hash: String(repeating: "cd", count: 32)) == nil)
            #expect(throws: RuleError.keyExists("k-user")) { try store.insertKey(key) }
            var sameSecret = key
            sameSecret.id = "k-other"
            #expect(throws: RuleError.keyExists("k-other")) { try store.insertKey(sameSecret) }
            #expect(throws: RuleError.unknownUser("nobody")) {
                try store.insertKey(APIKeyRecord(id: "k-none", hash: String(repeating: "ef", count: 32), role: .user, user: "nobody", label: nil, createdAt: Self.t0))
            }
            #expect(throws: InputError.self) {
                try store.insertKey(
                    APIKeyRecord(
                        id: "k-long", hash: String(repeating: "0f", count: 32), role: .admin, user: nil, label: String(repeating: "x", count: 129),
                        createdAt: Self.t0))
            }
            let admin = APIKeyRecord(id: "k-admin", hash: String(repeating: "12", count: 32), role: .admin, user: nil, label: nil, createdAt: Self.t0)
            try store.insertKey(admin)
            #expect(try store.key(hash: admin.hash) == admin)
            let later = Self.t0.addingTimeInterval(60)
            #expect(try store.revokeKey(id: "k-user", at: later))
            #expect(try !store.revokeKey(id: "k-user", at: later))
            #expect(try !store.revokeKey(id: "k-none", at: later))
            #expect(try store.key(hash: hash)?.revokedAt == later)
            #expect(try store.keyRevocations() == ["k-user": true, "k-admin": false])
        }
    }

    @Test("A person's picks and events committed with what they changed load back as the state the rules left in memory", arguments: Backend.allCases)
    func stateRoundTrip(backend: Backend) async throws {
        try await backend.withStore { s in
            let store = s.store
            try store.addUser(NewUser(id: "u-1"), at: Self.t0)
            // The same picks and events on a state kept in memory alone.
            var memory = try #require(try store.loadCachedState(user: "u-1", defaults: Person.defaults))
            let (picks, events) = try Person.day(store, user: "u-1", picks: 36)
            var records: [String: PickRecord] = [:]
            let places = ["library", "gym", "home", "cafe", "office", "park"]
            var k = 0
            for i in 0..<picks.count {
                let at = String(format: "2026-03-11T%02d:%02d:00+01:00", 6 + i / 6, (i % 6) * 10)
                let staged = Person.rules.stagePick(Person.snapshot(places[(i * 5 + i / 7) % places.count], at, user: "u-1"), state: &memory.state)
                #expect(staged.row == picks[i].row, "pick \(i)")
                records[staged.row.record.pickId] = staged.row.record
                guard i % 2 == 1 else { continue }
                let event = events[k]
                k += 1
                _ = try Person.rules.stageFeedback(event, appliedBy: nil, user: &memory, pick: records[event.pickId!])
            }
            let loaded = try #require(try store.loadCachedState(user: "u-1", defaults: Person.defaults))
            let state = loaded.state, kept = memory.state
            #expect(!state.mergedInto.isEmpty, "the day merges bins")
            #expect(state.bins.contains { $0.songs.contains { $0.rating > 0 } } && state.bins.contains { $0.songs.contains { $0.dislikes > 0 } })
            #expect(state.bins == kept.bins)
            #expect(state.weights == kept.weights)
            #expect(state.places.places == kept.places.places)
            #expect(state.session == kept.session)
            #expect(state.recentTracks == kept.recentTracks)
            #expect(state.pickCounter == kept.pickCounter && state.nextBinNumber == kept.nextBinNumber)
            #expect(state.vocabulary == kept.vocabulary && state.mergedInto == kept.mergedInto)
            #expect(loaded.feedbackSeq == Int64(events.count) && loaded.feedbackSeq == memory.feedbackSeq)
            #expect(loaded.lastEventAt == memory.lastEventAt)
            #expect(loaded.pending.isEmpty)
            let summary = try #require(try store.user("u-1"))
            #expect(summary.picks == picks.count && summary.feedback == events.count && summary.bins == state.bins.count)
        }
    }

    @Test("A pick is found by id, of whatever person, as it was made; an unknown id is nil", arguments: Backend.allCases)
    func pickLookup(backend: Backend) async throws {
        try await backend.withStore { s in
            let store = s.store
            try store.addUser(NewUser(id: "u-1"), at: Self.t0)
            // The third pick of a day: its ranking holds the bins made by the first two.
            let staged = try Person.day(store, user: "u-1", picks: 3).picks[2]
            let found = try #require(try store.pickRecord(id: staged.pick.pickId))
            #expect(found == staged.row.record)
            #expect(!found.ranking.isEmpty)
            #expect(try store.pickRecord(id: "p-none") == nil)
            // Another person's event naming it is refused by the rules, through the store's lookup.
            try store.addUser(NewUser(id: "u-2"), at: Self.t0)
            let event = FeedbackEvent(
                id: "e-2", user: "u-2", at: staged.pick.at, track: staged.pick.track.id, signal: .like, pickId: staged.pick.pickId)
            #expect(throws: RuleError.pickOfAnotherUser(staged.pick.pickId, user: "u-2")) { try Person.feedback(store, event) }
        }
    }

    @Test("An event applies once by id: a retry is a duplicate, another person's use of the id is refused, the log grows by one", arguments: Backend.allCases)
    func eventIdempotency(backend: Backend) async throws {
        try await backend.withStore { s in
            let store = s.store
            try store.addUser(NewUser(id: "u-1"), at: Self.t0)
            try store.addUser(NewUser(id: "u-2"), at: Self.t0)
            let staged = try Person.pick(store, Person.snapshot("gym", "2026-03-11T07:00:00+01:00", user: "u-1"))
            #expect(try store.feedbackLogSize() == 0)
            #expect(try store.feedbackOwner(eventId: "e-1") == nil)
            let event = FeedbackEvent(id: "e-1", user: "u-1", at: staged.pick.at, track: staged.pick.track.id, signal: .like, pickId: staged.pick.pickId)
            guard case let .applied(row) = try Person.feedback(store, event) else {
                Issue.record("not applied")
                return
            }
            #expect(row.seq == 1)
            let after = try #require(try store.loadCachedState(user: "u-1", defaults: Person.defaults))
            #expect(try Person.feedback(store, event) == .duplicate)
            #expect(try store.loadCachedState(user: "u-1", defaults: Person.defaults)?.state.bins == after.state.bins, "a duplicate changes nothing")
            #expect(try store.feedbackOwner(eventId: "e-1") == "u-1")
            var theirs = FeedbackEvent(id: "e-1", user: "u-2", at: staged.pick.at, track: staged.pick.track.id, signal: .like)
            theirs.snapshot = Person.snapshot("gym", "2026-03-11T07:00:00+01:00", user: "u-2")
            #expect(throws: RuleError.eventIdTaken("e-1")) { try Person.feedback(store, theirs) }
            #expect(try store.feedbackLogSize() == 1)
            #expect(try store.user("u-1")?.feedback == 1 && store.user("u-2")?.feedback == 0)
            // A commit of a row whose id is taken fails whole: nothing of it stays.
            var copy = row
            copy.seq = 2
            #expect(throws: (any Error).self) { try store.commit([.addUser("u-3", at: Self.t0), .feedback(copy, state: nil)]) }
            #expect(try !store.userExists("u-3"))
            #expect(try store.user("u-1")?.feedback == 1)
        }
    }

    @Test("Events committed before their state wait as pending; a checkpoint of the view includes them; a prune deletes them", arguments: Backend.allCases)
    func pendingEvents(backend: Backend) async throws {
        try await backend.withStore { s in
            let store = s.store
            try store.addUser(NewUser(id: "u-1"), at: Self.t0)
            let staged = try Person.pick(store, Person.snapshot("gym", "2026-03-11T07:00:00+01:00", user: "u-1"))
            // As the HTTP service commits an event: its row and the event, the state later.
            var live = try #require(try store.loadCachedState(user: "u-1", defaults: Person.defaults))
            let event = FeedbackEvent(id: "e-1", user: "u-1", at: staged.pick.at, track: staged.pick.track.id, signal: .like, pickId: staged.pick.pickId)
            guard case let .applied(row) = try Person.rules.stageFeedback(event, appliedBy: nil, user: &live, pick: staged.row.record) else {
                Issue.record("not applied")
                return
            }
            try store.commit([.pendingFeedback(row, event: PendingEventText(event))])
            var loaded = try #require(try store.loadCachedState(user: "u-1", defaults: Person.defaults))
            #expect(loaded.pending.map(\.event) == [event] && loaded.pending.first?.seq == 1)
            #expect(loaded.feedbackSeq == 0)
            try Person.rules.catchUp(&loaded) { try store.pickRecord(id: $0) }
            #expect(loaded.state.bins == live.state.bins)
            try store.commit([.view(loaded.takeChanges()), .prunePending(limit: 10)])
            let after = try #require(try store.loadCachedState(user: "u-1", defaults: Person.defaults))
            #expect(after.pending.isEmpty && after.feedbackSeq == 1)
            #expect(after.state.bins == live.state.bins)
            #expect(try await s.rowCounts("u-1")["pending_events"] == 0)
        }
    }

    @Test("forget removes every row of the person from every personal table, and nothing of others", arguments: Backend.allCases)
    func forget(backend: Backend) async throws {
        try await backend.withStore { s in
            let store = s.store
            for user in ["u-1", "u-2"] {
                try store.addUser(NewUser(id: user, email: "\(user)@example.org"), at: Self.t0)
                try store.updateSettings(user: user) { $0.keepRawSnapshots = true }
                try store.insertKey(
                    APIKeyRecord(id: "k-\(user)", hash: String(repeating: user == "u-1" ? "a1" : "b2", count: 32), role: .user, user: user, label: nil, createdAt: Self.t0))
                try Person.day(store, user: user, picks: 12)
            }
            let before = try await s.rowCounts("u-1")
            let others = try await s.rowCounts("u-2")
            for table in ["users", "user_settings", "bins", "weights", "sessions", "picks", "feedback", "api_keys"] {
                #expect(before[table, default: 0] > 0, "u-1 has rows in \(table)")
            }
            let event = "u-1-e1"
            #expect(try store.feedbackOwner(eventId: event) == "u-1")
            #expect(try store.forget(user: "u-1"))
            let after = try await s.rowCounts("u-1")
            #expect(after.keys.sorted() == before.keys.sorted())
            #expect(after.filter { $0.value != 0 }.isEmpty, "rows left: \(after.filter { $0.value != 0 })")
            #expect(try await s.rowCounts("u-2") == others)
            #expect(try !store.userExists("u-1") && store.loadCachedState(user: "u-1", defaults: Person.defaults) == nil)
            #expect(try store.feedbackOwner(eventId: event) == nil, "a forgotten person's ids are free again")
            #expect(try store.key(hash: String(repeating: "a1", count: 32)) == nil)
            #expect(try !store.forget(user: "u-1"))
            #expect(try store.user("u-2")?.feedback == 6)
        }
    }
}
