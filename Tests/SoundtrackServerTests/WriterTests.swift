import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SoundtrackContext
import SoundtrackEngine
import Synchronization
import Testing

@testable import SoundtrackServer
@testable import SoundtrackStore

/// The group committer as the service uses it: picks held back and committed together,
/// feedback committed at once, back-pressure, and checkpoints beside the committer.
@Suite struct WriterTests {
    @Test func picksWaitForTheDelayButFeedbackCommitsThemAtOnce() async throws {
        let f = try Fixture { $0.pickCommitDelay = .seconds(60) }
        let key = f.keys["u-1"]!
        let store = f.service.store
        try await f.api.buildApplication().test(.router) { client in
            let pick = try await client.send(.post, "/v1/picks", key: key, body: Doc.snapshot(user: "u-1"))
            #expect(pick.status == .ok)
            let pickId = try #require(pick.json["pick_id"]?.stringValue)
            let track = try #require(pick.json["track"]?["id"]?.stringValue)
            // Held back: not in the database yet (the pick answered without waiting for it).
            try await Task.sleep(for: .milliseconds(200))
            #expect(try store.user("u-1")?.picks == 0)
            // Feedback is committed before it is answered, with the picks queued before it.
            let r = try await client.send(.post, "/v1/feedback", key: key, body: Doc.event(id: "ev-1", user: "u-1", track: track, pickId: pickId))
            #expect(r.json["status"]?.stringValue == "applied")
            #expect(try store.user("u-1")?.picks == 1)
            #expect(try store.feedbackCount(user: "u-1") == 1)
            // Another held-back pick is committed on graceful shutdown.
            #expect(try await client.send(.post, "/v1/picks", key: key, body: Doc.snapshot(user: "u-1")).status == .ok)
        }
        #expect(try store.user("u-1")?.picks == 2)
    }

