import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackStore

/// How a replay behaves.
public struct ReplayOptions: Sendable {
    /// Worker threads; users are partitioned among them by a stable hash of the user id.
    public var workers = 2
    /// Create users the database does not know (on their first event) instead of rejecting their events.
    public var createUsers = false
    /// Reject unknown fields.
    public var strict = false
    /// Bytes of JSON Lines per block: one block is one transaction (about 80,000 events of 800 bytes).
    /// A user's changed bins are written once per block, so larger blocks write fewer rows per event:
    /// 64 MiB replayed the benchmark's log 20 % faster than 16 MiB (it also bounds the memory, about
    /// 0.3 GB for the decoded block, and the work a crash takes back).
    public var blockBytes = 64 << 20
    /// Events per block (one transaction) when replaying decoded events (imports).
    public var blockEvents = 8192
    /// When created users were created.
    public var now = Date(timeIntervalSince1970: 0)
    /// The writer's page cache during the run, in mebibytes (see ``Store/withLargeCache(cacheMiB:checkpointPages:_:)``).
    public var cacheMiB = 256
    /// The write-ahead log's length, in pages, past which a commit waits for a checkpoint to copy
    /// all of it into the database file (with a file database, checkpoints run on a thread of their
    /// own after each commit: ``LogCheckpoints``). 262,144 pages of 4 KiB: 1 GiB.
    public var checkpointPages = 262_144

    /// Default options.
    public init() {}
}

/// How far a replay has come.
public struct ReplayProgress: Sendable {
    /// Records read so far.
    public var records: Int
    /// Input bytes (JSON Lines) or events (imports) done so far.
    public var done: Int
}

/// What a replay did.
public struct ReplaySummary: Sendable, Equatable {
    /// Records read.
    public var records = 0
    /// Events applied (and committed).
    public var applied = 0
    /// Events skipped because their id was applied before.
    public var duplicates = 0
    /// Events rejected (reported with their line and field).
    public var rejected = 0
    /// Users created (`createUsers`).
    public var usersCreated = 0

    /// `12 records: 9 applied, 2 duplicates skipped, 1 rejected`.
    public var description: String {
        "\(records) records: \(applied) applied, \(duplicates) duplicates skipped, \(rejected) rejected"
            + (usersCreated > 0 ? ", \(usersCreated) users created" : "")
    }
}

/// Feedback → changed bins over a log: batched, idempotent and resumable.
///
/// The log is cut into blocks; each block is one durable transaction holding its applied events'
/// feedback rows and the final states of the users they changed. The users are partitioned by a
/// stable hash across ``ReplayOptions/workers`` threads, each applying its users' events in log
/// order to states kept in memory, which after every commit equal the database's.
///
/// Resumability: an event is applied if and only if its row is committed, in the same transaction
/// as its effect on the state. A run killed at any moment leaves the database at a block boundary;
/// a new run skips the committed events by id (duplicates), loads the states the committed blocks
/// left, and applies the rest exactly as the first run would have: the engine is deterministic in
/// its inputs (time from the events, randomness seeded by the event id).
public final class ReplayRunner: Sendable {
    /// The database.
    public let store: Store
    /// The engine, with the whole catalog in memory.
    public let engine: Recommender
    /// The options.
    public let options: ReplayOptions

    /// One event to replay, or the reason its record was rejected.
    public struct Item: Sendable {
        /// The line (JSON Lines) or record index (imports).
        public var line: Int
        /// The file of an import.
        public var file: String?
        /// The event.
        public var event: Result<FeedbackEvent, LineError>

        /// Creates an item.
        public init(line: Int, file: String? = nil, event: Result<FeedbackEvent, LineError>) {
            self.line = line
            self.file = file
            self.event = event
        }
    }

    /// Creates a runner over a service's store, loading the whole catalog into memory.
    public convenience init(service: SoundtrackService, options: ReplayOptions) throws {
        let index = CatalogIndex(tracks: try service.store.allTracks())
        self.init(store: service.store, engine: service.engine.with(catalog: IndexCatalog(index)), options: options)
    }

    /// Creates a runner.
    public init(store: Store, engine: Recommender, options: ReplayOptions) {
        self.store = store
        self.engine = engine
        self.options = options
    }

