import Foundation
import GRDB
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackRules
import SoundtrackTestSupport
import Testing

@testable import SoundtrackStore

@Suite("SQLite store")
struct StoreTests {
    @Test("The writer lock admits one holder per database file, says who holds it, and is free again once released")
    func writerLock() throws {
        let dir = Scratch.directory("st-lock")
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("s.sqlite").path
        let first = try WriterLock(databasePath: db, holder: "replay")
        #expect(throws: WriterLockError.held(database: db, holder: "replay (process \(getpid()))")) {
            try WriterLock(databasePath: db, holder: "batch")
        }
        // Another database file is another lock.
        let other = try WriterLock(databasePath: dir.appendingPathComponent("t.sqlite").path, holder: "batch")
        other.release()
        first.release()
        let again = try WriterLock(databasePath: db, holder: "batch")
        again.release()
        #expect(WriterLockError.held(database: db, holder: "replay (process 1)").description.hasPrefix("another replay, batch or service is writing this database"))
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let tracks: [Track] = try! CatalogReader().read(contentsOf: root.appendingPathComponent("datasets/catalog-small.csv")).tracks

    enum Kind: String, CaseIterable { case memory, file }

    static func store(_ kind: Kind) throws -> Store {
        switch kind {
        case .memory: return try Store.inMemory()
        case .file:
            let dir = Scratch.directory("st")
            return try Store(path: dir.appendingPathComponent("s.sqlite").path)
        }
    }

    static func service(_ kind: Kind, seed: UInt64 = 1) throws -> SoundtrackService {
        let s = try store(kind)
        try s.upsertTracks(tracks)
        let m = try Models.bundled()
        return SoundtrackService(store: s, engine: Recommender(config: m.config, catalog: IndexCatalog(CatalogIndex(tracks: [])), priors: m.priors, seed: seed))
    }

    static func snapshot(_ place: String, _ at: String, user: String = "u-1") -> Snapshot {
        Snapshot(
            user: user, at: Timestamp(rfc3339: at)!, location: Location(lat: 52.5, lon: 13.4, speedMps: 0, place: place),
            motion: Motion(activity: place == "gym" ? .running : .stationary, heartRateBpm: place == "gym" ? 150 : 65))
    }

    @Test("withLargeCache puts the write connection's cache, checkpoint and secure-delete settings back as they were")
    func largeCacheRestoresSettings() throws {
        let store = try Self.store(.file)
        func settings() throws -> [Int] {
            try store.database.writeWithoutTransaction { db in
                try ["cache_size", "wal_autocheckpoint", "secure_delete"].map { try Int.fetchOne(db, sql: "PRAGMA \($0)") ?? -1 }
            }
        }
        try store.configureWriteConnection(cacheKiB: 65536, autoCheckpoint: false)
        try store.database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA secure_delete = 1") }
        #expect(try settings() == [-65536, 0, 1])
        let inside = try store.withLargeCache(cacheMiB: 8, checkpointPages: 5000) { try settings() }
        #expect(inside == [-8192, 5000, 0])
        #expect(try settings() == [-65536, 0, 1])
    }

    @Test("The state the engine leaves is the state the store loads back", arguments: Kind.allCases)
    func stateRoundTrip(kind: Kind) throws {
        let service = try Self.service(kind)
        try service.store.addUser(NewUser(id: "u-1"), at: Date(timeIntervalSince1970: 0))
        var picks: [Pick] = []
        for (i, p) in ["library", "gym", "home", "library"].enumerated() {
            picks.append(try service.pick(Self.snapshot(p, "2026-03-11T0\(i + 6):00:00+01:00")))
        }
        let liked = FeedbackEvent(id: "e1", user: "u-1", at: picks[3].at, track: picks[3].track.id, signal: .like, pickId: picks[3].pickId)
        guard case .applied = try service.feedback(liked) else { Issue.record("not applied"); return }
        let state = try service.state(user: "u-1")
        #expect(state.bins.count == 3)
        #expect(state.pickCounter == 4)
        #expect(state.recentTracks == picks.map(\.track.id))
        #expect(state.bins.first { $0.id == picks[3].bin.id }?.songs.first { $0.trackId == picks[3].track.id }?.likes == 1)
        // A whole-state save and load is lossless.
        try service.store.saveWholeState(state, at: Date())
        let again = try service.state(user: "u-1")
        #expect(again.bins == state.bins)
        #expect(again.weights == state.weights)
        #expect(again.session == state.session)
    }

    /// How ``incrementalWritesEqualMemory(kind:mode:)`` stages and commits.
    enum WriteMode: String, CaseIterable {
        /// Each pick and event staged on the state loaded from the store, and committed alone.
        case reloadEach
        /// Staged on one live state, as the HTTP service does, and committed three writes at a
        /// time (``Store/commit(_:)`` then merges a user's successive changes).
        case liveInThrees
    }