    @Test func feedbackDoesNotWaitForOtherUsersQueuedPicks() async throws {
        // Picks of four users held back; feedback of one of them commits that user's picks (which
        // it may name) and leaves the others queued: a second of picks no longer rides along with
        // the first feedback after it.
        let users = (1...4).map { "u-\($0)" }
        let f = try Fixture(users: users) {
            $0.pickCommitDelay = .seconds(60)
            $0.userRate = RateLimit(perSecond: 10_000, burst: 10_000)
        }
        let store = f.service.store
        try await f.api.buildApplication().test(.router) { client in
            var last: [String: (pick: String, track: String)] = [:]
            for i in 0..<12 {
                let u = users[i % users.count]
                let r = try await client.send(.post, "/v1/picks", key: f.keys[u], body: Doc.snapshot(user: u))
                #expect(r.status == .ok)
                last[u] = (try #require(r.json["pick_id"]?.stringValue), try #require(r.json["track"]?["id"]?.stringValue))
            }
            let u1 = try #require(last["u-1"])
            let r = try await client.send(.post, "/v1/feedback", key: f.keys["u-1"], body: Doc.event(id: "ev-1", user: "u-1", track: u1.track, pickId: u1.pick))
            #expect(r.json["status"]?.stringValue == "applied")
            #expect(try store.user("u-1")?.picks == 3)
            #expect(try store.feedbackCount(user: "u-1") == 1)
            for u in users.dropFirst() { #expect(try store.user(u)?.picks == 0, "\(u)'s picks are still held back") }
        }
        // Committed on graceful shutdown, each user's in order.
        for u in users { #expect(try store.user(u)?.picks == 3) }
    }

    @Test func aSecondOfPicksIsCommittedInChunksOfWholeUsers() {
        // Writes of users a, b, a, c, b, a (as they were queued): grouped by user in the order of
        // each user's first write, each user's in its order; taken at least two at a time, each
        // take ending at a user's last write.
        let at = (0..<6).map { Date(timeIntervalSince1970: Double($0)) }
        var batch = GroupCommitter.Batch()
        for (i, u) in ["a", "b", "a", "c", "b", "a"].enumerated() { batch.append(.addUser(u, at: at[i]), nil) }
        func described(_ b: GroupCommitter.Batch) -> [String] {
            b.writes.map { w in
                guard case let .addUser(u, d) = w else { return "?" }
                return "\(u)\(Int(d.timeIntervalSince1970))"
            }
        }
        #expect(described(batch.groupedByUser()) == ["a0", "a2", "a5", "b1", "b4", "c3"])
        var due = GroupCommitter.Due(batch)
        #expect(described(due.take(atLeast: 2)) == ["a0", "a2", "a5"])
        // Feedback of c came meanwhile: c's writes still due go with it, before its queued ones.
        #expect(described(due.remove(users: ["c"])) == ["c3"])
        #expect(!due.isEmpty)
        #expect(described(due.take(atLeast: 1)) == ["b1", "b4"])
        #expect(due.isEmpty)
    }

    @Test func aFullQueueMakesTheWriterCommitInsteadOfHoldingPicksBack() async throws {
        let f = try Fixture {
            $0.pickCommitDelay = .seconds(60)
            $0.maxQueuedWrites = 2
        }
        let key = f.keys["u-1"]!
        let store = f.service.store
        try await f.api.buildApplication().test(.router) { client in
            for _ in 0..<5 {
                #expect(try await client.send(.post, "/v1/picks", key: key, body: Doc.snapshot(user: "u-1")).status == .ok)
            }
            // The third pick found the queue full: the writer committed instead of waiting 60 s.
            let committed = try store.user("u-1")?.picks ?? 0
            #expect(committed >= 2)
        }
        #expect(try store.user("u-1")?.picks == 5)
    }

    @Test func checkpointsRunBesideTheWriter() async throws {
        let users = (1...4).map { "u-\($0)" }
        let f = try Fixture(users: users) {
            $0.pickCommitDelay = .zero
            $0.userRate = RateLimit(perSecond: 10_000, burst: 10_000)
        }
        let keys = f.keys
        try await f.api.buildApplication().test(.router) { client in
            for i in 0..<200 {
                let u = users[i % users.count]
                #expect(try await client.send(.post, "/v1/picks", key: keys[u], body: Doc.snapshot(user: u)).status == .ok)
            }
            // The committer's own commits no longer checkpoint; the checkpoint thread copies the log back.
            let autocheckpoint = try await f.service.store.database.writeWithoutTransaction { db in
                try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint")
            }
            #expect(autocheckpoint == 0)
            try await waitUntil {
                let text = f.api.metrics.exposition()
                return Self.metric(text, "soundtrack_wal_checkpoints_total").map { $0 > 0 } == true
                    && Self.metric(text, "soundtrack_wal_pending_frames") == 0
            }
        }
        #expect(try f.service.store.user("u-1")?.picks == 50)
    }

    @Test func queuedWritesHoldOnlyTheBinsTheyChangedAndMergeWithoutLosingAny() throws {
        let f = try Fixture()
        let store = f.service.store
        let zeros = [Float](repeating: 0, count: FeatureLayout.dimension)
        func bin(_ n: Int) -> Bin {
            Bin(
                number: n, label: "bin \(n)", centroid: zeros, spread: zeros, observed: zeros, observations: 1, songs: [],
                prior: nil, createdAt: Date(timeIntervalSince1970: 0), updatedAt: Date(timeIntervalSince1970: 0))
        }
        let whole = UserState(
            user: "u-1", bins: [bin(1), bin(2), bin(3)], weights: zeros, places: PlaceBook(), session: SessionState(),
            recentTracks: [], pickCounter: 0, nextBinNumber: 4)
        try store.saveWholeState(whole, at: Date())
        var cached = CachedUserState(state: whole)
        func record(_ seq: Int64) -> PickRecord {
            PickRecord(pickId: "p-test-\(seq)", user: "u-1", at: Date(), binNumber: 1, trackId: "t", features: FeatureVector(), ranking: [])
        }
        // Two queued writes of one user, each changing another bin: each holds only its bin.
        cached.state.bins[0].label = "first"
        cached.state.changes.bins = [1]
        cached.state.pickCounter = 1
        cached.state.changes.counters = true  // as a pick marks it
        let a = cached.takeChanges()
        #expect(cached.state.changes.isEmpty)
        cached.state.bins[1].label = "second"
        cached.state.changes.bins = [2]
        cached.state.pickCounter = 2
        cached.state.changes.counters = true  // as a pick marks it
        let b = cached.takeChanges()
        #expect(a.bins.map(\.number) == [1])
        #expect(b.bins.map(\.number) == [2])
        // Committed together, the user's state is written once: both bins and the latest counter.
        try store.commit([.pick(PickRow(record: record(0), seq: 0), state: a), .pick(PickRow(record: record(1), seq: 1), state: b)])
        let stored = try #require(try store.loadCachedState(user: "u-1", defaults: zeros)).state
        #expect(stored.bins.map(\.label) == ["first", "second", "bin 3"])
        #expect(stored.pickCounter == 2)
        #expect(try store.user("u-1")?.picks == 2)
    }

    @Test func aForgetInABatchDeletesWhatItsUserWroteBeforeItAndKeepsTheOthersWrites() throws {
        let f = try Fixture()
        let store = f.service.store
        let zeros = [Float](repeating: 0, count: FeatureLayout.dimension)
        func state(_ user: String, counter: Int64) -> UserState {
            var s = UserState(
                user: user, bins: [], weights: zeros, places: PlaceBook(), session: SessionState(),
                recentTracks: ["t-\(counter)"], pickCounter: counter, nextBinNumber: 1)
            s.changes.counters = true
            return s
        }
        func pick(_ user: String, _ seq: Int64) -> UserWrite {
            .pick(
                PickRow(
                    record: PickRecord(pickId: "p-\(user)-\(seq)", user: user, at: Date(), binNumber: 1, trackId: "t", features: FeatureVector(), ranking: []),
                    seq: seq),
                state: state(user, counter: seq + 1))
        }
        // u-1's pick comes before its forget, u-2's writes on both sides of it: u-1's state must be
        // written before the delete (or the delete would leave a session row behind, or fail).
        try store.commit([pick("u-1", 0), pick("u-2", 0), .forget("u-1"), pick("u-2", 1)])
        #expect(try store.user("u-1") == nil)
        #expect(try store.rowCounts(user: "u-1").values.allSatisfy { $0 == 0 })
        let u2 = try #require(try store.loadCachedState(user: "u-2", defaults: zeros)).state
        #expect(u2.pickCounter == 2)
        #expect(u2.recentTracks == ["t-2"])
        #expect(try store.user("u-2")?.picks == 2)
    }

    @Test func pickIdsIncreaseEvenWhenTheClockStepsBackAndAcrossRestarts() async throws {
        let f = try Fixture { $0.pickCommitDelay = .zero }
        let key = f.keys["u-1"]!
        let ids = Mutex<[String]>([])
        func picks(_ api: SoundtrackAPI, _ n: Int, stepBackAt: Int? = nil) async throws {
            try await api.buildApplication().test(.router) { client in
                for i in 0..<n {
                    if i == stepBackAt { f.clock.setWall(1_700_000_000) }
                    let r = try await client.send(.post, "/v1/picks", key: key, body: Doc.snapshot(user: "u-1"))
                    let id = try #require(r.json["pick_id"]?.stringValue)
                    ids.withLock { $0.append(id) }
                }
            }
        }
        try await picks(f.api, 3, stepBackAt: 2)
        // 1,773,000,000,000 ms × 4,096, then one more, then (the clock stepped back) one more again.
        #expect(ids.withLock { $0 } == ["p-0019ccf090200000", "p-0019ccf090200001", "p-0019ccf090200002"])
        // A service started again on the same database, with its clock still behind, follows the
        // greatest id in the database.
        var config = f.api.configuration
        config.clock = f.clock.clock
        try await picks(try SoundtrackAPI(service: f.service, configuration: config, logger: f.logs.logger), 1)
        #expect(ids.withLock { $0.last } == "p-0019ccf090200003")
        #expect(try f.service.store.user("u-1")?.picks == 4)
    }

    @Test func countersAreWrittenByPicksAndByFeedbackThatMakesABin() async throws {
        // No checkpoint but the pick's; u-2 keeps raw snapshots, so its events wait for their state.
        let f = try Fixture(keepingSnapshots: ["u-2"]) { $0.viewCheckpointInterval = .seconds(600) }
        let key = f.keys["u-2"]!
        let store = f.service.store
        let service = f.service
        let track = try f.track
        let zeros = [Float](repeating: 0, count: FeatureLayout.dimension)
        // The state as stored, and the state as every reader sees it (brought up to date with the
        // feedback committed before it: the state of an event follows at a checkpoint or a pick).
        let stored: @Sendable () throws -> UserState = { try #require(try store.loadCachedState(user: "u-2", defaults: zeros)).state }
        let current: @Sendable () throws -> UserState = { try service.state(user: "u-2") }
        try await f.api.buildApplication().test(.router) { client in
            // A user without bins: feedback with a snapshot makes bin 1, and the next number is kept.
            var r = try await client.send(.post, "/v1/feedback", key: key, body: Doc.event(id: "c-1", user: "u-2", track: track, snapshot: true))
            #expect(r.json["created_bin"]?.stringValue == "b-1")
            #expect(try current().nextBinNumber == 2)
            #expect(try current().bins.count == 1)
            #expect(try stored().bins.isEmpty)
            #expect(try store.usersBehind() == ["u-2": 1])
            // Feedback that makes no bin leaves the counters as they are.
            r = try await client.send(.post, "/v1/feedback", key: key, body: Doc.event(id: "c-2", user: "u-2", track: track, snapshot: true))
            #expect(r.json["status"]?.stringValue == "applied")
            #expect(r.json["created_bin"] == nil)
            #expect(try current().nextBinNumber == 2)
            #expect(try store.usersBehind() == ["u-2": 2])
            // A pick moves the pick counter, and writes the state with the feedback's changes before it.
            #expect(try await client.send(.post, "/v1/picks", key: key, body: Doc.snapshot(user: "u-2")).status == .ok)
        }
        #expect(try stored().pickCounter == 1)
        #expect(try stored().nextBinNumber == 2)
        #expect(try stored().bins.count == 1)
        #expect(try store.usersBehind().isEmpty)
    }

    @Test func aRestartCheckpointLetsTheNextTransactionWriteTheLogFromItsStart() throws {
        let f = try Fixture()
        let store = f.service.store
        try store.configureWriteConnection(cacheKiB: 4096, autoCheckpoint: false)
        let checkpointer = try WALCheckpointer(store: store)
        for i in 0..<50 { try store.addUser(NewUser(id: "w-\(i)"), at: Date()) }
        let grown = try checkpointer.checkpoint(.passive)
        #expect(grown.logFrames >= 50)  // one transaction (at least one page) per user
        #expect(grown.copiedFrames == grown.logFrames)
        try checkpointer.checkpoint(.restart)
        try store.addUser(NewUser(id: "w-last"), at: Date())
        let after = try checkpointer.checkpoint(.passive)
        #expect(after.logFrames < 10)
        #expect(try store.userExists("w-last"))
    }

    @Test func aRestartCheckpointGivesUpAtOnceWhileAReaderHoldsTheLog() throws {
        let f = try Fixture()
        let store = f.service.store
        try store.configureWriteConnection(cacheKiB: 4096, autoCheckpoint: false)
        let checkpointer = try WALCheckpointer(store: store)
        for i in 0..<5 { try store.addUser(NewUser(id: "w-\(i)"), at: Date()) }
        // A reader whose snapshot is in the log, then a write after it: the restart cannot copy
        // the log past the reader's snapshot while the reader stays.
        var config = Configuration()
        config.allowsUnsafeTransactions = true
        let reader = try DatabaseQueue(path: f.path, configuration: config)
        try reader.inDatabase { db in
            try db.beginTransaction(.deferred)
            _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM users")
        }
        try store.addUser(NewUser(id: "w-late"), at: Date())
        // It holds the committer back while it waits: it must give up within milliseconds (it
        // waited a whole second, its busy timeout meant as one millisecond).
        let start = ContinuousClock.now
        #expect(throws: DatabaseError.self) { try checkpointer.checkpoint(.restart) }
        #expect(ContinuousClock.now - start < .milliseconds(250))
        try reader.inDatabase { db in try db.rollback() }
        // With the reader gone it goes through, and the log starts over.
        try checkpointer.checkpoint(.restart)
        try store.addUser(NewUser(id: "w-last"), at: Date())
        #expect(try checkpointer.checkpoint(.passive).logFrames < 10)
    }

    #if os(Linux)
    @Test func theCommitAndCheckpointThreadsRunAtARaisedNiceValue() async throws {
        let f = try Fixture { $0.backgroundNice = 10 }
        let key = f.keys["u-1"]!
        try await f.api.buildApplication().test(.router) { client in
            #expect(try await client.send(.post, "/v1/picks", key: key, body: Doc.snapshot(user: "u-1")).status == .ok)
            // Tests run in parallel in this process, and other services' background threads run at
            // the default, 0 added. The threads that start them run at nice -4 to 0, so +10 leaves
            // this service's writer and checkpoint threads above 0, and only them.
            func raised(_ nices: [String: [Int]]) -> [String] {
                ["st-commit", "st-checkpoint"].filter { nices[$0]?.contains { $0 > 0 } == true }
            }
            try await waitUntil { raised(Self.threadNices()).count == 2 }
            let nices = Self.threadNices()
            #expect(raised(nices) == ["st-commit", "st-checkpoint"], "\(nices)")
            // The blend's refit thread ("st-blend") and the community's recount ("st-community", of
            // this service and of the others running beside it) always run at the lowest priority,
            // 19, whatever the setting.
            let lowest: Set = ["st-blend", "st-community"]
            #expect(nices.filter { $0.key.hasPrefix("st-") && !lowest.contains($0.key) }.values.joined().filter { $0 > 0 }.count == 2, "\(nices)")
            for name in lowest { #expect(nices[name]?.allSatisfy { $0 == 19 } ?? true, "\(name): \(nices)") }
            #expect(nices.filter { !$0.key.hasPrefix("st-") }.values.contains { $0.contains { $0 <= 0 } })
        }
    }

    @Test func raisingAThreadsNiceValueLeavesTheOtherThreadsAlone() throws {
        let before = try #require(threadNice())
        let seen = Mutex<(Int32?, Int32?)?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let start = threadNice()
            lowerThreadPriority(by: 3)
            seen.withLock { $0 = (start, threadNice()) }
            done.signal()
        }
        thread.start()
        done.wait()
        let (start, after) = try #require(seen.withLock { $0 })
        let first = try #require(start)
        #expect(after == min(19, first + 3))
        #expect(threadNice() == before)
    }

    /// The nice value of each of this process's threads, by thread name (from /proc/self/task).
    static func threadNices() -> [String: [Int]] {
        var out: [String: [Int]] = [:]
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for t in tasks {
            guard let stat = try? String(contentsOfFile: "/proc/self/task/\(t)/stat", encoding: .utf8),
                let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
            else { continue }
            let name = String(stat[stat.index(after: open)..<close])
            // After the name: field 3 (state) onwards; the nice value is field 19.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 16, let nice = Int(fields[16]) else { continue }
            out[name, default: []].append(nice)
        }
        return out
    }
    #endif

    static func metric(_ exposition: String, _ name: String) -> Double? {
        for line in exposition.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1))
        }
        return nil
    }
}