    final class UserSlot {
        var cached: CachedUserState
        var lastAt: Double?
        var lastLine: Int?
        /// The order in which the run first met the user: the grouping key within a block.
        let ordinal: Int
        init(cached: CachedUserState, lastAt: Double?, ordinal: Int) {
            self.cached = cached
            self.lastAt = lastAt
            self.ordinal = ordinal
        }
    }

    final class Worker: @unchecked Sendable {
        var users: [String: UserSlot] = [:]
        var touched: [String] = []
    }

    enum Verdict {
        case pending
        case apply
        /// Applied; its row waits in the block's ``BulkWrite/feedback``.
        case applied
        case duplicate
        case repeatInBlock(first: Int)
        case rejected(LineError)
    }

    struct Shared<T>: @unchecked Sendable {
        let p: UnsafeMutableBufferPointer<T>
    }

    /// Run-wide bookkeeping.
    final class RunState: @unchecked Sendable {
        let workers: [Worker]
        var unknown = Set<String>()
        /// Users met so far (each ``UserSlot`` gets the next ordinal).
        var usersMet = 0
        /// Ids seen in this run: owner and whether the event was applied (or found applied before).
        var ids: [String: (user: String, applied: Bool, line: Int)] = [:]
        var summary = ReplaySummary()
        init(workers: Int) { self.workers = (0..<workers).map { _ in Worker() } }
    }

    /// Replays a JSON Lines log of feedback events.
    /// - Parameters:
    ///   - read: reads input into a buffer, returning how many bytes it read (0 at the end).
    ///   - reject: receives each rejected line, in line order.
    ///   - progress: called after each committed block.
    /// - Throws: errors of `read` or `reject`, or of the database (the blocks before are committed).
    public func run(
        read: @escaping LineBlocks.Read,
        reject: (LineError) throws -> Void,
        progress: (ReplayProgress) -> Void = { _ in }
    ) throws -> ReplaySummary {
        try withCheckpoints { checkpoints in
            try replay(read: read, reject: reject, progress: progress, checkpoints: checkpoints)
        }
    }

    /// Runs `body` with the writer's large page cache and, for a file database, checkpoints on a
    /// thread of their own instead of inside commits (``LogCheckpoints``). The writer itself never
    /// checkpoints (an in-memory database has no write-ahead log at all).
    private func withCheckpoints<T>(_ body: (LogCheckpoints?) throws -> T) throws -> T {
        let checkpointer = try store.path.map { _ in try WALCheckpointer(store: store) }
        return try store.withLargeCache(cacheMiB: options.cacheMiB, checkpointPages: 0) {
            try body(checkpointer.map { LogCheckpoints(checkpointer: $0, limitPages: options.checkpointPages) })
        }
    }

    private func replay(
        read: @escaping LineBlocks.Read,
        reject: (LineError) throws -> Void,
        progress: (ReplayProgress) -> Void,
        checkpoints: LogCheckpoints?
    ) throws -> ReplaySummary {
        let nw = max(1, options.workers)
        let run = RunState(workers: nw)
        let committer = Committer(store: store, checkpoints: checkpoints)
        defer { committer.stop() }
        var blocks = LineBlocks(blockBytes: options.blockBytes, read: read)
        let strict = options.strict
        while let block = try blocks.next() {
            let n = block.lines.count
            // Decoded in parallel straight into the array's storage (each element initialized
            // once, by the worker of its range): an item holds a whole event inline, and copying
            // the block's items into an array afterwards moved ~50 MB and retained every string.
            let items = [Item](unsafeUninitializedCapacity: n) { storage, count in
                let shared = Shared(p: storage)
                block.forEachRecordInParallel(workers: nw) { i, line, rec in
                    let item: Item
                    do throws(InputError) {
                        item = Item(line: line, event: .success(try FeedbackEvent.decode(bytes: rec, strict: strict)))
                    } catch {
                        item = Item(line: line, event: .failure(LineError(line: line, error)))
                    }
                    (shared.p.baseAddress! + i).initialize(to: item)
                }
                count = n
            }
            let staged = try stage(items, run: run)
            try reportPrevious(committer, run, reject, progress)
            committer.submit(staged, done: block.consumed)
        }
        try reportPrevious(committer, run, reject, progress)
        return run.summary
    }

