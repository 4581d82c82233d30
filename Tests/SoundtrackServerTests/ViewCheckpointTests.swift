import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SoundtrackContext
import SoundtrackEngine
import SoundtrackRules
import Testing

@testable import SoundtrackServer
@testable import SoundtrackStore

/// The users' states as a checkpointed view of the feedback rows: feedback commits its events,
/// the states follow at checkpoints, and a state loaded before its checkpoint is brought up to
/// date with the same engine code (docs/batch-and-replay.md, "The record and the view").
@Suite struct ViewCheckpointTests {
    /// Feedback of `user`, in time order, in contexts that move between three places (each a
    /// snapshot with coordinates), with every signal.
    static func events(_ user: String, count: Int, tracks: [String], from first: Int = 0) -> [String] {
        let places = [("library", 42.0267), ("gym", 42.0301), ("home", 42.0112)]
        let signals = ["like", "dislike", "skip", "complete", "dislike", "dislike", "like"]
        return (first..<(first + count)).map { i in
            let at = String(format: "2026-03-14T%02d:%02d:00+01:00", 7 + i / 60, i % 60)
            let (place, lat) = places[(i / 4) % places.count]
            let gym = place == "gym"
            let snapshot =
                #"{"user": "\#(user)", "at": "\#(at)", "location": {"lat": \#(lat), "lon": -93.6465, "place": "\#(place)", "#
                + #""speed_mps": \#(gym ? 2.5 : 0)}, "motion": {"activity": "\#(gym ? "running" : "stationary")", "#
                + #""heart_rate_bpm": \#(gym ? 150 : 64)}, "tags": {"mood": "\#(place == "home" ? "calm" : "focused")"}}"#
            return #"{"id": "v-\#(user)-\#(i)", "user": "\#(user)", "at": "\#(at)", "track": "\#(tracks[(i * 7) % tracks.count])", "#
                + #""signal": "\#(signals[i % signals.count])", "snapshot": \#(snapshot)}"#
        }
    }

    /// The parts of a state feedback changes.
    static func same(_ a: UserState, _ b: UserState, _ comment: Comment? = nil) {
        #expect(a.bins == b.bins, comment)
        #expect(a.weights == b.weights, comment)
        #expect(a.session == b.session, comment)
        #expect(a.places == b.places, comment)
        #expect(a.vocabulary == b.vocabulary, comment)
        #expect(a.nextBinNumber == b.nextBinNumber, comment)
        #expect(a.mergedInto == b.mergedInto, comment)
    }

