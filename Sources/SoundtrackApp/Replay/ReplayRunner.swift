import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackRules
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
    /// How the blend is learned again at the end when the log grew enough (``BlendRefit``);
    /// `nil` (`--no-fit`): not at all.
    public var refit: BlendRefit? = BlendRefit()

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
    /// The events applied (and committed), skipped as duplicates and rejected.
    public var tally = FeedbackTally()
    /// Users created (`createUsers`).
    public var usersCreated = 0
    /// Events rejected because their user is unknown (among the tally's rejected).
    public var unknownUsers = 0
    /// The attempt to learn the blend again at the end, when one was due (``ReplayOptions/refit``).
    public var blend: BlendRefit.Outcome?

    /// `12 records: 9 applied, 2 duplicates skipped, 1 rejected`.
    public var description: String {
        "\(records) records: \(tally)" + (usersCreated > 0 ? ", \(usersCreated) users created" : "")
    }
}

/// Feedback → changed bins over a log: batched, idempotent and resumable.
///
/// The log is cut into blocks; each block is one durable transaction holding its applied events'
/// feedback rows and the final states of the users they changed. The users are partitioned by a
/// stable hash across ``ReplayOptions/workers`` threads, each staging its users' events with the
/// ``Rules`` in log order on states kept in memory, which after every commit equal the database's.
/// An event gets the verdict `soundtrack feedback` and `POST /v1/feedback` give it.
///
/// Resumability: an event is applied if and only if its row is committed, in the same transaction
/// as its effect on the state. A run killed at any moment leaves the database at a block boundary;
/// a new run skips the committed events by id (duplicates), loads the states the committed blocks
/// left, and applies the rest exactly as the first run would have: the engine is deterministic in
/// its inputs (time from the events, randomness seeded by the event id).
public final class ReplayRunner: Sendable {
    /// The database.
    public let store: Store
    /// The rules, with the whole catalog in memory.
    public let rules: Rules
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
        self.init(store: service.store, rules: Rules(engine: service.engine.with(catalog: IndexCatalog(index))), options: options)
    }

    /// Creates a runner.
    public init(store: Store, rules: Rules, options: ReplayOptions) {
        self.store = store
        self.rules = rules
        self.options = options
    }

    /// A user's state through the run, boxed so that a worker changes it in place behind one lookup.
    final class UserSlot {
        var cached: CachedUserState
        /// The order in which the run first met the user: the grouping key within a block.
        let ordinal: Int
        init(cached: CachedUserState, ordinal: Int) {
            self.cached = cached
            self.ordinal = ordinal
        }
    }

    final class Worker: @unchecked Sendable {
        var users: [String: UserSlot] = [:]
        var touched: [String] = []
        /// An error that is not a verdict (it ends the run).
        var failure: (any Error)?
    }

    enum Verdict {
        case pending
        /// Applied; its row waits in the block's rows.
        case applied
        case duplicate
        case rejected(LineError)
        /// Rejected because its user is unknown (counted apart, for the hint about `--create-users`).
        case unknownUser(LineError)
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
        /// The owner of every event id applied in this run or found applied before it (rule 1 of
        /// ``Rules``). Written between rounds only, read by the workers during them.
        var owners: [String: String] = [:]
        var summary = ReplaySummary()
        init(workers: Int) { self.workers = (0..<workers).map { _ in Worker() } }

        func worker(of user: String) -> Int { Int(StableHash.fnv1a(user) % UInt64(workers.count)) }
    }

    /// Replays a JSON Lines log of feedback events.
    /// - Parameters:
    ///   - read: reads input into a buffer, returning how many bytes it read (0 at the end).
    ///   - reject: receives each rejected line, in line order.
    ///   - progress: called after each committed block.
    /// - Throws: errors of `read` or `reject`, or of the database (the blocks before are committed);
    ///   ``WriterLockError/held(database:holder:)`` at once when another replay or learning batch
    ///   writes the same database file.
    public func run(
        read: @escaping LineBlocks.Read,
        reject: (LineError) throws -> Void,
        progress: (ReplayProgress) -> Void = { _ in }
    ) throws -> ReplaySummary {
        try withCheckpoints { checkpoints in
            var summary = try replay(read: read, reject: reject, progress: progress, checkpoints: checkpoints)
            summary.blend = try refitBlend()
            return summary
        }
    }

    /// At the end: writes the community model the events were counted in (``Store/checkpointCommunity(_:)``),
    /// and learns the blend again from the store's queries when a refit is due (``ReplayOptions/refit``).
    private func refitBlend() throws -> BlendRefit.Outcome? {
        if let shared = rules.engine.community as? SharedCommunity { try store.checkpointCommunity(shared) }
        return try options.refit?.runIfDue(store, current: rules.engine.ranker, at: options.now)
    }

    /// Runs `body` with a large page cache on the write connection and, for a file database,
    /// checkpoints on a thread of their own instead of inside commits (``LogCheckpoints``). The
    /// commits themselves never checkpoint (an in-memory database has no write-ahead log at all).
    private func withCheckpoints<T>(_ body: (LogCheckpoints?) throws -> T) throws -> T {
        // One replay or learning batch at a time per database file (released at the end, or by the OS).
        let lock = try store.path.map { try WriterLock(databasePath: $0, holder: "replay") }
        defer { lock?.release() }
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
        let buffers = BlockBuffers(limit: 1)
        var blocks = LineBlocks(blockBytes: options.blockBytes, buffers: buffers, read: read)
        while let block = try blocks.next() {
            let items = decode(block, workers: nw)
            buffers.give(block.bytes)  // the events own their bytes
            let staged = try stage(items, run: run)
            try reportPrevious(committer, run, reject, progress)
            committer.submit(staged, done: block.consumed)
        }
        try reportPrevious(committer, run, reject, progress)
        return run.summary
    }

    /// A block's events, decoded in parallel straight into the array's storage (each element
    /// initialized once, by the worker of its range): an item holds a whole event inline, and
    /// copying the block's items into an array afterwards moved ~50 MB and retained every string.
    private func decode(_ block: LineBlocks.Block, workers: Int) -> [Item] {
        let n = block.lines.count
        let strict = options.strict
        return [Item](unsafeUninitializedCapacity: n) { storage, count in
            let shared = Shared(p: storage)
            block.forEachRecordInParallel(workers: workers) { i, line, rec in
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
            var summary = run.summary
            summary.blend = try refitBlend()
            return summary
        }
    }

    /// A block applied in memory, waiting for its transaction.
    struct Staged: @unchecked Sendable {
        var verdicts: [Verdict]
        var writes: [UserWrite]
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
                        try store.commit(staged.writes)
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

    /// The id, user and pick of each decoded event of a block (`nil`: a record that did not
    /// decode), read once: matching an event out of its item copies the event.
    typealias Key = (id: String, user: String, pickId: String?)

    /// Decodes nothing, writes nothing: judges a block's events by the ``Rules`` against the
    /// in-memory states, changing them, and returns the block's transaction, ready to commit. The
    /// ids it applies are recorded at once, so the next block is judged against them while this one
    /// commits.
    ///
    /// The events are applied in rounds: each round is the longest run of events whose ids do not
    /// repeat, applied by the workers in parallel (each its users, each user's in log order), so
    /// that an event repeating the id of one before it is judged once that one is settled, as one
    /// event after the other would be.
    private func stage(_ items: [Item], run: RunState) throws -> Staged {
        let n = items.count
        run.summary.records += n
        let verdicts = UnsafeMutableBufferPointer<Verdict>.allocate(capacity: n)
        verdicts.initialize(repeating: .pending)
        // The rows of applied events, by line, moved into the block's writes in order.
        let rows = UnsafeMutableBufferPointer<FeedbackRow?>.allocate(capacity: n)
        rows.initialize(repeating: nil)
        defer {
            verdicts.deinitialize().deallocate()
            rows.deinitialize().deallocate()
        }
        let keys: [Key?] = items.map { item in
            if case let .success(e) = item.event { (e.id, e.user, e.pickId) } else { nil }
        }
        for i in 0..<n {
            if case let .failure(error) = items[i].event { verdicts[i] = .rejected(error) }
        }
        try lookUpOwners(keys, run)
        // The worker of each event's user (-1: a record that did not decode), hashed once.
        let workerOf: [Int] = keys.map { k in k.map { run.worker(of: $0.user) } ?? -1 }
        var writes = try meetUsers(keys, workerOf, run)
        // The picks named by events that rule 1 does not decide.
        let pickIds = keys.compactMap { k in k.flatMap { Rules.needsState(appliedBy: run.owners[$0.id]) ? $0.pickId : nil } }
        let picks = pickIds.isEmpty ? [:] : try store.pickRecords(ids: pickIds)

        var start = 0
        while start < n {
            let end = Self.roundEnd(keys, from: start)
            try applyRound(items, keys, workerOf, start..<end, picks: picks, run: run, verdicts: Shared(p: verdicts), rows: Shared(p: rows))
            for i in start..<end {
                if case .applied = verdicts[i], let k = keys[i] { run.owners[k.id] = k.user }
            }
            start = end
        }
        writes += collectWrites(run, rows: rows, verdicts: verdicts)
        // Moved out, not copied; the buffer is then filled again (with a value that holds nothing)
        // for the `defer` that deinitializes it.
        let settled = [Verdict](unsafeUninitializedCapacity: n) { out, count in
            _ = out.moveInitialize(fromContentsOf: verdicts)
            count = n
        }
        verdicts.initialize(repeating: .pending)
        return Staged(verdicts: settled, writes: writes)
    }

    /// Rule 1 needs the owner of each id: this run's applied ids are known; the others are looked
    /// up in the database, once per block.
    private func lookUpOwners(_ keys: [Key?], _ run: RunState) throws {
        var fresh: [String] = []
        for k in keys {
            if let k, run.owners[k.id] == nil { fresh.append(k.id) }
        }
        for (id, user) in try store.feedbackOwners(ids: fresh) { run.owners[id] = user }
    }

    /// The users a block names for the first time, with an event that needs their state: loaded
    /// from the database, else created (`createUsers`: the returned writes add them), else unknown
    /// for the rest of the run. (A replay run again finds every id applied and loads no one.)
    private func meetUsers(_ keys: [Key?], _ workerOf: [Int], _ run: RunState) throws -> [UserWrite] {
        var missing: [String] = []
        var seen = Set<String>()
        for (i, k) in keys.enumerated() {
            guard let k, Rules.needsState(appliedBy: run.owners[k.id]) else { continue }
            guard run.workers[workerOf[i]].users[k.user] == nil, !run.unknown.contains(k.user) else { continue }
            if seen.insert(k.user).inserted { missing.append(k.user) }
        }
        guard !missing.isEmpty else { return [] }
        let loaded = try loadStatesInParallel(
            store: store, users: missing, workers: run.workers.count, defaults: rules.engine.config.defaultWeights,
            worker: run.worker(of:), each: { _, states in states })
        var writes: [UserWrite] = []
        for user in missing {
            let w = run.worker(of: user)
            var cached = loaded[w][user]
            if cached == nil && options.createUsers {
                cached = CachedUserState(state: rules.engine.newUser(user))
                writes.append(.addUser(user, at: options.now))
                run.summary.usersCreated += 1
            }
            guard var cached else {
                run.unknown.insert(user)
                continue
            }
            // A state the service left behind its feedback is brought up to date first.
            try rules.catchUp(&cached) { id in try store.pickRecord(id: id) }
            run.workers[w].users[user] = UserSlot(cached: cached, ordinal: run.usersMet)
            run.usersMet += 1
        }
        return writes
    }

    /// The end of the round that starts at `start`: the first event whose id an event of the
    /// round already has (or the end of the block).
    static func roundEnd(_ keys: [Key?], from start: Int) -> Int {
        var ids = Set<String>()
        for i in start..<keys.count {
            guard let k = keys[i] else { continue }
            if !ids.insert(k.id).inserted { return i }
        }
        return keys.count
    }

    /// Judges the events of one round: those of users without a state here (unknown users, and
    /// users not loaded because rule 1 decides all their events), the others on the workers, each
    /// worker its own users grouped by user (``groupByUser(_:)``: a user's state, 32 KB of scoring
    /// rows alone for 32 bins, stays in the cache across its events), each user's events in log order.
    private func applyRound(
        _ items: [Item], _ keys: [Key?], _ workerOf: [Int], _ round: Range<Int>, picks: [String: PickRecord], run: RunState,
        verdicts: Shared<Verdict>, rows: Shared<FeedbackRow?>
    ) throws {
        for i in round {
            guard let k = keys[i], run.workers[workerOf[i]].users[k.user] == nil, case let .success(e) = items[i].event else {
                continue
            }
            do {
                if try rules.stageFeedbackOfUnknownUser(e, appliedBy: run.owners[k.id]) == .duplicate { verdicts.p[i] = .duplicate }
            } catch {
                let line = LineError(line: items[i].line, file: items[i].file, error)
                if case .unknownUser = error { verdicts.p[i] = .unknownUser(line) } else { verdicts.p[i] = .rejected(line) }
            }
        }
        let rules = self.rules, owners = run.owners
        DispatchQueue.concurrentPerform(iterations: run.workers.count) { w in
            let worker = run.workers[w]
            var mine: [UserLine<UserSlot>] = []
            for i in round where workerOf[i] == w {
                guard let k = keys[i], let slot = worker.users[k.user] else { continue }
                mine.append((slot.ordinal, i, slot))
            }
            groupByUser(&mine)
            for (_, i, slot) in mine {
                guard case let .success(e) = items[i].event else { continue }
                do {
                    let owner = owners[e.id]
                    let verdict = try rules.stageFeedback(
                        e, appliedBy: owner, user: &slot.cached, position: Int64(items[i].line),
                        pick: Rules.pickNamed(by: e, appliedBy: owner) { picks[$0] })
                    guard case let .applied(row) = verdict else {
                        verdicts.p[i] = .duplicate
                        continue
                    }
                    rows.p[i] = row
                    verdicts.p[i] = .applied
                    worker.touched.append(e.user)
                } catch {
                    if let line = LineError(line: items[i].line, file: items[i].file, rejecting: error) {
                        verdicts.p[i] = .rejected(line)
                    } else if worker.failure == nil {
                        worker.failure = error
                    }
                }
            }
        }
        for w in run.workers {
            if let e = w.failure { throw e }
        }
    }

    /// The block's transaction: the final state of each user it changed, then its applied events'
    /// rows in log order.
    private func collectWrites(_ run: RunState, rows: UnsafeMutableBufferPointer<FeedbackRow?>, verdicts: UnsafeMutableBufferPointer<Verdict>) -> [UserWrite] {
        var writes: [UserWrite] = []
        for w in run.workers {
            var done = Set<String>()
            for user in w.touched where done.insert(user).inserted {
                // The whole state, shared with the live one until the workers change it again.
                let slot = w.users[user]!
                writes.append(.state(slot.cached.state))
                slot.cached.state.changes = UserState.Changes()
            }
            w.touched.removeAll(keepingCapacity: true)
        }
        var applied: [FeedbackRow] = []
        applied.reserveCapacity(rows.count)
        for i in 0..<rows.count {
            if case .applied = verdicts[i], let row = rows[i].take() { applied.append(row) }
        }
        if !applied.isEmpty { writes.append(.feedbackRows(applied)) }
        return writes
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
            case .applied: run.summary.tally.applied += 1
            case .duplicate: run.summary.tally.duplicates += 1
            case let .rejected(err):
                run.summary.tally.rejected += 1
                try reject(err)
            case let .unknownUser(err):
                run.summary.tally.rejected += 1
                run.summary.unknownUsers += 1
                try reject(err)
            case .pending: break
            }
        }
    }
}