    /// Replays decoded events (an import), in order, in blocks of ``ReplayOptions/blockEvents``.
    public func run(
        items: [Item],
        reject: (LineError) throws -> Void,
        progress: (ReplayProgress) -> Void = { _ in }
    ) throws -> ReplaySummary {
        try withCheckpoints { checkpoints in
            let run = RunState(workers: max(1, options.workers))
            let committer = Committer(store: store, checkpoints: checkpoints)
            defer { committer.stop() }
            var start = 0
            while start < items.count {
                let end = min(items.count, start + max(1, options.blockEvents))
                let staged = try stage(Array(items[start..<end]), run: run)
                try reportPrevious(committer, run, reject, progress)
                committer.submit(staged, done: end)
                start = end
            }
            try reportPrevious(committer, run, reject, progress)
            return run.summary
        }
    }

    /// A block applied in memory, waiting for its transaction.
    struct Staged: @unchecked Sendable {
        var verdicts: [Verdict]
        var bulk: BulkWrite
    }

    /// Commits staged blocks on its own thread, one at a time and in order, while the next block
    /// is decoded and applied: the block's results are reported only once it is committed.
    final class Committer: @unchecked Sendable {
        private let jobs = Pipe<(Staged, Int)?>(capacity: 1)
        private let results = Pipe<(Staged, Int, (any Error)?)>(capacity: 1)
        private var inFlight = false
        private let thread: BackgroundThread

        init(store: Store, checkpoints: LogCheckpoints?) {
            let jobs = self.jobs, results = self.results
            thread = BackgroundThread(name: "replay-commit") {
                while let (staged, done) = jobs.take() {
                    do {
                        try store.commitBulk(staged.bulk)
                        checkpoints?.afterCommit()
                        results.put((staged, done, nil))
                    } catch {
                        results.put((staged, done, error))
                    }
                }
                checkpoints?.stop()
            }
        }

        /// Hands a staged block to the commit thread.
        func submit(_ staged: Staged, done: Int) {
            precondition(!inFlight)
            jobs.put((staged, done))
            inFlight = true
        }

        /// Waits for the block in flight, if any; rethrows its commit's error.
        /// - Returns: the committed block and how far the input had come, or `nil` when none was in flight.
        func finishPrevious() throws -> (Staged, Int)? {
            guard inFlight else { return nil }
            inFlight = false
            let (staged, done, error) = results.take()
            if let error { throw error }
            return (staged, done)
        }

        /// Ends the commit thread (after waiting for the block in flight).
        func stop() {
            if inFlight {
                _ = results.take()
                inFlight = false
            }
            jobs.put(nil)
            thread.join()
        }
    }

