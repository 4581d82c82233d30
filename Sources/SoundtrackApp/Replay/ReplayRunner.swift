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
    /// Bytes of JSON Lines per block: one block is one transaction.
    public var blockBytes = 2 << 20
    /// Events per block (one transaction) when replaying decoded events (imports).
    public var blockEvents = 8192
    /// When created users were created.
    public var now = Date(timeIntervalSince1970: 0)

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
        init(cached: CachedUserState, lastAt: Double?) {
            self.cached = cached
            self.lastAt = lastAt
        }
    }

    final class Worker: @unchecked Sendable {
        var users: [String: UserSlot] = [:]
        var touched: [String] = []
    }

    enum Verdict {
        case pending
        case apply
        case applied(AppliedFeedback)
        case duplicate
        case repeatInBlock(first: Int)
        case rejected(LineError)
    }

    struct Shared<T>: @unchecked Sendable {
        let p: UnsafeMutableBufferPointer<T>
    }

    struct Bytes: @unchecked Sendable {
        let p: UnsafeRawBufferPointer
    }

    /// Run-wide bookkeeping.
    final class RunState: @unchecked Sendable {
        let workers: [Worker]
        var unknown = Set<String>()
        /// Ids seen in this run: owner and whether the event was applied (or found applied before).
        var ids: [String: (user: String, applied: Bool, line: Int)] = [:]
        var summary = ReplaySummary()
        init(workers: Int) { self.workers = (0..<workers).map { _ in Worker() } }
    }

    /// Replays a JSON Lines log of feedback events.
    /// - Parameters:
    ///   - read: the next chunk of input (`nil` or empty at the end).
    ///   - reject: receives each rejected line, in line order.
    ///   - progress: called after each committed block.
    /// - Throws: errors of `read` or `reject`, or of the database (the blocks before are committed).
    public func run(
        read: @escaping () throws -> [UInt8]?,
        reject: (LineError) throws -> Void,
        progress: (ReplayProgress) -> Void = { _ in }
    ) throws -> ReplaySummary {
        let nw = max(1, options.workers)
        let run = RunState(workers: nw)
        var blocks = LineBlocks(blockBytes: options.blockBytes, read: read)
        let strict = options.strict
        while let block = try blocks.next() {
            let n = block.lines.count
            let decoded = UnsafeMutableBufferPointer<Item?>.allocate(capacity: n)
            decoded.initialize(repeating: nil)
            defer { decoded.deinitialize().deallocate() }
            let shared = Shared(p: decoded)
            let lines = block.lines
            block.bytes.withUnsafeBytes { raw in
                let bytes = Bytes(p: raw)
                DispatchQueue.concurrentPerform(iterations: nw) { w in
                    for i in (n * w / nw)..<(n * (w + 1) / nw) {
                        let l = lines[i]
                        let rec = UnsafeRawBufferPointer(rebasing: bytes.p[l.start..<l.end])
                        do throws(InputError) {
                            shared.p[i] = Item(line: l.line, event: .success(try FeedbackEvent.decode(bytes: rec, strict: strict)))
                        } catch {
                            shared.p[i] = Item(line: l.line, event: .failure(LineError(line: l.line, error)))
                        }
                    }
                }
            }
            try process(decoded.map { $0! }, run: run, reject: reject)
            progress(ReplayProgress(records: run.summary.records, done: block.consumed))
        }
        return run.summary
    }

    /// Replays decoded events (an import), in order, in blocks of ``ReplayOptions/blockEvents``.
    public func run(
        items: [Item],
        reject: (LineError) throws -> Void,
        progress: (ReplayProgress) -> Void = { _ in }
    ) throws -> ReplaySummary {
        let run = RunState(workers: max(1, options.workers))
        var start = 0
        while start < items.count {
            let end = min(items.count, start + max(1, options.blockEvents))
            try process(Array(items[start..<end]), run: run, reject: reject)
            progress(ReplayProgress(records: run.summary.records, done: end))
            start = end
        }
        return run.summary
    }

    private func process(_ items: [Item], run: RunState, reject: (LineError) throws -> Void) throws {
        let n = items.count
        let nw = run.workers.count
        run.summary.records += n
        let verdicts = UnsafeMutableBufferPointer<Verdict>.allocate(capacity: n)
        verdicts.initialize(repeating: .pending)
        let owner = UnsafeMutableBufferPointer<Int>.allocate(capacity: n)
        owner.initialize(repeating: -1)
        defer {
            verdicts.deinitialize().deallocate()
            owner.deallocate()
        }
        func bad(_ i: Int, _ field: String, _ message: String) -> Verdict {
            .rejected(LineError(line: items[i].line, file: items[i].file, field: field, message: message))
        }

        // 1. Ids: applied before (in the database or earlier in this run), or repeated in this block.
        var fresh: [String] = []
        for item in items {
            if case let .success(e) = item.event, run.ids[e.id] == nil { fresh.append(e.id) }
        }
        let committed = try store.feedbackOwners(ids: fresh)
        for (id, user) in committed where run.ids[id] == nil { run.ids[id] = (user, true, 0) }
        var firstInBlock: [String: Int] = [:]
        var missing: [String] = []
        var missingSet = Set<String>()
        var pickIds: [String] = []
        for i in 0..<n {
            switch items[i].event {
            case let .failure(e):
                verdicts[i] = .rejected(e)
            case let .success(e):
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
        }

        // 2. Users seen for the first time: load them, or create them, or reject their events.
        var bulk = BulkWrite()
        bulk.at = options.now
        if !missing.isEmpty {
            let loaded = try loadStatesInParallel(
                store: store, users: missing, workers: nw, defaults: engine.config.defaultWeights,
                worker: { Int(StableHash.fnv1a($0) % UInt64(nw)) })
            for user in missing {
                let w = Int(StableHash.fnv1a(user) % UInt64(nw))
                if let l = loaded[user] {
                    run.workers[w].users[user] = UserSlot(cached: l.cached, lastAt: l.lastEventAt)
                } else if options.createUsers {
                    run.workers[w].users[user] = UserSlot(
                        cached: CachedUserState(state: engine.newUser(user), feedbackSeq: 0, keepRawSnapshots: false), lastAt: nil)
                    bulk.newUsers.append(user)
                    run.summary.usersCreated += 1
                } else {
                    run.unknown.insert(user)
                }
            }
        }
        for i in 0..<n {
            if case .apply = verdicts[i], case let .success(e) = items[i].event, run.unknown.contains(e.user) {
                verdicts[i] = bad(i, "user", "expected a known user (add one with `soundtrack users add`, or replay with --create-users), got '\(e.user)'")
                owner[i] = -1
            }
        }
        let picks = pickIds.isEmpty ? [:] : try store.pickRecords(ids: pickIds)

        // 3. Apply, each worker its own users in order.
        let sharedVerdicts = Shared(p: verdicts), sharedOwner = Shared(p: owner)
        let engine = self.engine
        let catalog = engine.catalog
        DispatchQueue.concurrentPerform(iterations: nw) { w in
            let worker = run.workers[w]
            worker.touched.removeAll(keepingCapacity: true)
            for i in 0..<n where sharedOwner.p[i] == w {
                guard case let .success(e) = items[i].event, let slot = worker.users[e.user] else { continue }
                func fail(_ field: String, _ message: String) {
                    sharedVerdicts.p[i] = .rejected(LineError(line: items[i].line, file: items[i].file, field: field, message: message))
                }
                let at = e.at.date.timeIntervalSince1970
                if let last = slot.lastAt, at < last {
                    let when = Timestamp(date: Date(timeIntervalSince1970: last), offsetSeconds: e.at.offsetSeconds).rfc3339
                    fail("at", "expected a time not before the user's previous event (\(when)\(slot.lastLine.map { ", record \($0)" } ?? "")), got '\(e.at.rfc3339)' (events must be in time order per user)")
                    continue
                }
                if catalog.tracks(ids: [e.track]).isEmpty {
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
                    sharedVerdicts.p[i] = .applied(AppliedFeedback(
                        event: e, outcome: outcome, seq: slot.cached.feedbackSeq, keepSnapshot: slot.cached.keepRawSnapshots))
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
        for i in 0..<n {
            if case let .applied(f) = verdicts[i] { bulk.feedback.append(f) }
        }
        try store.commitBulk(bulk)

        // 5. Count and report, in order.
        for i in 0..<n {
            switch verdicts[i] {
            case let .applied(f):
                run.summary.applied += 1
                run.ids[f.event.id] = (f.event.user, true, items[i].line)
            case .duplicate:
                run.summary.duplicates += 1
            case let .repeatInBlock(first):
                guard case let .success(e) = items[i].event, case let .success(fe) = items[first].event else { continue }
                if fe.user != e.user {
                    verdicts[i] = bad(i, "id", "expected an event id not used by another user, got '\(e.id)'")
                } else if case .applied = verdicts[first] {
                    verdicts[i] = .duplicate
                    run.summary.duplicates += 1
                    continue
                } else {
                    verdicts[i] = bad(i, "id", "expected an event id not used by an earlier record, got '\(e.id)' (record \(items[first].line) was rejected)")
                }
                fallthrough
            default:
                if case let .rejected(err) = verdicts[i] {
                    run.summary.rejected += 1
                    if case let .success(e) = items[i].event, run.ids[e.id] == nil {
                        run.ids[e.id] = (e.user, false, items[i].line)
                    }
                    try reject(err)
                }
            }
        }
    }
}