    @Test func feedbackCommitsItsEventsTheStatesFollowAtACheckpointAndEveryReaderSeesThemCurrent() async throws {
        let f = try Fixture(keepingSnapshots: ["u-1", "u-2"]) { $0.viewCheckpointInterval = .seconds(600) }
        let store = f.service.store, service = f.service, live = f.api.live
        let tracks = try store.allTracks().map(\.id)
        let zeros = [Float](repeating: 0, count: FeatureLayout.dimension)
        let events = Self.events("u-1", count: 30, tracks: tracks)
        try await f.api.buildApplication().test(.router) { client in
            let key = f.keys["u-1"]!
            // A pick first: feedback that names it finds it in the database when applied again.
            let pick = try await client.send(.post, "/v1/picks", key: key, body: Doc.snapshot(user: "u-1", at: "2026-03-14T06:59:00+01:00"))
            let pickId = try #require(pick.json["pick_id"]?.stringValue)
            for e in events {
                let r = try await client.send(.post, "/v1/feedback", key: key, body: e)
                #expect(r.json["status"]?.stringValue == "applied", "\(r.body)")
            }
            let named = #"{"id": "v-named", "user": "u-1", "at": "2026-03-14T08:00:00+01:00", "track": "\#(tracks[3])", "signal": "like", "pick_id": "\#(pickId)"}"#
            #expect(try await client.send(.post, "/v1/feedback", key: key, body: named).json["status"]?.stringValue == "applied")

            // Committed: every event's row, and the events themselves; the stored state is the pick's.
            #expect(try store.user("u-1")?.feedback == 31)
            #expect(try store.usersBehind() == ["u-1": 31])
            let raw = try #require(try store.loadCachedState(user: "u-1", defaults: zeros))
            #expect(raw.pending.map(\.seq) == Array(1...31))
            #expect(raw.feedbackSeq == 0 && raw.lastEventAt == nil)
            #expect(raw.state.bins.count == 1)

            // Every reader sees the state the service holds: loading applies the events again.
            let inMemory = try live.state(user: "u-1")
            Self.same(try service.state(user: "u-1"), inMemory)
            #expect(try store.loadCachedStates(users: ["u-1"], defaults: zeros)["u-1"]?.pending.count == 31)

            // The checkpoint writes the state; once committed (the next feedback waits for its commit,
            // which comes after), the events wait no longer; their snapshots stay with their rows,
            // as u-1 chose (`keep_raw_snapshots`), the named event's had none.
            #expect(live.checkpointViews() == 1)
            #expect(live.checkpointViews() == 0)
            let other = Self.events("u-2", count: 1, tracks: tracks)[0]
            #expect(try await client.send(.post, "/v1/feedback", key: f.keys["u-2"]!, body: other).json["status"]?.stringValue == "applied")
            #expect(try store.usersBehind() == ["u-2": 1])
            let written = try #require(try store.loadCachedState(user: "u-1", defaults: zeros))
            #expect(written.pending.isEmpty)
            #expect(written.feedbackSeq == 31)
            Self.same(written.state, inMemory)
            let kept = try await store.database.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM feedback WHERE user_id = 'u-1' AND snapshot IS NOT NULL")
            }
            #expect(kept == 30)
            // The checkpoint's prune, committed before that feedback, deleted the events it covered.
            #expect(try store.rowCounts(user: "u-1")["pending_events"] == 0)
        }
        #expect(try store.usersBehind().isEmpty)  // the shutdown's checkpoint wrote u-2
        #expect(try store.rowCounts(user: "u-2")["pending_events"] == 0)
    }

    @Test func whenABatchIsRetriedAUsersWritesAfterOneOfTheirsFailedFailToo() async throws {
        let f = try Fixture()
        let store = f.service.store
        let tracks = try store.allTracks().map(\.id)
        let zeros = [Float](repeating: 0, count: FeatureLayout.dimension)
        // An event of `user` staged on its stored state, as the service stages one.
        func staged(_ user: String, _ json: String) throws -> (row: FeedbackRow, event: FeedbackEvent, state: UserState) {
            try store.readUser(user, defaults: zeros) { cached, reads in
                var c = try #require(cached)
                let e = try FeedbackEvent.decode(Data(json.utf8))
                let verdict = try Rules(engine: f.service.engine.with(catalog: reads.catalog))
                    .stageFeedback(e, appliedBy: nil, user: &c, pick: Rules.pickNamed(by: e, appliedBy: nil, lookup: reads.pickRecord(id:)))
                guard case let .applied(row) = verdict else { throw RuleError.noContext }
                return (row, e, c.state)
            }
        }
        let u1 = Self.events("u-1", count: 2, tracks: tracks), u2 = Self.events("u-2", count: 1, tracks: tracks)
        let first = try staged("u-1", u1[0])
        try store.commit([.feedback(first.row, state: first.state)])
        let before = try #require(try store.loadCachedState(user: "u-1", defaults: zeros)).state
        // A second event of u-1 that reuses the first one's id: its insert fails. Then u-1's state with
        // its effect, and an event of u-2: one batch, which fails and is retried write by write.
        let reused = try staged("u-1", u1[1].replacingOccurrences(of: "v-u-1-1", with: "v-u-1-0"))
        let other = try staged("u-2", u2[0])
        let committer = GroupCommitter(
            store: store, maxBatch: 100, maxQueued: 100, pickDelay: .zero, metrics: ServerMetrics(), logger: f.logs.logger,
            settled: { _, _ in })
        let tickets = [CommitTicket(), CommitTicket(), CommitTicket()]
        try committer.enqueue(.pendingFeedback(reused.row, event: PendingEventText(reused.event)), ticket: tickets[0])
        try committer.enqueue(.state(reused.state), ticket: tickets[1])
        try committer.enqueue(.pendingFeedback(other.row, event: PendingEventText(other.event)), ticket: tickets[2])
        let running = Task { try await committer.run() }
        var failed: [Bool] = []
        for t in tickets {
            do {
                try await t.wait()
                failed.append(false)
            } catch {
                failed.append(true)
            }
        }
        committer.close()
        try await running.value
        // The event failed, so the state holding its effect did not commit either; u-2's event did.
        #expect(failed == [true, true, false])
        Self.same(try #require(try store.loadCachedState(user: "u-1", defaults: zeros)).state, before)
        #expect(try store.usersBehind() == ["u-2": 1])
    }

    @Test func forgettingAUserDeletesItsPendingEventsToo() async throws {
        let f = try Fixture(keepingSnapshots: ["u-2"]) { $0.viewCheckpointInterval = .seconds(600) }
        let tracks = try f.service.store.allTracks().map(\.id)
        try await f.api.buildApplication().test(.router) { client in
            for e in Self.events("u-2", count: 3, tracks: tracks) {
                let r = try await client.send(.post, "/v1/feedback", key: f.keys["u-2"]!, body: e)
                #expect(r.json["status"]?.stringValue == "applied")
            }
            #expect(try f.service.store.rowCounts(user: "u-2")["pending_events"] == 3)
            let deleted = try await client.send(.delete, "/v1/users/u-2", key: f.admin)
            #expect(deleted.status == .noContent)
            #expect(try f.service.store.rowCounts(user: "u-2").values.allSatisfy { $0 == 0 })
        }
        #expect(try f.service.store.usersBehind().isEmpty)
    }

    @Test func aStateLoadedBeforeItsCheckpointIsTheStateOfOneCleanRun() async throws {
        // A service whose memory is lost before its checkpoint (a crash): the next service loads the
        // stored state and its pending events, and goes on exactly as one service would have.
        let f = try Fixture(keepingSnapshots: ["u-1"]) { $0.viewCheckpointInterval = .seconds(600) }
        let tracks = try f.service.store.allTracks().map(\.id)
        let events = Self.events("u-1", count: 40, tracks: tracks)
        let g = try Fixture()
        for e in events {
            guard case .applied = try g.service.feedback(FeedbackEvent.decode(Data(e.utf8))) else { Issue.record("not applied: \(e)"); return }
        }
        #expect(try g.service.state(user: "u-1").bins.count >= 2)
        let first = f.api
        try await first.buildApplication().test(.router) { client in
            for e in events.prefix(25) {
                #expect(try await client.send(.post, "/v1/feedback", key: f.keys["u-1"]!, body: e).json["status"]?.stringValue == "applied")
            }
            #expect(try f.service.store.usersBehind() == ["u-1": 25])
            // A second service on the database, as after a restart: its first use of u-1 applies the
            // 25 pending events, then the rest arrive.
            let second = try SoundtrackAPI(service: f.service, configuration: first.configuration, logger: f.logs.logger)
            try await second.buildApplication().test(.router) { client in
                for e in events.dropFirst(25) {
                    let r = try await client.send(.post, "/v1/feedback", key: f.keys["u-1"]!, body: e)
                    #expect(r.json["status"]?.stringValue == "applied", "\(r.body)")
                }
                // An event already applied before the restart is a duplicate.
                #expect(try await client.send(.post, "/v1/feedback", key: f.keys["u-1"]!, body: events[3]).json["status"]?.stringValue == "duplicate")
                Self.same(try second.live.state(user: "u-1"), try g.service.state(user: "u-1"))
            }
            // The second service's shutdown wrote the state of all 40 events.
            #expect(try f.service.store.usersBehind().isEmpty)
            let zeros = [Float](repeating: 0, count: FeatureLayout.dimension)
            Self.same(try #require(try f.service.store.loadCachedState(user: "u-1", defaults: zeros)).state, try g.service.state(user: "u-1"))
        }
    }

    @Test func aCatchUpTakesUsersInGroupsReportsAUserThatFailsAndLeavesOneAnotherWriterChanged() async throws {
        let users = (1...5).map { "u-\($0)" }
        let f = try Fixture(users: users)
        let clean = try Fixture(users: users)
        let store = f.service.store
        let tracks = try store.allTracks().map(\.id)
        let defaults = f.service.engine.config.defaultWeights
        let rules = Rules(engine: f.service.engine.with(community: nil))
        // A command's writer (durable, SQLite's own checkpoints and cache), not the service's.
        try await store.database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL; PRAGMA wal_autocheckpoint = 1000; PRAGMA cache_size = -2000")
        }
        let pragmas = try Self.writerPragmas(store)
        #expect(pragmas == [2, 1000, -2000])
        // Each user's events committed as the service commits feedback: the rows and the events,
        // not the states (as after a crash before a checkpoint); the same events in a clean run.
        var counts: [String: Int] = [:]
        for (k, u) in users.enumerated() {
            let events = Self.events(u, count: 5 + 3 * k, tracks: tracks)
            counts[u] = events.count
            for json in events {
                let e = try FeedbackEvent.decode(Data(json.utf8))
                guard case .applied = try clean.service.feedback(e) else { throw RuleError.noContext }
                try Self.commitPending(e, service: f.service)
            }
        }
        #expect(try store.usersBehind() == counts)

        // Another writer brings u-1 up to date after a catch-up loaded it: the catch-up's state of
        // u-1, from the same pending events, is not written over it.
        let stale = try #require(try store.loadCachedState(user: "u-1", defaults: defaults))
        try store.updateUser("u-1", defaults: defaults) { cached, reads in
            try Rules(engine: rules.engine.with(catalog: reads.catalog)).catchUp(&cached!, pick: reads.pickRecord(id:))
            var seen = cached!.state
            seen.pickCounter += 1  // what the other writer did besides
            return ((), [.state(seen)])
        }
        #expect(try store.commitCaughtUp([(stale.state, try #require(stale.pendingMark))]) == ["u-1"])
        #expect(try store.loadCachedState(user: "u-1", defaults: defaults)?.state.pickCounter == stale.state.pickCounter + 1)

        // u-3's third event is recorded in another bin than it lands in, and u-2's second event
        // does not read: those two fail, the others do not. Groups: u-2, u-3 and u-4 (33 events;
        // its load fails for u-2, so its users go one at a time), then u-5 (17: more than 40 with them).
        try await store.database.write { db in
            try db.execute(sql: "UPDATE feedback SET bin_number = bin_number + 7 WHERE user_id = 'u-3' AND applied_seq = 3")
            try db.execute(sql: #"UPDATE pending_events SET event = '{"id": 2}' WHERE user_id = 'u-2' AND applied_seq = 2"#)
        }
        let result = try f.service.catchUp(workers: 3, usersPerTransaction: 3, eventsPerTransaction: 40)
        #expect(result.users == 2)
        #expect(result.events == counts["u-4"]! + counts["u-5"]!)
        #expect(result.failed.keys.sorted() == ["u-2", "u-3"], "\(result.failed)")
        #expect(result.failed["u-3"]?.contains("lands in bin") == true, "\(result.failed)")
        #expect(result.failed["u-2"]?.contains("pending_events") == true, "\(result.failed)")
        #expect(try store.usersBehind() == ["u-2": counts["u-2"]!, "u-3": counts["u-3"]!])
        #expect(f.logs.text.contains("a user's state could not be brought up to date"))
        // The writer's settings are back as they were.
        #expect(try Self.writerPragmas(store) == pragmas)
        for u in users where !["u-2", "u-3"].contains(u) {
            let stored = try #require(try store.loadCachedState(user: u, defaults: defaults))
            #expect(stored.pending.isEmpty)
            #expect(stored.feedbackSeq == Int64(counts[u]!))
            Self.same(stored.state, try clean.service.state(user: u), "\(u)")
        }
    }

    /// Commits an event of a user as the service commits feedback: its row and the event, not the
    /// state (the event staged on the stored state brought up to date first).
    static func commitPending(_ e: FeedbackEvent, service: SoundtrackService) throws {
        let rules = Rules(engine: service.engine.with(community: nil))
        let row = try service.store.readUser(e.user, defaults: service.engine.config.defaultWeights) { cached, reads in
            var c = try #require(cached)
            let here = Rules(engine: rules.engine.with(catalog: reads.catalog))
            try here.catchUp(&c, pick: reads.pickRecord(id:))
            let pick = try Rules.pickNamed(by: e, appliedBy: nil, lookup: reads.pickRecord(id:))
            guard case let .applied(row) = try here.stageFeedback(e, appliedBy: nil, user: &c, pick: pick) else {
                throw RuleError.noContext
            }
            return row
        }
        try service.store.commit([.pendingFeedback(row, event: PendingEventText(e))])
    }

    /// The write connection's synchronous, wal_autocheckpoint and cache_size settings.
    static func writerPragmas(_ store: Store) throws -> [Int] {
        try store.database.writeWithoutTransaction { db in
            try ["synchronous", "wal_autocheckpoint", "cache_size"].map { try Int.fetchOne(db, sql: "PRAGMA \($0)") ?? -1 }
        }
    }

    @Test func aPendingEventOfMoreThanAMebibyteIsReadBack() throws {
        // A service with a larger body limit takes such an event (the snapshot decoder's own limit is 1 MiB).
        let f = try Fixture()
        let track = try f.service.store.allTracks()[0].id
        let title = String(repeating: "\u{1F3B5}", count: 1000)
        let events = (0..<200).map { i in
            #"{"title": "\#(title)", "start": "2026-03-14T0\#(i % 10):00:00+01:00", "end": "2026-03-14T0\#(i % 10):30:00+01:00", "all_day": false}"#
        }
        let tags = (0..<64).map { #""t\#($0)": "\#(title)""# }.joined(separator: ", ")
        let json =
            #"{"id": "big", "user": "u-1", "at": "2026-03-14T09:00:00+01:00", "track": "\#(track)", "signal": "like", "snapshot": {"user": "u-1", "#
            + #""at": "2026-03-14T09:00:00+01:00", "calendar": {"events": [\#(events.joined(separator: ","))]}, "tags": {\#(tags)}}}"#
        let e = try FeedbackEvent(json: JSONParser.parse(Data(json.utf8)))
        #expect(PendingEventText(e).utf8.count > Snapshot.maxBytes)
        try Self.commitPending(e, service: f.service)
        let loaded = try #require(try f.service.store.loadCachedState(user: "u-1", defaults: f.service.engine.config.defaultWeights))
        #expect(loaded.pending.map(\.event) == [e])
        #expect(try f.service.catchUp().users == 1)
        #expect(try f.service.store.usersBehind().isEmpty)
    }
}