    /// Decodes nothing, writes nothing: checks a block's events (ids, users, times, tracks, picks),
    /// applies them to the in-memory states and returns the block's transaction, ready to commit.
    /// The ids it applies or rejects are recorded at once, so the next block is checked against
    /// them while this one commits.
    private func stage(_ items: [Item], run: RunState) throws -> Staged {
        let n = items.count
        let nw = run.workers.count
        run.summary.records += n
        let verdicts = UnsafeMutableBufferPointer<Verdict>.allocate(capacity: n)
        verdicts.initialize(repeating: .pending)
        // The rows of applied events, by line, moved into the block's write in order.
        let rows = UnsafeMutableBufferPointer<AppliedFeedback?>.allocate(capacity: n)
        rows.initialize(repeating: nil)
        let owner = UnsafeMutableBufferPointer<Int>.allocate(capacity: n)
        owner.initialize(repeating: -1)
        defer {
            verdicts.deinitialize().deallocate()
            rows.deinitialize().deallocate()
            owner.deallocate()
        }
        func bad(_ i: Int, _ field: String, _ message: String) -> Verdict {
            .rejected(LineError(line: items[i].line, file: items[i].file, field: field, message: message))
        }

        // 1. Ids: applied before (in the database or earlier in this run), or repeated in this block.
        // Each event's id and user, read once (matching an event out of its item copies the event).
        let keys: [(id: String, user: String, pickId: String?)?] = items.map { item in
            if case let .success(e) = item.event { (e.id, e.user, e.pickId) } else { nil }
        }
        var fresh: [String] = []
        for k in keys {
            if let k, run.ids[k.id] == nil { fresh.append(k.id) }
        }
        let committed = try store.feedbackOwners(ids: fresh)
        for (id, user) in committed where run.ids[id] == nil { run.ids[id] = (user, true, 0) }
        var firstInBlock: [String: Int] = [:]
        var missing: [String] = []
        var missingSet = Set<String>()
        var pickIds: [String] = []
        for i in 0..<n {
            guard let e = keys[i] else {
                if case let .failure(error) = items[i].event { verdicts[i] = .rejected(error) }
                continue
            }
            if let seen = run.ids[e.id] {
                if seen.user != e.user {
                    verdicts[i] = bad(i, "id", "expected an event id not used by another user, got '\(e.id)'")
                } else if seen.applied {
                    verdicts[i] = .duplicate
                } else {
                    verdicts[i] = bad(i, "id", "expected an event id not used by an earlier record, got '\(e.id)' (record \(seen.line) was rejected)")
                }
                continue
            }
            if let first = firstInBlock[e.id] {
                verdicts[i] = .repeatInBlock(first: first)
                continue
            }
            firstInBlock[e.id] = i
            let w = Int(StableHash.fnv1a(e.user) % UInt64(nw))
            if run.workers[w].users[e.user] == nil && !run.unknown.contains(e.user) && missingSet.insert(e.user).inserted {
                missing.append(e.user)
            }
            owner[i] = w
            if let p = e.pickId { pickIds.append(p) }
            verdicts[i] = .apply
        }

        // 2. Users seen for the first time: load them, or create them, or reject their events.
        var bulk = BulkWrite()
        bulk.at = options.now
        if !missing.isEmpty {
            let loaded = try loadStatesInParallel(
                store: store, users: missing, workers: nw, defaults: engine.config.defaultWeights,
                worker: { Int(StableHash.fnv1a($0) % UInt64(nw)) }, each: { _, states in states })
            for user in missing {
                let w = Int(StableHash.fnv1a(user) % UInt64(nw))
                if let l = loaded[w][user] {
                    run.workers[w].users[user] = UserSlot(cached: l.cached, lastAt: l.lastEventAt, ordinal: run.usersMet)
                    run.usersMet += 1
                } else if options.createUsers {
                    run.workers[w].users[user] = UserSlot(
                        cached: CachedUserState(state: engine.newUser(user), feedbackSeq: 0, keepRawSnapshots: false), lastAt: nil,
                        ordinal: run.usersMet)
                    run.usersMet += 1
                    bulk.newUsers.append(user)
                    run.summary.usersCreated += 1
                } else {
                    run.unknown.insert(user)
                }
            }
        }
        for i in 0..<n {
            if case .apply = verdicts[i], let e = keys[i], run.unknown.contains(e.user) {
                verdicts[i] = bad(i, "user", "expected a known user (add one with `soundtrack users add`, or replay with --create-users), got '\(e.user)'")
                owner[i] = -1
            }
        }
        let picks = pickIds.isEmpty ? [:] : try store.pickRecords(ids: pickIds)

        // 3. Apply, each worker its own users, grouped by user (``groupByUser(_:)``: a user's state,
        // 32 KB of scoring rows alone for 32 bins, stays in the cache across its events), each
        // user's events in log order.
        let sharedVerdicts = Shared(p: verdicts), sharedOwner = Shared(p: owner), sharedRows = Shared(p: rows)
        let engine = self.engine
        let catalog = engine.catalog
        DispatchQueue.concurrentPerform(iterations: nw) { w in
            let worker = run.workers[w]
            worker.touched.removeAll(keepingCapacity: true)
            var mine: [UserLine<UserSlot>] = []
            for i in 0..<n where sharedOwner.p[i] == w {
                guard let k = keys[i], let slot = worker.users[k.user] else { continue }
                mine.append((slot.ordinal, i, slot))
            }
            groupByUser(&mine)
            for (_, i, slot) in mine {
                guard case let .success(e) = items[i].event else { continue }
                func fail(_ field: String, _ message: String) {
                    sharedVerdicts.p[i] = .rejected(LineError(line: items[i].line, file: items[i].file, field: field, message: message))
                }
                let at = e.at.date.timeIntervalSince1970
                if let last = slot.lastAt, at < last {
                    let when = Timestamp(date: Date(timeIntervalSince1970: last), offsetSeconds: e.at.offsetSeconds).rfc3339
                    fail("at", "expected a time not before the user's previous event (\(when)\(slot.lastLine.map { ", record \($0)" } ?? "")), got '\(e.at.rfc3339)' (events must be in time order per user)")
                    continue
                }
                if catalog.track(id: e.track) == nil {
                    fail("track", "expected a track id of the catalog, got '\(e.track)'")
                    continue
                }
                var record: PickRecord?
                if let p = e.pickId, let r = picks[p] {
                    guard r.user == e.user else {
                        fail("pick_id", "expected a pick of user '\(e.user)', got '\(p)'")
                        continue
                    }
                    record = r
                }
                let hasBin = record.map { r in slot.cached.state.binIndex(number: r.binNumber) != nil } ?? false
                guard hasBin || e.snapshot != nil else {
                    if let p = e.pickId {
                        fail("pick_id", record == nil ? "expected a pick of user '\(e.user)', got '\(p)'" : "expected a pick whose bin still exists, got '\(p)'")
                    } else {
                        fail("pick_id", "expected a pick of this user or an embedded snapshot, got nothing")
                    }
                    continue
                }
                do throws(InputError) {
                    let outcome = try engine.feedback(e, pick: record, state: &slot.cached.state)
                    slot.cached.feedbackSeq += 1
                    slot.lastAt = at
                    slot.lastLine = items[i].line
                    // The row keeps the snapshot only for users who keep raw snapshots; without it the
                    // row is moved into the block's write without retaining the snapshot's fields.
                    var stored = e
                    if !slot.cached.keepRawSnapshots { stored.snapshot = nil }
                    sharedRows.p[i] = AppliedFeedback(
                        event: stored, outcome: outcome, seq: slot.cached.feedbackSeq, keepSnapshot: slot.cached.keepRawSnapshots)
                    sharedVerdicts.p[i] = .applied
                    worker.touched.append(e.user)
                } catch {
                    fail(error.path, "expected \(error.expected), got \(error.got)")
                }
            }
        }

        // 4. One transaction: the block's feedback rows and the states they changed.
        for w in run.workers {
            var done = Set<String>()
            for user in w.touched where done.insert(user).inserted {
                let slot = w.users[user]!
                bulk.states.append(slot.cached.state)
                slot.cached.state.changes = UserState.Changes()
            }
        }
        bulk.feedback.reserveCapacity(n)
        for i in 0..<n {
            if case .applied = verdicts[i], let f = rows[i].take() { bulk.feedback.append(f) }
        }

        // 5. Settle repeats within the block and record every id, in order.
        for i in 0..<n {
            switch verdicts[i] {
            case .applied:
                if let e = keys[i] { run.ids[e.id] = (e.user, true, items[i].line) }
            case let .repeatInBlock(first):
                guard let e = keys[i], let fe = keys[first] else { continue }
                if fe.user != e.user {
                    verdicts[i] = bad(i, "id", "expected an event id not used by another user, got '\(e.id)'")
                } else if case .applied = verdicts[first] {
                    verdicts[i] = .duplicate
                    continue
                } else {
                    verdicts[i] = bad(i, "id", "expected an event id not used by an earlier record, got '\(e.id)' (record \(items[first].line) was rejected)")
                }
                if run.ids[e.id] == nil { run.ids[e.id] = (e.user, false, items[i].line) }
            case .rejected:
                if let e = keys[i], run.ids[e.id] == nil { run.ids[e.id] = (e.user, false, items[i].line) }
            default:
                break
            }
        }
        // Moved out, not copied; the buffer is then filled again (with a value that holds nothing)
        // for the `defer` that deinitializes it.
        let settled = [Verdict](unsafeUninitializedCapacity: n) { out, count in
            _ = out.moveInitialize(fromContentsOf: verdicts)
            count = n
        }
        verdicts.initialize(repeating: .pending)
        return Staged(verdicts: settled, bulk: bulk)
    }

    /// Counts a committed block's events and reports its rejected records, in order.
    /// Waits for the block in flight to commit, then counts and reports its results.
    private func reportPrevious(
        _ committer: Committer, _ run: RunState, _ reject: (LineError) throws -> Void, _ progress: (ReplayProgress) -> Void
    ) throws {
        guard let (done, at) = try committer.finishPrevious() else { return }
        try report(done, run, reject)
        progress(ReplayProgress(records: run.summary.records, done: at))
    }

    private func report(_ staged: Staged, _ run: RunState, _ reject: (LineError) throws -> Void) throws {
        for v in staged.verdicts {
            switch v {
            case .applied: run.summary.applied += 1
            case .duplicate: run.summary.duplicates += 1
            case let .rejected(err):
                run.summary.rejected += 1
                try reject(err)
            default: break
            }
        }
    }
}