    @Test(
        "Picks and feedback committed with only what they changed leave in the store the state the same rules keep in memory",
        arguments: Kind.allCases, WriteMode.allCases)
    func incrementalWritesEqualMemory(kind: Kind, mode: WriteMode) throws {
        // Every write holds only what it changed (``CachedUserState/takeChanges()``: a served
        // bin's row without its songs unless they changed too); the state kept in memory alongside
        // is never stored. Six contexts over a cap of three bins: joins, merges and new bins, songs
        // that join and ratings that change, bins whose vectors move while their songs stay.
        let service = try Self.service(kind)
        var config = service.engine.config
        config.binCap = 3
        let engine = service.engine.with(config: config).with(catalog: IndexCatalog(CatalogIndex(tracks: try service.store.allTracks())))
        let rules = Rules(engine: engine)
        let store = service.store
        let defaults = config.defaultWeights
        try store.addUser(NewUser(id: "u-1"), at: Date(timeIntervalSince1970: 0))
        func load() throws -> CachedUserState { try #require(try store.loadCachedState(user: "u-1", defaults: defaults)) }
        var memory = try load()
        var live = try load()
        var queued: [UserWrite] = []
        var records: [String: PickRecord] = [:]
        var servedOnly = 0, mergesInAGroup = 0
        func stageOn() throws -> CachedUserState { mode == .reloadEach ? try load() : live }
        func queue(_ write: UserWrite, _ cached: CachedUserState, step: String) throws {
            if mode == .liveInThrees { live = cached }
            queued.append(write)
            guard mode == .reloadEach || queued.count == 3 else { return }
            // A bin merged away by a write after the first of its commit (``Store/merge(_:then:)``).
            if queued.dropFirst().contains(where: { w in
                switch w {
                case let .pick(_, state?), let .feedback(_, state?): !state.changes.removedBins.isEmpty
                default: false
                }
            }) {
                mergesInAGroup += 1
            }
            try store.commit(queued)
            queued = []
            let stored = try load().state
            #expect(stored.bins == memory.state.bins, "after \(step)")
            #expect(stored.mergedInto == memory.state.mergedInto && stored.nextBinNumber == memory.state.nextBinNumber, "after \(step)")
            #expect(stored.recentTracks == memory.state.recentTracks && stored.session == memory.state.session, "after \(step)")
        }
        let places = ["library", "gym", "home", "cafe", "office", "park"]
        let signals: [(Signal, Int?)] = [(.like, nil), (.skip, nil), (.dislike, nil), (.rate, 5), (.complete, nil), (.rate, 2), (.dislike, nil)]
        for i in 0..<84 {
            let at = String(format: "2026-03-11T%02d:%02d:00+01:00", 6 + i / 6, (i % 6) * 10)
            let snapshot = Self.snapshot(places[(i * 5 + i / 7) % places.count], at)
            var cached = try stageOn()
            let stored = rules.stagePick(snapshot, state: &cached.state)
            if cached.state.changes.songs.isEmpty && !cached.state.changes.bins.isEmpty { servedOnly += 1 }
            let staged = rules.stagePick(snapshot, state: &memory.state)
            memory.state.changes = UserState.Changes()
            #expect(stored.pick.track.id == staged.pick.track.id && stored.pick.bin.id == staged.pick.bin.id, "pick \(i)")
            records[staged.row.record.pickId] = staged.row.record
            try queue(.pick(stored.row, state: cached.takeChanges()), cached, step: "pick \(i)")
            guard i % 2 == 1 else { continue }
            let (signal, rating) = signals[(i / 2) % signals.count]
            let event = FeedbackEvent(
                id: "e-\(i)", user: "u-1", at: staged.pick.at, track: staged.pick.track.id, signal: signal, rating: rating,
                pickId: staged.pick.pickId)
            cached = try stageOn()
            let named = Rules.pickNamed(by: event, appliedBy: nil) { records[$0] }
            let inStore = try rules.stageFeedback(event, appliedBy: nil, user: &cached, pick: named)
            let inMemory = try rules.stageFeedback(event, appliedBy: nil, user: &memory, pick: named)
            memory.state.changes = UserState.Changes()
            guard case let .applied(a) = inStore, case let .applied(b) = inMemory else {
                Issue.record("event \(i) not applied")
                return
            }
            #expect(a.outcome == b.outcome, "event \(i)")
            try queue(.feedback(a, state: cached.takeChanges()), cached, step: "event \(i)")
        }
        if !queued.isEmpty { try store.commit(queued) }
        let loaded = try load().state
        #expect(servedOnly >= 5)
        if mode == .liveInThrees { #expect(mergesInAGroup >= 3) }
        #expect(!loaded.mergedInto.isEmpty)
        #expect(loaded.bins.contains { $0.songs.contains { $0.rating > 0 } } && loaded.bins.contains { $0.songs.contains { $0.dislikes > 0 } })
        #expect(loaded.bins.map(\.songs) == memory.state.bins.map(\.songs))
        #expect(loaded.bins == memory.state.bins)
        #expect(loaded.weights == memory.state.weights)
        #expect(loaded.session == memory.state.session)
        #expect(loaded.pickCounter == memory.state.pickCounter)
    }

    @Test("Vocabulary, merges, mean times, transitions and ratings survive the store, user by user and in bulk", arguments: Kind.allCases)
    func onlineClusterStateRoundTrip(kind: Kind) throws {
        let service = try Self.service(kind)
        var config = service.engine.config
        config.binCap = 2
        let engine = service.engine.with(config: config).with(catalog: IndexCatalog(CatalogIndex(tracks: Self.tracks)))
        var state = engine.newUser("u-1")
        var last: (Pick, PickRecord)?
        for (i, p) in ["library", "gym", "home", "cafe", "gym"].enumerated() {
            var s = Self.snapshot(p, "2026-03-11T09:\(i)0:00+01:00")  // one session: transitions
            s.tags = ["wifi": p, "ringer": i % 2 == 0 ? "normal" : "silent"]
            last = engine.pick(s, state: &state)
        }
        let (pick, record) = try #require(last)
        _ = engine.feedback(
            FeedbackEvent(id: "r-1", user: "u-1", at: pick.at, track: pick.track.id, signal: .rate, rating: 5, pickId: pick.pickId),
            pick: record, state: &state)
        #expect(!state.mergedInto.isEmpty && state.bins.count == 2)
        #expect(!state.vocabulary.tags.isEmpty && !state.vocabulary.places.isEmpty)
        #expect(state.bins.contains { !$0.transitions.isEmpty })
        #expect(state.bins.contains { $0.songs.contains { $0.rating == 5 } })
        try service.store.saveWholeState(state, at: Date())
        let defaults = engine.config.defaultWeights
        for loaded in [
            try #require(try service.store.loadCachedState(user: "u-1", defaults: defaults)).state,
            try #require(try service.store.loadCachedStates(users: ["u-1"], defaults: defaults)["u-1"]).state
        ] {
            #expect(loaded.bins == state.bins)
            #expect(loaded.bins.map(\.meanTime) == state.bins.map(\.meanTime))
            #expect(loaded.vocabulary == state.vocabulary)
            #expect(loaded.mergedInto == state.mergedInto)
            #expect(loaded.nextBinNumber == state.nextBinNumber)
        }
        // A changed bin's row takes every value of the state's bin, also those set at its creation:
        // a merge gives the bin it keeps the older creation time of the two, after the row was
        // written (replay writes a block's states, the service its checkpoints, many times over).
        var live = state
        live.changes = UserState.Changes()
        let older = live.bins[0].createdAt.addingTimeInterval(-86_400)
        live.bins[0].createdAt = older
        live.bins[0].prior = "gym"
        live.changes.bins.insert(live.bins[0].number)
        try service.store.commit([.state(live)])
        let merged = try #require(try service.store.loadCachedState(user: "u-1", defaults: defaults)).state
        #expect(merged.bins[0].createdAt == older && merged.bins[0].prior == "gym")
        #expect(merged.bins == live.bins)
        // A later whole save without a bin deletes its row.
        var fewer = state
        fewer.bins.removeLast()
        try service.store.saveWholeState(fewer, at: Date())
        #expect(try service.store.loadCachedState(user: "u-1", defaults: defaults)?.state.bins.count == 1)
    }

    @Test("The community rebuilt from the feedback log is the one the engine kept while applying it", arguments: Kind.allCases)
    func communityRebuilt(kind: Kind) throws {
        let plain = try Self.service(kind)
        let shared = SharedCommunity()
        let service = SoundtrackService(store: plain.store, engine: plain.engine.with(community: shared))
        var n = 0
        for user in ["u-1", "u-2"] {
            try service.store.addUser(NewUser(id: user), at: Date(timeIntervalSince1970: 0))
            for (i, place) in ["gym", "library", "gym"].enumerated() {
                let pick = try service.pick(Self.snapshot(place, "2026-03-11T0\(i + 6):00:00+01:00", user: user))
                let signals: [(Signal, Int?)] = [(.like, nil), (.rate, 2), (.rate, 5)]
                n += 1
                let event = FeedbackEvent(
                    id: "e-\(n)", user: user, at: pick.at, track: pick.track.id, signal: signals[i].0, rating: signals[i].1, pickId: pick.pickId)
                guard case .applied = try service.feedback(event) else { Issue.record("not applied"); return }
            }
        }
        let recorded = shared.snapshot
        #expect(recorded.maxLikes >= 1 && recorded.version == 6)
        #expect(try service.store.rebuildCommunity() == recorded)
    }

    @Test("A stored pick reads back as it was made, and a pick row of an earlier version (ranking as JSON text) still reads")
    func pickRecordRoundTrip() throws {
        let service = try Self.service(.file)
        try service.store.addUser(NewUser(id: "u-1"), at: Date(timeIntervalSince1970: 0))
        var state = try service.state(user: "u-1")
        var made: [PickRecord] = []
        for (i, p) in ["library", "gym", "home", "library", "gym"].enumerated() {
            let (_, record) = service.engine.pick(Self.snapshot(p, "2026-03-11T0\(i + 4):00:00+01:00"), state: &state)
            made.append(record)
        }
        #expect(made.last!.ranking.count >= 2)
        #expect(made.last!.ranking.contains { $0.score != $0.score.rounded() })
        try service.store.database.write { db in
            for (seq, r) in made.enumerated() { try Store.insertPick(db, r, seq: Int64(seq)) }
        }
        for r in made { #expect(try service.store.pickRecord(id: r.pickId) == r) }
        #expect(try service.store.pickRecord(id: "p-nope") == nil)
        // An earlier version stored the ranking as JSON text.
        let old = made.last!
        try service.store.database.write { db in
            try db.execute(sql: "UPDATE picks SET ranking = ? WHERE id = ?", arguments: ["[[2,0.5],[1,-0.25]]", old.pickId])
        }
        #expect(try service.store.pickRecord(id: old.pickId)?.ranking == [RankedBin(bin: 2, score: 0.5), RankedBin(bin: 1, score: -0.25)])
        // A ranking that does not read is an error naming the pick, not an empty ranking.
        try service.store.database.write { db in
            try db.execute(sql: "UPDATE picks SET ranking = ? WHERE id = ?", arguments: ["[[2,0.5],[1]]", old.pickId])
        }
        #expect(throws: StoreError.corruptPick(id: old.pickId)) { try service.store.pickRecord(id: old.pickId) }
    }

    @Test("A pick's presence mask is stored as one bit a slot; masks of earlier versions (Float32s) still read, a mask of another length is an error naming the row")
    func pickMaskBits() throws {
        let service = try Self.service(.file)
        try service.store.addUser(NewUser(id: "u-1"), at: Date(timeIntervalSince1970: 0))
        var state = try service.state(user: "u-1")
        let (_, record) = service.engine.pick(Self.snapshot("gym", "2026-03-11T07:00:00+01:00"), state: &state)
        let mask = record.features.mask
        #expect(mask.contains(1) && mask.contains(0))
        try service.store.database.write { db in try Store.insertPick(db, record, seq: 0) }
        let stored = try service.store.database.read { db in
            try Data.fetchOne(db, sql: "SELECT mask FROM picks WHERE id = ?", arguments: [record.pickId])!
        }
        #expect(stored.count == (FeatureLayout.dimension + 7) / 8)
        for (i, m) in mask.enumerated() { #expect((stored[i / 8] >> UInt8(i % 8)) & 1 == (m == 1 ? 1 : 0)) }
        #expect(try service.store.pickRecord(id: record.pickId) == record)
        // Earlier versions stored the mask as Float32s, as the features still are.
        try service.store.database.write { db in
            try db.execute(sql: "UPDATE picks SET mask = ? WHERE id = ?", arguments: [VectorCoding.encode(mask), record.pickId])
        }
        #expect(try service.store.pickRecord(id: record.pickId) == record)
        // A mask that is not 0/1 throughout keeps its values (as Float32s).
        var odd = mask
        odd[0] = 0.5
        #expect(VectorCoding.encode(mask: odd).count == 4 * odd.count)
        #expect(VectorCoding.encode(mask: odd).withUnsafeBytes { VectorCoding.decode(mask: $0, count: odd.count) } == odd)
        // Neither length: an error that names the column and the row.
        let rowid = try service.store.database.read { db in
            try Int64.fetchOne(db, sql: "SELECT rowid FROM picks WHERE id = ?", arguments: [record.pickId])!
        }
        try service.store.database.write { db in
            try db.execute(sql: "UPDATE picks SET mask = zeroblob(7) WHERE id = ?", arguments: [record.pickId])
        }
        #expect(
            throws: StoreError.corrupt(
                table: "picks", column: "mask", row: rowid, expected: "a presence mask of \(FeatureLayout.dimension) slots (one bit or one Float32 a slot)")
        ) { try service.store.pickRecord(id: record.pickId) }
        // Features of another length are one too (they used to stop the process), with a good mask.
        try service.store.database.write { db in
            try db.execute(
                sql: "UPDATE picks SET features = zeroblob(12), mask = ? WHERE id = ?",
                arguments: [Data(VectorCoding.encode(mask: mask)), record.pickId])
        }
        #expect(
            throws: StoreError.corrupt(
                table: "picks", column: "features", row: rowid,
                expected: "\(FeatureLayout.dimension) Float32 values of feature layout v\(FeatureLayout.version)")
        ) { try service.store.pickRecord(id: record.pickId) }
    }

    @Test("Strings bound through the C API keep every byte: empty, non-ASCII, an embedded NUL")
    func rawStatementStrings() throws {
        let store = try Self.store(.memory)
        let values = ["", "ünï · 音楽", "a\u{0}b", String(repeating: "x", count: 5000)]
        let read: [String] = try store.database.write { db in
            try db.execute(sql: "CREATE TEMP TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)")
            let insert = try RawStatement(db, "INSERT INTO t (k, v) VALUES (?, ?)")
            for (k, v) in values.enumerated() {
                try insert.bind(1, k)
                try insert.bind(2, v)
                try insert.execute()
            }
            let select = try RawStatement(db, "SELECT v FROM t ORDER BY k")
            var out: [String] = []
            while try select.step() { out.append(select.text(0)) }
            return out
        }
        #expect(read == values)
    }

    @Test("The session's run of one style survives the store, user by user and in bulk, and a like's reset of it too", arguments: Kind.allCases)
    func styleRunRoundTrip(kind: Kind) throws {
        let service = try Self.service(kind)
        try service.store.addUser(NewUser(id: "u-1"), at: Date(timeIntervalSince1970: 0))
        let first = try service.pick(Self.snapshot("gym", "2026-03-11T18:00:00+01:00"))
        let second = try service.pick(Self.snapshot("gym", "2026-03-11T18:03:00+01:00"))
        let defaults = service.engine.config.defaultWeights
        func loaded() throws -> [SessionState] {
            [
                try #require(try service.store.loadCachedState(user: "u-1", defaults: defaults)).state.session,
                try #require(try service.store.loadCachedStates(users: ["u-1"], defaults: defaults)["u-1"]).state.session
            ]
        }
        let state = try service.state(user: "u-1")
        let run = try #require(state.session.styleRun)
        let index = CatalogIndex(tracks: try service.store.allTracks())
        func style(_ p: Pick) -> UInt64? { index.row(of: p.track.id).flatMap { TrackStyle.of(row: $0, index: index) } }
        // The run began at the first pick when both picks had one style, else at the second.
        #expect(run.since == (style(first) == style(second) ? first.at.date : second.at.date))
        #expect(run.style == style(second))
        #expect(try loaded() == [state.session, state.session])
        let liked = FeedbackEvent(id: "e1", user: "u-1", at: second.at, track: second.track.id, signal: .like, pickId: second.pickId)
        guard case .applied = try service.feedback(liked) else { Issue.record("not applied"); return }
        #expect(try loaded().map(\.styleRun) == [nil, nil])
    }

    @Test("Session lists are stored as JSON arrays, escapes included")
    func sessionListsAsJSON() throws {
        #expect(String(decoding: Store.encodeInts([]), as: UTF8.self) == "[]")
        #expect(String(decoding: Store.encodeInts([3, -1, 12]), as: UTF8.self) == "[3,-1,12]")
        let odd = ["t-1", "quote\"back\\slash", "tab\there", "ünï"]
        #expect(String(decoding: Store.encodeStrings(odd), as: UTF8.self) == JSONValue.array(odd.map { .string($0) }).serialized())
        #expect(try Store.decodeStrings(String(decoding: Store.encodeStrings(odd), as: UTF8.self), user: "u") == odd)
        #expect(try Store.decodeInts(String(decoding: Store.encodeInts([3, -1, 12]), as: UTF8.self), user: "u") == [3, -1, 12])
        // A list that does not read stops the load, naming the user and the column, as a bin's songs do.
        #expect(throws: StoreError.corruptSession(user: "u", column: "recent_tracks")) { try Store.decodeStrings("[\"a\",1]", user: "u") }
        #expect(throws: StoreError.corruptSession(user: "u", column: "avoided")) { try Store.decodeInts("[1,", user: "u") }
    }

    @Test("The same event applied twice changes nothing the second time", arguments: Kind.allCases)
    func idempotent(kind: Kind) throws {
        let service = try Self.service(kind)
        try service.store.addUser(NewUser(id: "u-1"), at: Date())
        try service.store.addUser(NewUser(id: "u-2"), at: Date())
        let p = try service.pick(Self.snapshot("library", "2026-03-11T09:00:00+01:00"))
        let e = FeedbackEvent(id: "e1", user: "u-1", at: p.at, track: p.track.id, signal: .dislike, pickId: p.pickId)
        #expect(try service.feedback(e) != .duplicate)
        let before = try service.state(user: "u-1")
        #expect(try service.feedback(e) == .duplicate)
        let after = try service.state(user: "u-1")
        #expect(after.bins == before.bins && after.weights == before.weights && after.session == before.session)
        // The same id from another user is an error, not a silent duplicate.
        var other = e
        other.user = "u-2"
        other.pickId = nil
        other.snapshot = Self.snapshot("library", "2026-03-11T09:00:00+01:00", user: "u-2")
        #expect(throws: RuleError.eventIdTaken("e1")) { try service.feedback(other) }
    }

    @Test("Unknown users and unknown picks are typed errors that name the field")
    func unknowns() throws {
        let service = try Self.service(.memory)
        #expect(throws: RuleError.unknownUser("ghost")) {
            try service.pick(Self.snapshot("gym", "2026-03-11T09:00:00+01:00", user: "ghost"))
        }
        try service.store.addUser(NewUser(id: "u-1"), at: Date())
        #expect(throws: RuleError.userExists("u-1")) { try service.store.addUser(NewUser(id: "u-1"), at: Date()) }
        let e = FeedbackEvent(id: "e", user: "u-1", at: Timestamp(rfc3339: "2026-03-11T09:00:00+01:00")!, track: Self.tracks[0].id, signal: .like, pickId: "p-nope")
        #expect(throws: RuleError.unknownPick("p-nope", user: "u-1")) { try service.feedback(e) }
        #expect(RuleError.unknownPick("p-nope", user: "u-1").field == "pick_id")
        #expect(try service.store.user("u-1")?.feedback == 0)
    }

    @Test("A read-only pick writes nothing")
    func readOnly() throws {
        let service = try Self.service(.file)
        try service.store.addUser(NewUser(id: "u-1"), at: Date())
        let p = try service.pick(Self.snapshot("gym", "2026-03-11T09:00:00+01:00"), learn: false)
        #expect(p.bin.created)
        let s = try service.state(user: "u-1")
        #expect(s.bins.isEmpty && s.pickCounter == 0)
    }

    @Test("forget removes every row of the user and nothing of others")
    func forget() throws {
        let service = try Self.service(.file)
        for u in ["u-1", "u-2"] {
            try service.store.addUser(NewUser(id: u, email: "\(u)@example.org"), at: Date())
            let p = try service.pick(Self.snapshot("gym", "2026-03-11T09:00:00+01:00", user: u))
            _ = try service.feedback(FeedbackEvent(id: "e-\(u)", user: u, at: p.at, track: p.track.id, signal: .like, pickId: p.pickId))
            // Coordinates without a label teach the user a place.
            _ = try service.pick(Snapshot(user: u, at: Timestamp(rfc3339: "2026-03-11T12:00:00+01:00")!, location: Location(lat: 48.1, lon: 11.6)))
            // Imported calendar events and a streaming library belong to the user too.
            let start = Timestamp(rfc3339: "2026-03-11T18:00:00+01:00")!, end = Timestamp(rfc3339: "2026-03-11T19:00:00+01:00")!
            try service.store.replaceCalendarEvents(
                user: u, source: .ics, from: start.date, to: end.date,
                events: [StoredCalendarEvent(sourceID: "gym@example.org", start: start, end: end, allDay: false, category: .workout, title: "Gym")], at: Date())
            try service.store.importLibrary(user: u, tracks: [], entries: [LibraryEntry(trackID: p.track.id, list: .saved, rank: 0)], at: Date())
            // A quiz round answered, and so a best score.
            let quiz = try service.store.issueQuiz(user: u) { number, _ in QuizStoreTests.round(number, user: u) }
            _ = try service.store.answerQuiz(user: u, quiz: quiz.id, choices: [1, 2, 3, 4, 1], seconds: nil, at: Date())
            // An event committed before its state, as the HTTP service commits feedback (pending_events).
            try service.store.updateUser(u, defaults: service.engine.config.defaultWeights) { user, reads in
                let e = FeedbackEvent(
                    id: "pending-\(u)", user: u, at: Timestamp(rfc3339: "2026-03-11T12:30:00+01:00")!, track: p.track.id, signal: .skip,
                    pickId: p.pickId)
                let verdict = try Rules(engine: service.engine.with(catalog: reads.catalog))
                    .stageFeedback(e, appliedBy: nil, user: &user!, pick: reads.pickRecord(id: p.pickId))
                guard case let .applied(row) = verdict else { throw RuleError.noContext }
                return ((), [.pendingFeedback(row, event: PendingEventText(e))])
            }
        }
        // A listening session of three: forgetting one member leaves the others theirs.
        try service.store.addUser(NewUser(id: "u-3"), at: Date())
        _ = try service.store.createGroupSession(id: "g-1", members: ["u-1", "u-2", "u-3"], joined: ["u-1", "u-2", "u-3"], at: Date())
        #expect(try service.store.rowCounts(user: "u-1").values.allSatisfy { $0 > 0 })
        try service.forget(user: "u-1")
        #expect(try service.store.groupSession(id: "g-1")?.members == ["u-2", "u-3"])
        #expect(try service.store.rowCounts(user: "u-1").values.allSatisfy { $0 == 0 })
        #expect(try service.store.rowCounts(user: "u-2").values.allSatisfy { $0 > 0 })
        #expect(try service.store.check() == [])
        #expect(throws: RuleError.unknownUser("u-1")) { try service.forget(user: "u-1") }
    }

    @Test("A checkpoint of the view marks its user's pending events as included; the prune deletes exactly those rows, oldest first")
    func viewMarksAndPrune() throws {
        let service = try Self.service(.file)
        let store = service.store, defaults = service.engine.config.defaultWeights
        let users = ["u-1", "u-2", "u-3"]
        var picks: [String: Pick] = [:]
        for u in users {
            try store.addUser(NewUser(id: u), at: Date())
            picks[u] = try service.pick(Self.snapshot("gym", "2026-03-11T09:00:00+01:00", user: u))
        }
        // Three pending events a user, interleaved in the table as a service commits them: the
        // events alone, their users' states kept in memory (as the service's cache does).
        var live: [String: CachedUserState] = [:]
        for u in users { live[u] = try #require(try store.loadCachedState(user: u, defaults: defaults)) }
        func pend(_ u: String, _ k: Int) throws {
            let e = FeedbackEvent(
                id: "p-\(u)-\(k)", user: u, at: Timestamp(rfc3339: "2026-03-11T12:3\(k):00+01:00")!, track: picks[u]!.track.id,
                signal: k == 2 ? .skip : .like, pickId: picks[u]!.pickId)
            let verdict = try store.readUser(u, defaults: defaults) { _, reads in
                try Rules(engine: service.engine.with(catalog: reads.catalog))
                    .stageFeedback(e, appliedBy: nil, user: &live[u]!, pick: reads.pickRecord(id: picks[u]!.pickId))
            }
            guard case let .applied(row) = verdict else { throw RuleError.noContext }
            try store.commit([.pendingFeedback(row, event: PendingEventText(e))])
        }
        for k in 1...3 { for u in users { try pend(u, k) } }
        #expect(try store.usersBehind() == ["u-1": 3, "u-2": 3, "u-3": 3])
        let current = try users.map { try service.state(user: $0) }

        // u-1 and u-2 brought up to date as a checkpoint of the view: their rows stay, no longer pending.
        let loaded = try store.loadCachedStates(users: ["u-1", "u-2"], defaults: defaults)
        var caughtUp: [(state: UserState, mark: PendingMark)] = []
        let rules = Rules(engine: service.engine.with(catalog: IndexCatalog(CatalogIndex(tracks: try store.allTracks()))))
        for u in ["u-1", "u-2"] {
            var c = try #require(loaded[u])
            let mark = try #require(c.pendingMark)
            try rules.catchUp(&c) { try store.pickRecord(id: $0) }
            caughtUp.append((c.state, mark))
        }
        #expect(try store.commitCaughtUp(caughtUp) == [])
        #expect(try store.usersBehind() == ["u-3": 3])
        #expect(try store.rowCounts(user: "u-1")["pending_events"] == 3)
        let u1 = try #require(try store.loadCachedState(user: "u-1", defaults: defaults))
        #expect(u1.pending.isEmpty && u1.feedbackSeq == 3)
        #expect(u1.state.bins == current[0].bins && u1.state.weights == current[0].weights)

        // A later event of u-1 is pending again; the prune leaves it and u-3's, and takes the six others.
        try pend("u-1", 4)
        #expect(try store.usersBehind() == ["u-1": 1, "u-3": 3])
        #expect(try store.prunePending(slice: 4) == 6)
        #expect(try store.rowCounts(user: "u-1")["pending_events"] == 1)
        #expect(try store.rowCounts(user: "u-2")["pending_events"] == 0)
        #expect(try store.rowCounts(user: "u-3")["pending_events"] == 3)
        #expect(try store.loadCachedState(user: "u-1", defaults: defaults)?.pending.map(\.seq) == [4])
        #expect(try store.prunePending() == 0)

        // A state written the usual way (a command's transaction) deletes its user's rows at once.
        _ = try service.pick(Self.snapshot("gym", "2026-03-11T13:00:00+01:00", user: "u-3"))
        #expect(try store.usersBehind() == ["u-1": 1])
        #expect(try store.rowCounts(user: "u-3")["pending_events"] == 0)
        #expect(try store.check() == [])

        // Every pending row included (u-1 caught up): the prune empties the table at once, and
        // leaves foreign keys on.
        var last = try #require(try store.loadCachedStates(users: ["u-1"], defaults: defaults)["u-1"])
        let lastMark = try #require(last.pendingMark)
        try rules.catchUp(&last) { try store.pickRecord(id: $0) }
        #expect(try store.commitCaughtUp([(last.state, lastMark)]) == [])
        #expect(try store.usersBehind() == [:])
        #expect(try store.rowCounts(user: "u-1")["pending_events"] == 1)
        #expect(try store.prunePending() == 1)
        #expect(try store.database.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM pending_events") } == 0)
        #expect(try store.database.writeWithoutTransaction { try Bool.fetchOne($0, sql: "PRAGMA foreign_keys") } == true)
        #expect(try store.prunePending() == 0)
        #expect(try store.check() == [])
    }

    @Test("The schema enforces its invariants")
    func invariants() throws {
        let service = try Self.service(.memory)
        try service.store.addUser(NewUser(id: "u-1"), at: Date())
        _ = try service.pick(Self.snapshot("gym", "2026-03-11T09:00:00+01:00"))
        try service.store.database.write { db in
            let bin = try Int64.fetchOne(db, sql: "SELECT id FROM bins LIMIT 1")!
            let song = try String.fetchOne(db, sql: "SELECT song_id FROM bin_songs WHERE bin_id = ? LIMIT 1", arguments: [bin])!
            // A bin's songs are JSON text.
            #expect(throws: DatabaseError.self) {
                try db.execute(sql: "UPDATE bins SET songs = '[[\"t\",1,0]' WHERE id = ?", arguments: [bin])
            }
            #expect(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO feedback (id, user_id, at, track_id, signal, bin_number, applied_seq) VALUES ('x', 'u-1', 0, ?, 'love', 1, 1)", arguments: [song])
            }
            #expect(throws: DatabaseError.self) {
                try db.execute(
                    sql:
                        "INSERT INTO bins (user_id, number, label, layout_version, centroid, spread, observed, observations, created_at, updated_at) VALUES ('ghost', 1, '', 1, x'00000000', x'00000000', x'00000000', 1, 0, 0)"
                )
            }
        }
    }

    @Test("check() finds song lists that break what the engine keeps: unreadable, a track twice, a track not in the catalog")
    func songListsChecked() throws {
        let service = try Self.service(.memory)
        try service.store.addUser(NewUser(id: "u-1"), at: Date())
        _ = try service.pick(Self.snapshot("gym", "2026-03-11T09:00:00+01:00"))
        #expect(try service.store.check() == [])
        let (bin, song) = try service.store.database.read { db in
            let bin = try Int64.fetchOne(db, sql: "SELECT id FROM bins LIMIT 1")!
            return (bin, try String.fetchOne(db, sql: "SELECT song_id FROM bin_songs WHERE bin_id = ? LIMIT 1", arguments: [bin])!)
        }
        for (text, problem) in [
            ("[[\"\(song)\",1,0],[\"\(song)\",0,2]]", "bins.songs of row \(bin): track '\(song)' more than once"),
            ("[[\"no-such-song\",1,0]]", "bins.songs of row \(bin): track 'no-such-song' is not in the catalog"),
            ("[[\"\(song)\",-1,0]]", "bins.songs of row \(bin): expected \(SongListCoding.expected)"),
            ("{\"a\":1}", "bins.songs of row \(bin): expected \(SongListCoding.expected)")
        ] {
            try service.store.database.write { db in try db.execute(sql: "UPDATE bins SET songs = ? WHERE id = ?", arguments: [text, bin]) }
            #expect(try service.store.check() == [problem], "\(text)")
        }
        // A bin that cannot be read stops the load with the row named, rather than losing its songs.
        let user = try service.store.database.read { db in try String.fetchOne(db, sql: "SELECT user_id FROM bins WHERE id = ?", arguments: [bin])! }
        #expect(throws: StoreError.self) { try service.store.loadCachedStates(users: [user], defaults: []) }
        #expect(throws: StoreError.self) { try service.store.database.read { db in try Store.loadState(db, user: user, defaults: []) } }
    }

    @Test("Opening a database twice migrates once and keeps the data")
    func reopen() throws {
        let dir = Scratch.directory("st")
        let path = dir.appendingPathComponent("s.sqlite").path
        try Store(path: path).addUser(NewUser(id: "u-1"), at: Date())
        let s = try Store(path: path)
        #expect(try s.userExists("u-1"))
        let mode = try s.database.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
    }

    @Test("Migration v4 rebuilds the feedback table: rows and row ids kept, signals still checked, no ephemeral table per insert")
    func feedbackTableRebuilt() throws {
        let queue = try DatabaseQueue()
        try Schema.migrator.migrate(queue, upTo: "v3")
        try queue.write { db in
            try db.execute(sql: "INSERT INTO users (id, created_at) VALUES ('u-1', '2026-01-01T00:00:00Z')")
            try db.execute(sql: "INSERT INTO songs (id, title, artist) VALUES ('t-1', 'T', 'A')")
            try db.execute(
                sql: """
                    INSERT INTO feedback (rowid, id, user_id, at, track_id, signal, played_ms, pick_id, bin_number, switched_to, snapshot, applied_seq)
                    VALUES (7, 'ev-1', 'u-1', 12.5, 't-1', 'skip', 1500, 'p-1', 3, 4, '{}', 1),
                           (9, 'ev-2', 'u-1', 13.5, 't-1', 'complete', NULL, NULL, 3, NULL, NULL, 2)
                    """)
        }
        let insert = "INSERT INTO feedback (id, user_id, at, track_id, signal, bin_number, applied_seq) VALUES ('ev-3', 'u-1', 0, 't-1', 'like', 1, 3)"
        let planBefore = try queue.read { db in try Row.fetchAll(db, sql: "EXPLAIN " + insert).map { $0["opcode"] as String } }
        #expect(planBefore.contains("OpenEphemeral"))

        try Schema.migrator.migrate(queue)
        try queue.write { db in
            let rows = try Row.fetchAll(db, sql: "SELECT rowid AS r, * FROM feedback ORDER BY rowid")
            #expect(rows.map { $0["r"] as Int64 } == [7, 9])
            #expect(rows.map { $0["signal"] as String } == ["skip", "complete"])
            #expect(rows[0]["played_ms"] as Int? == 1500 && rows[0]["pick_id"] as String? == "p-1" && rows[0]["switched_to"] as Int? == 4)
            #expect(rows[1]["played_ms"] as Int? == nil && rows[1]["snapshot"] as String? == nil && rows[1]["applied_seq"] as Int == 2)
            let plan = try Row.fetchAll(db, sql: "EXPLAIN " + insert).map { $0["opcode"] as String }
            #expect(!plan.contains("OpenEphemeral"))
            try db.execute(sql: insert)
            for bad in ["love", "", "LIKE"] {
                #expect(throws: DatabaseError.self) {
                    try db.execute(
                        sql: "INSERT INTO feedback (id, user_id, at, track_id, signal, bin_number, applied_seq) VALUES ('ev-x', 'u-1', 0, 't-1', ?, 1, 4)", arguments: [bad])
                }
            }
            // The index and the cascade came back with the table.
            #expect(try Bool.fetchOne(db, sql: "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'feedback_user'") == true)
            try db.execute(sql: "DELETE FROM users WHERE id = 'u-1'")
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM feedback") == 0)
        }
    }

    @Test("Migration v5 drops the memberships' index by song: memberships kept, still checked, still cascaded")
    func membershipIndexDropped() throws {
        let queue = try DatabaseQueue()
        try Schema.migrator.migrate(queue, upTo: "v4")
        let indexExists = "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'bin_songs_song'"
        try queue.write { db in
            #expect(try Int.fetchOne(db, sql: indexExists) == 1)
            try db.execute(
                sql: """
                    INSERT INTO users (id, created_at) VALUES ('u-1', '2026-01-01T00:00:00Z');
                    INSERT INTO songs (id, title, artist) VALUES ('t-1', 'T', 'A'), ('t-2', 'U', 'B');
                    INSERT INTO bins (id, user_id, number, label, layout_version, centroid, spread, observed, observations, created_at, updated_at)
                        VALUES (5, 'u-1', 1, 'gym', 1, x'00000000', x'00000000', x'00000000', 1, 0, 0);
                    INSERT INTO bin_songs (bin_id, song_id, position, likes, dislikes) VALUES (5, 't-1', 0, 2, 1), (5, 't-2', 1, 0, 3);
                    """)
        }
        try Schema.migrator.migrate(queue, upTo: "v5")
        try queue.write { db in
            #expect(try Int.fetchOne(db, sql: indexExists) == 0)
            let rows = try Row.fetchAll(db, sql: "SELECT song_id, position, likes, dislikes FROM bin_songs ORDER BY position")
            #expect(rows.map { $0["song_id"] as String } == ["t-1", "t-2"])
            #expect(rows.map { $0["likes"] as Int } == [2, 0] && rows.map { $0["dislikes"] as Int } == [1, 3])
            // The foreign key to songs is still checked on insert, and a song still cannot go while a bin holds it.
            #expect(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO bin_songs (bin_id, song_id, position) VALUES (5, 'no-such-song', 2)")
            }
            #expect(throws: DatabaseError.self) { try db.execute(sql: "DELETE FROM songs WHERE id = 't-1'") }
            // What the engine does to songs (an upsert on the id) leaves memberships alone.
            try db.execute(sql: "INSERT INTO songs (id, title, artist) VALUES ('t-1', 'T2', 'A2') ON CONFLICT(id) DO UPDATE SET title = excluded.title")
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM bin_songs") == 2)
            try db.execute(sql: "DELETE FROM users WHERE id = 'u-1'")
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM bin_songs") == 0)
        }
    }

    @Test("Migration v7 moves vectors of layout v1 to v2 by slot name and keeps feedback rows; rate rows need a rating")
    func layoutV1Migrated() throws {
        let queue = try DatabaseQueue()
        try Schema.migrator.migrate(queue, upTo: "v6")
        let v1 = LayoutMigration.v1Names
        #expect(v1.count == 83)
        // A v1 vector with the slot's index + 1 in every slot: each value says where it came from.
        let vector = VectorCoding.encode((0..<v1.count).map { Float($0 + 1) })
        try queue.write { db in
            try db.execute(sql: "INSERT INTO users (id, created_at) VALUES ('u-1', '2026-01-01T00:00:00Z')")
            try db.execute(
                sql: """
                    INSERT INTO bins (id, user_id, number, label, layout_version, centroid, spread, observed, observations, created_at, updated_at)
                    VALUES (1, 'u-1', 1, 'gym', 1, ?, ?, ?, 3, 0, 0)
                    """, arguments: [vector, vector, vector])
            try db.execute(sql: "INSERT INTO weights (user_id, layout_version, vector) VALUES ('u-1', 1, ?)", arguments: [vector])
            try db.execute(
                sql: """
                    INSERT INTO feedback (id, user_id, at, track_id, signal, bin_number, applied_seq) VALUES ('e-1', 'u-1', 0, 't-1', 'like', 1, 1)
                    """)
        }
        try Schema.migrator.migrate(queue)
        try queue.read { db in
            let row = try #require(try Row.fetchOne(db, sql: "SELECT * FROM bins WHERE id = 1"))
            #expect(row["layout_version"] as Int == FeatureLayout.version)
            let centroid = VectorCoding.decode(row["centroid"] as Data), spread = VectorCoding.decode(row["spread"] as Data)
            let weights = VectorCoding.decode(try #require(try Data.fetchOne(db, sql: "SELECT vector FROM weights")))
            #expect(centroid.count == FeatureLayout.dimension)
            for (i, name) in v1.enumerated() {
                guard let j = FeatureLayout.index(of: name) else { continue }
                #expect(centroid[j] == Float(i + 1) && weights[j] == Float(i + 1), "\(name)")
            }
            // Hashed slots of v1 are dropped; new slots start empty (spread: the initial spread).
            #expect(v1.filter { FeatureLayout.index(of: $0) == nil }.count == 24)
            let accuracy = FeatureLayout.require("location.accuracy"), tag = FeatureLayout.require("tags.t0")
            #expect(centroid[accuracy] == 0 && centroid[tag] == 0 && spread[tag] == 0.2)
            #expect(try String.fetchOne(db, sql: "SELECT signal FROM feedback WHERE id = 'e-1'") == "like")
        }
        try queue.write { db in
            #expect(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO feedback (id, user_id, at, track_id, signal, bin_number, applied_seq) VALUES ('e-2', 'u-1', 0, 't', 'rate', 1, 2)")
            }
            #expect(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO feedback (id, user_id, at, track_id, signal, bin_number, applied_seq, rating) VALUES ('e-3', 'u-1', 0, 't', 'rate', 1, 2, 6)")
            }
            try db.execute(sql: "INSERT INTO feedback (id, user_id, at, track_id, signal, bin_number, applied_seq, rating) VALUES ('e-4', 'u-1', 0, 't', 'rate', 1, 2, 3)")
        }
    }

    @Test("Migration v6 moves each bin's memberships into its row in position order; the view lists them as before")
    func songsMovedIntoBins() throws {
        let queue = try DatabaseQueue()
        try Schema.migrator.migrate(queue, upTo: "v5")
        let before = """
            SELECT bin_id, position, song_id, likes, dislikes FROM bin_songs ORDER BY bin_id, position
            """
        var rows: [Row] = []
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO users (id, created_at) VALUES ('u-1', '2026-01-01T00:00:00Z');
                    INSERT INTO songs (id, title, artist) VALUES ('t-1', 'T', 'A'), ('t-2', 'U', 'B'), ('t"3', 'V', 'C');
                    INSERT INTO bins (id, user_id, number, label, layout_version, centroid, spread, observed, observations, created_at, updated_at)
                        VALUES (5, 'u-1', 1, 'gym', 1, x'00000000', x'00000000', x'00000000', 1, 0, 0),
                               (6, 'u-1', 2, 'car', 1, x'00000000', x'00000000', x'00000000', 1, 0, 0),
                               (7, 'u-1', 3, 'new', 1, x'00000000', x'00000000', x'00000000', 1, 0, 0);
                    INSERT INTO bin_songs (bin_id, song_id, position, likes, dislikes)
                        VALUES (5, 't-2', 0, 2, 1), (5, 't-1', 1, 0, 3), (5, 't"3', 2, 7, 0), (6, 't-1', 0, 1, 0);
                    """)
            rows = try Row.fetchAll(db, sql: before)
        }
        try Schema.migrator.migrate(queue, upTo: "v6")
        try queue.write { db in
            #expect(try String.fetchOne(db, sql: "SELECT type FROM sqlite_master WHERE name = 'bin_songs'") == "view")
            #expect(
                try String.fetchAll(db, sql: "SELECT songs FROM bins ORDER BY id") == [
                    #"[["t-2",2,1],["t-1",0,3],["t\"3",7,0]]"#, #"[["t-1",1,0]]"#, "[]"
                ])
            #expect(try Row.fetchAll(db, sql: before) == rows)
            // The column holds JSON, and a bin's songs go with it.
            #expect(throws: DatabaseError.self) { try db.execute(sql: "UPDATE bins SET songs = 'oops' WHERE id = 5") }
            try db.execute(sql: "DELETE FROM users WHERE id = 'u-1'")
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM bin_songs") == 0)
        }
    }

    @Test("Song lists read back as written, escapes and all; other JSON is read too, anything else refused")
    func songListCoding() throws {
        let songs = [
            BinSong(trackId: "spotify:track:4ly1QBXEwYoDmje9rmEgC4", likes: 2, dislikes: 0),
            BinSong(trackId: "local:\"quoted\" \\ back é", likes: 0, dislikes: 12),
            BinSong(trackId: "x", likes: 1_000_000_000_000, dislikes: 0),
            BinSong(trackId: "rated", likes: 1, dislikes: 0, rating: 4)
        ]
        func decode(_ text: String) -> [BinSong]? {
            var out: [BinSong] = []
            let ok = Array(text.utf8).withUnsafeBytes { raw in
                SongListCoding.decode(raw) { id, likes, dislikes, rating in
                    out.append(BinSong(trackId: String(decoding: id, as: UTF8.self), likes: likes, dislikes: dislikes, rating: rating))
                }
            }
            return ok ? out : nil
        }
        let text = String(decoding: SongListCoding.encode(songs), as: UTF8.self)
        #expect(decode(text) == songs)
        #expect(decode(String(decoding: SongListCoding.encode([]), as: UTF8.self)) == [])
        #expect(decode(" [ [\"a\" , 1, 2] ] ") == [BinSong(trackId: "a", likes: 1, dislikes: 2)])
        #expect(decode(#"[["a",1,2],["b",3,4]]"#) == [BinSong(trackId: "a", likes: 1, dislikes: 2), BinSong(trackId: "b", likes: 3, dislikes: 4)])
        #expect(decode(#"[["a",1,2,3]]"#) == [BinSong(trackId: "a", likes: 1, dislikes: 2, rating: 3)])
        #expect(decode(#" [["a",1,2,5]]"#) == [BinSong(trackId: "a", likes: 1, dislikes: 2, rating: 5)])
        for bad in [
            "", "[", "{}", #"[["a",1]]"#, #"[["a",1,2,0]]"#, #"[["a",1,2,6]]"#, #" [["a",1,2,6]]"#, #"[["a",1,2,3,4]]"#, #"[["a",-1,2]]"#, #"[["a",1.5,2]]"#, #"[[1,1,2]]"#,
            #"[["a",1,2]"#, #"[["a",1,2]],"#, #"[["a",01,2]]"#, "null"
        ] {
            #expect(decode(bad) == nil, "\(bad)")
        }
    }

    static let keyA = try! EmailKey(hex: String(repeating: "a1", count: 32))
    static let keyB = try! EmailKey(hex: String(repeating: "b2", count: 32))

    @Test("Emails are stored only as keyed hashes (HMAC-SHA256) of their normalised form, not as their plain SHA-256")
    func emailHash() throws {
        let s = try Store.inMemory(emailKey: Self.keyA)
        try s.addUser(NewUser(id: "u-1", email: "  Ana@Example.ORG "), at: Date())
        try s.addUser(NewUser(id: "u-2"), at: Date())
        let u = try #require(try s.user("u-1"))
        #expect(u.emailHash == Self.keyA.hash("ana@example.org"))
        #expect(u.emailHash != Hashing.sha256Hex("ana@example.org"))
        #expect(u.emailHash?.count == 64)
        #expect(u.emailHashScheme == .hmacSHA256)
        let none = try #require(try s.user("u-2"))
        #expect(none.emailHash == nil && none.emailHashScheme == nil)
        #expect(throws: InputError.self) { try NewUser(id: "u-2", email: "not-an-email") }
    }

    @Test("The same email under two keys hashes differently; the keyed hash is HMAC-SHA256 (RFC 4231 test case 6)")
    func emailKeys() throws {
        let a = try Store.inMemory(emailKey: Self.keyA), b = try Store.inMemory(emailKey: Self.keyB)
        for s in [a, b] { try s.addUser(NewUser(id: "u-1", email: "ana@example.org"), at: Date()) }
        let ha = try #require(try a.user("u-1")?.emailHash), hb = try #require(try b.user("u-1")?.emailHash)
        #expect(ha != hb)
        #expect(ha == Self.keyA.hash("ana@example.org") && hb == Self.keyB.hash("ana@example.org"))
        // HMAC-SHA256 itself: RFC 4231, test case 6 (a 131-byte key).
        let rfc = try EmailKey(bytes: [UInt8](repeating: 0xAA, count: 131))
        #expect(
            rfc.hash("Test Using Larger Than Block-Size Key - Hash Key First")
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        #expect(throws: EmailKeyError.tooShort(bytes: 4)) { try EmailKey(bytes: Array("Jefe".utf8)) }
        #expect(throws: EmailKeyError.notHex) { try EmailKey(hex: "zz" + String(repeating: "00", count: 32)) }
        #expect(EmailKey.random().hash("x") != EmailKey.random().hash("x"))
    }

    @Test("The default key file is created beside the database with mode 0600 when an address is first hashed, and read back after")
    func emailKeyFile() throws {
        let dir = Scratch.directory("st")
        let path = dir.appendingPathComponent("s.sqlite").path
        let keyPath = EmailKey.defaultFile(forDatabase: path)
        try Store(path: path).addUser(NewUser(id: "u-0"), at: Date())
        #expect(!FileManager.default.fileExists(atPath: keyPath), "no address hashed, no key file")
        try Store(path: path).addUser(NewUser(id: "u-1", email: "ana@example.org"), at: Date())
        let attributes = try FileManager.default.attributesOfItem(atPath: keyPath)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let key = try EmailKey.read(file: keyPath)
        let s = try Store(path: path)
        #expect(try s.user("u-1")?.emailHash == key.hash("ana@example.org"))
        #expect(try s.emailMatches("Ana@example.org", user: "u-1"))
        #expect(try !s.emailMatches("bob@example.org", user: "u-1"))
        // A lost key file is not replaced while keyed hashes need it.
        try FileManager.default.removeItem(atPath: keyPath)
        #expect(throws: EmailKeyError.missing(path: keyPath, keyedUsers: 1)) {
            try Store(path: path).addUser(NewUser(id: "u-2", email: "cy@example.org"), at: Date())
        }
        // Another key is refused: its fingerprint is not the one recorded with the keyed hashes.
        let other = dir.appendingPathComponent("other.key").path
        try "\(String(repeating: "b2", count: 32))\n".write(toFile: other, atomically: true, encoding: .utf8)
        #expect(throws: EmailKeyError.otherKey(source: "file \(other)")) {
            try Store(path: path, emailKey: .file(other)).addUser(NewUser(id: "u-3", email: "dee@example.org"), at: Date())
        }
        #expect(try Store(path: path).user("u-3") == nil)
        // An explicit key file on a database of its own.
        let fresh = dir.appendingPathComponent("fresh.sqlite").path
        let t = try Store(path: fresh, emailKey: .file(other))
        try t.addUser(NewUser(id: "u-3", email: "dee@example.org"), at: Date())
        #expect(try t.user("u-3")?.emailHash == Self.keyB.hash("dee@example.org"))
        // The key file was linked into place whole: no temporary file is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".tmp-") }.isEmpty)
        // A key never prints its bytes.
        #expect("\(key)" == "EmailKey(redacted)")
        var dumped = ""
        dump(Self.keyB, to: &dumped)
        #expect(!dumped.contains("178"), "the key's bytes (0xb2 = 178) are not dumped: \(dumped)")
        #expect(!String(reflecting: Self.keyB).contains("178"))
    }

    @Test("Migration v8 marks the hashes of an old database as legacy SHA-256; supplying the address re-keys one, a wrong one does not")
    func emailHashMigration() throws {
        let dir = Scratch.directory("st")
        let path = dir.appendingPathComponent("old.sqlite").path
        do {
            let queue = try DatabaseQueue(path: path)
            try Schema.migrator.migrate(queue, upTo: "v7")
            try queue.write { db in
                for (id, email) in [("u-1", "ana@example.org"), ("u-2", "bob@example.org")] {
                    try db.execute(
                        sql: "INSERT INTO users (id, email_hash, created_at) VALUES (?, ?, '2026-01-01T00:00:00Z')",
                        arguments: [id, Hashing.sha256Hex(email)])
                }
                try db.execute(sql: "INSERT INTO users (id, created_at) VALUES ('u-3', '2026-01-01T00:00:00Z')")
            }
        }
        let s = try Store(path: path, emailKey: .key(Self.keyA))
        let before = try s.users()
        #expect(before.map(\.emailHashScheme) == [.sha256, .sha256, nil])
        #expect(before[0].emailHash == Hashing.sha256Hex("ana@example.org"), "the legacy hash is kept until the address comes")
        // A wrong address changes nothing; the right one (normalised) matches and re-keys.
        #expect(try !s.emailMatches("eve@example.org", user: "u-1"))
        #expect(try s.user("u-1")?.emailHashScheme == .sha256)
        #expect(try s.emailMatches(" ANA@example.org", user: "u-1"))
        let rekeyed = try #require(try s.user("u-1"))
        #expect(rekeyed.emailHashScheme == .hmacSHA256 && rekeyed.emailHash == Self.keyA.hash("ana@example.org"))
        #expect(try s.emailMatches("ana@example.org", user: "u-1"), "and it still matches under the key")
        // setEmail re-keys (or replaces) as well; nil removes the email.
        try s.setEmail("bob@example.org", user: "u-2")
        #expect(try s.user("u-2")?.emailHash == Self.keyA.hash("bob@example.org"))
        try s.setEmail(nil, user: "u-2")
        let cleared = try #require(try s.user("u-2"))
        #expect(cleared.emailHash == nil && cleared.emailHashScheme == nil)
        #expect(throws: RuleError.unknownUser("nobody")) { try s.setEmail("a@b", user: "nobody") }
        #expect(throws: InputError.self) { try s.setEmail("no-at-sign", user: "u-1") }
        // The schema refuses a scheme without a hash, and unknown schemes.
        try s.database.write { db in
            #expect(throws: DatabaseError.self) { try db.execute(sql: "UPDATE users SET email_hash_scheme = 'sha256' WHERE id = 'u-3'") }
            #expect(throws: DatabaseError.self) { try db.execute(sql: "UPDATE users SET email_hash_scheme = 'md5' WHERE id = 'u-1'") }
        }
    }
}
