import Foundation
import Synchronization
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackStore

/// How a batch run behaves.
public struct BatchOptions: Sendable {
    /// Worker threads; users are partitioned among them by a stable hash of the user id.
    public var workers = 2
    /// Learn from the picks (write the users' states at the end); false: `--read-only`.
    public var learn = true
    /// Stop at the first bad line (the picks before it are still written and learned).
    public var failFast = false
    /// Reject unknown fields.
    public var strict = false
    /// Also store each pick's record (so feedback can name its `pick_id`); the states are then
    /// committed after every block instead of once at the end.
    public var recordPicks = false
    /// Ranked tracks per pick (`--top K`).
    public var top = 1
    /// Bytes of input per block (the unit of parallel work and of output). Within a block each
    /// user's snapshots are picked one after the other. 64 MiB (about 100,000 snapshots) ran the
    /// benchmark 5 % faster than 16 MiB when it was chosen; since the output buffers use huge pages,
    /// 16, 32 and 64 MiB are within the noise. It costs about 0.7 GB of buffers (blocks read ahead,
    /// decoded snapshots, two blocks of output).
    public var blockBytes = 64 << 20
    /// Users per transaction when the states are written at the end.
    public var usersPerTransaction = 2000

    /// Default options.
    public init() {}
}

/// How far a batch run has come.
public struct BatchProgress: Sendable {
    /// Records read so far.
    public var records: Int
    /// Input bytes read so far.
    public var bytes: Int
}

/// What a batch run did.
public struct BatchSummary: Sendable, Equatable {
    /// Records (non-blank lines) read.
    public var records = 0
    /// Picks written.
    public var picks = 0
    /// Lines rejected.
    public var rejected = 0
    /// Distinct known users seen.
    public var users = 0
    /// Bins created by the picks.
    public var binsCreated = 0
    /// The line the run stopped at (`--fail-fast`), if it stopped early.
    public var stoppedAtLine: Int?
    /// Where the wall time went, by phase.
    public var timings = BatchTimings()
}

/// Wall seconds spent in each phase of a batch run (`soundtrack batch --timings`).
public struct BatchTimings: Sendable, Equatable {
    /// Reading input and cutting it into blocks of lines (on the reader thread, overlapping the
    /// other phases).
    public var read = 0.0
    /// Decoding and validating snapshots (in parallel).
    public var decode = 0.0
    /// Loading users' states from the database.
    public var load = 0.0
    /// Picking (in parallel, each worker its users).
    public var pick = 0.0
    /// Assembling the output in input order and writing it, and the error report (on the writer
    /// thread, overlapping the other phases).
    public var output = 0.0
    /// The workers waiting for the reader or the writer.
    public var stalled = 0.0
    /// Writing the learned states back to the database.
    public var commit = 0.0

    /// The phases as (name, seconds), in pipeline order.
    public var phases: [(String, Double)] {
        [("read", read), ("decode", decode), ("load", load), ("pick", pick), ("output", output), ("stalled", stalled), ("commit", commit)]
    }
}

/// Snapshot → pick over JSON Lines, on all cores.
///
/// The input is read in blocks of whole lines. Each block is decoded in parallel (the fast byte
/// decoder), then its lines are partitioned by a stable hash of the user across ``BatchOptions/workers``
/// threads, so that one thread owns each user and applies that user's snapshots in input order
/// to the user's ``UserState``, kept in memory for the whole run. Each worker encodes its picks
/// with ``PickWriter`` into its own buffer; the block's output is then assembled in input order.
/// The states go back to SQLite in large transactions at the end (never with `learn` off).
/// The picks are the ones one-at-a-time `soundtrack pick` calls would make in the same order.
public final class BatchRunner: Sendable {
    /// The database.
    public let store: Store
    /// The engine, with the whole catalog in memory.
    public let engine: Recommender
    /// The options.
    public let options: BatchOptions

    /// Creates a runner over a service's store, loading the whole catalog into memory.
    public convenience init(service: SoundtrackService, options: BatchOptions) throws {
        let index = CatalogIndex(tracks: try service.store.allTracks())
        self.init(store: service.store, engine: service.engine.with(catalog: IndexCatalog(index)), options: options)
    }

    /// Creates a runner.
    public init(store: Store, engine: Recommender, options: BatchOptions) {
        self.store = store
        self.engine = engine
        self.options = options
    }

    /// A user's state, boxed so that the pick mutates it in place behind one dictionary lookup.
    final class StateBox {
        var state: UserState
        /// The order in which the run first met the user: the grouping key within a block.
        let ordinal: Int
        var touched = false
        init(_ state: UserState, ordinal: Int) {
            self.state = state
            self.ordinal = ordinal
        }
    }

    final class Worker: @unchecked Sendable {
        var states: [String: StateBox] = [:]
        var touched: [StateBox] = []
        /// Two output buffers, used by alternate blocks: the workers fill one while the writer drains the other.
        let outs = [ByteBuffer(capacity: 1 << 20), ByteBuffer(capacity: 1 << 20)]
        var picks: [(record: PickRecord, seq: Int64)] = []
        var created = 0
    }

    enum Slot {
        case none
        case snapshot(Snapshot)
        case bad(LineError)
        /// Picked: the snapshot was moved out of the slot (not copied) to pick from it, and the
        /// pick is in the worker's output buffer.
        case picked
    }

    struct Shared<T>: @unchecked Sendable {
        let p: UnsafeMutableBufferPointer<T>
    }

    /// Runs the batch.
    ///
    /// Three threads overlap: a reader cuts the input into blocks ahead of the workers, the
    /// workers decode and pick block after block, and a writer assembles each block's picks in
    /// input order and writes them (and the block's rejected lines) while the next block is picked.
    /// - Parameters:
    ///   - read: reads input into a buffer, returning how many bytes it read (0 at the end); called on the reader thread.
    ///   - write: receives the output (JSON Lines of picks), block by block, in input order, as byte
    ///     ranges to write one after the other (valid only during the call); called
    ///     on the writer thread, never concurrently with `reject`.
    ///   - reject: receives each bad line, in line order; called on the writer thread.
    ///   - progress: called after each block is picked, on the calling thread.
    /// - Returns: the summary.
    /// - Throws: errors of `read`, `write`, `reject` or the database (a runtime failure).
    public func run(
        read: @escaping LineBlocks.Read,
        write: @escaping ([UnsafeRawBufferPointer]) throws -> Void,
        reject: @escaping (LineError) throws -> Void,
        progress: (BatchProgress) -> Void = { _ in }
    ) throws -> BatchSummary {
        try pipeline(read: read, write: write, reject: reject, progress: progress)
    }

    /// One block's output, handed from the workers to the writer thread.
    private struct OutputJob: @unchecked Sendable {
        var index: Int
        var slots: UnsafeMutableBufferPointer<Slot>
        var owner: UnsafeMutableBufferPointer<Int>
        var spans: UnsafeMutableBufferPointer<(Int, Int)>
        var cutoff: Int
    }

    /// What the writer thread did; read by the caller after joining it.
    private final class WriterTally: @unchecked Sendable {
        var picks = 0
        var rejected = 0
        var seconds = 0.0
        var error: (any Error)?
        private let condition = NSCondition()
        private var completed = 0

        func finished(_ job: Int) {
            condition.lock()
            completed = job + 1
            condition.broadcast()
            condition.unlock()
        }

        /// Waits until the first `count` jobs are written.
        func wait(completed count: Int) {
            condition.lock()
            while completed < count && error == nil { condition.wait() }
            condition.unlock()
        }

        func fail(_ e: any Error) {
            condition.lock()
            if error == nil { error = e }
            condition.broadcast()
            condition.unlock()
        }

        var failure: (any Error)? {
            condition.lock()
            defer { condition.unlock() }
            return error
        }
    }

    private struct Unchecked<T>: @unchecked Sendable { let value: T }

    private func pipeline(
        read: @escaping LineBlocks.Read,
        write: @escaping ([UnsafeRawBufferPointer]) throws -> Void,
        reject: @escaping (LineError) throws -> Void,
        progress: (BatchProgress) -> Void
    ) throws -> BatchSummary {
        let nw = max(1, options.workers)
        let workers = (0..<nw).map { _ in Worker() }
        keep(workers)
        var unknown = Set<String>()
        var summary = BatchSummary()
        var nextOrdinal = 0

        // The reader: blocks of whole lines, up to two ahead of the workers.
        enum ReadItem { case block(LineBlocks.Block, Double), end, failed(any Error) }
        let readPipe = Pipe<Unchecked<ReadItem>>(capacity: 2)
        let stopReading = Atomic<Bool>(false)
        let source = Unchecked(value: read)
        let blockBytes = options.blockBytes
        let reader = BackgroundThread(name: "batch-reader") {
            var blocks = LineBlocks(blockBytes: blockBytes, read: source.value)
            var clock = PhaseClock()
            while !stopReading.load(ordering: .relaxed) {
                do {
                    _ = clock.lap()
                    guard let block = try blocks.next() else { break }
                    readPipe.put(Unchecked(value: .block(block, clock.lap())))
                } catch {
                    readPipe.put(Unchecked(value: .failed(error)))
                    return
                }
            }
            readPipe.put(Unchecked(value: .end))
        }

        // The writer: each block's picks in input order, then its rejected lines.
        let writePipe = Pipe<Unchecked<OutputJob?>>(capacity: 1)
        let tally = WriterTally()
        let writeSink = Unchecked(value: write), rejectSink = Unchecked(value: reject)
        let writer = BackgroundThread(name: "batch-writer") {
            var pieces: [UnsafeRawBufferPointer] = []
            while let job = writePipe.take().value {
                var clock = PhaseClock()
                let parity = job.index % 2
                let n = job.slots.count
                defer {
                    for w in workers { w.outs[parity].removeAll() }
                    job.slots.deinitialize().deallocate()
                    job.owner.deallocate()
                    job.spans.deallocate()
                    tally.seconds += clock.lap()
                    tally.finished(job.index)
                }
                guard tally.failure == nil else { continue }
                do {
                    // The picks in input order, as ranges of the workers' buffers (adjacent ranges
                    // merged): written without copying them into one buffer first.
                    pieces.removeAll(keepingCapacity: true)
                    for i in 0..<job.cutoff {
                        guard job.owner[i] >= 0, case .picked = job.slots[i] else { continue }
                        let (a, b) = job.spans[i]
                        let piece = workers[job.owner[i]].outs[parity].bytes(a..<b)
                        if let last = pieces.last, last.baseAddress! + last.count == piece.baseAddress! {
                            pieces[pieces.count - 1] = UnsafeRawBufferPointer(start: last.baseAddress, count: last.count + piece.count)
                        } else {
                            pieces.append(piece)
                        }
                        tally.picks += 1
                    }
                    if !pieces.isEmpty { try writeSink.value(pieces) }
                    for i in 0..<min(n, job.cutoff + 1) {
                        if case let .bad(e) = job.slots[i] {
                            tally.rejected += 1
                            try rejectSink.value(e)
                        }
                    }
                } catch {
                    tally.fail(error)
                }
            }
        }

        var failure: (any Error)?
        var clock = PhaseClock()
        var index = 0
        var endedCleanly = false
        loop: while true {
            let item = readPipe.take().value
            summary.timings.stalled += clock.lap()
            let block: LineBlocks.Block
            switch item {
            case .end:
                endedCleanly = true
                break loop
            case let .failed(e):
                endedCleanly = true
                failure = e
                break loop
            case let .block(b, seconds):
                block = b
                summary.timings.read += seconds
            }
            if let e = tally.failure {
                failure = e
                break loop
            }
            let n = block.lines.count
            summary.records += n
            let slots = UnsafeMutableBufferPointer<Slot>.allocate(capacity: n)
            slots.initialize(repeating: .none)
            let owner = UnsafeMutableBufferPointer<Int>.allocate(capacity: n)
            owner.initialize(repeating: -1)
            let spans = UnsafeMutableBufferPointer<(Int, Int)>.allocate(capacity: n)
            spans.initialize(repeating: (0, 0))
            // Each decoded line's user, so that the passes below read it without copying the
            // snapshot out of its slot (a copy retains and releases every string and array in it).
            let users = UnsafeMutableBufferPointer<String>.allocate(capacity: n)
            users.initialize(repeating: "")
            defer { users.deinitialize().deallocate() }
            let sharedSlots = Shared(p: slots), sharedSpans = Shared(p: spans), sharedUsers = Shared(p: users)
            let lines = block.lines
            let strict = options.strict

            // 1. Decode, in parallel over ranges of lines.
            block.forEachRecordInParallel(workers: nw) { i, line, rec in
                do throws(InputError) {
                    let snapshot = try Snapshot.decode(bytes: rec, strict: strict)
                    sharedUsers.p[i] = snapshot.user
                    sharedSlots.p[i] = .snapshot(snapshot)
                } catch {
                    sharedSlots.p[i] = .bad(LineError(line: line, error))
                }
            }
            summary.timings.decode += clock.lap()

            // 2. Assign users to workers; load the users seen for the first time.
            var missing: [String] = []
            var seen = Set<String>()
            for i in 0..<n {
                guard case .snapshot = slots[i] else { continue }
                let user = users[i]
                let w = Int(StableHash.fnv1a(user) % UInt64(nw))
                owner[i] = w
                if workers[w].states[user] == nil && !unknown.contains(user) && seen.insert(user).inserted {
                    missing.append(user)
                }
            }
            if !missing.isEmpty {
                // Each worker loads its own users (one read transaction each) straight into its
                // states, in parallel; ordinals follow the order of first appearance.
                var ordinals: [String: Int] = [:]
                ordinals.reserveCapacity(missing.count)
                for user in missing {
                    ordinals[user] = nextOrdinal
                    nextOrdinal += 1
                }
                let firstSeen = ordinals, learn = options.learn, engine = engine
                do {
                    let found = try loadStatesInParallel(
                        store: store, users: missing, workers: nw, defaults: engine.config.defaultWeights,
                        worker: { Int(StableHash.fnv1a($0) % UInt64(nw)) }
                    ) { w, loaded in
                        for (user, l) in loaded {
                            var state = l.cached.state
                            if !learn { engine.prepare(&state) }  // derived data computed once, shared by the per-pick copies
                            workers[w].states[user] = StateBox(state, ordinal: firstSeen[user]!)
                        }
                        return loaded.count
                    }
                    let loaded = found.reduce(0, +)
                    summary.users += loaded
                    if loaded < missing.count {
                        for user in missing where workers[Int(StableHash.fnv1a(user) % UInt64(nw))].states[user] == nil {
                            unknown.insert(user)
                        }
                    }
                } catch {
                    slots.deinitialize().deallocate()
                    owner.deallocate()
                    spans.deallocate()
                    failure = error
                    break loop
                }
            }
            var cutoff = n
            for i in 0..<n {
                if case .snapshot = slots[i], unknown.contains(users[i]) {
                    slots[i] = .bad(LineError(
                        line: lines[i].line, field: "user",
                        message: "expected a known user (add one with `soundtrack users add`), got '\(users[i])'"))
                }
                if case .bad = slots[i], options.failFast, cutoff == n { cutoff = i }
            }
            summary.timings.load += clock.lap()

            // 3. Pick, each worker its own users, into the output buffers of this block's parity,
            // which the writer has finished with (it wrote the block before the previous one).
            tally.wait(completed: index - 1)
            summary.timings.stalled += clock.lap()
            let learn = options.learn, top = options.top, record = options.recordPicks
            let end = cutoff, sharedOwner = Shared(p: owner), parity = index % 2
            DispatchQueue.concurrentPerform(iterations: nw) { w in
                let worker = workers[w]
                let out = worker.outs[parity]
                // This worker's lines grouped by user, in input order within each user.
                var mine: [UserLine<StateBox>] = []
                for i in 0..<end where sharedOwner.p[i] == w {
                    guard case .snapshot = sharedSlots.p[i] else { continue }
                    let box = worker.states[sharedUsers.p[i]]!
                    mine.append((box.ordinal, i, box))
                }
                groupByUser(&mine)
                for (_, i, box) in mine {
                    // Moved out, not copied; the slot then records that the line was picked.
                    let slot = (sharedSlots.p.baseAddress! + i).move()
                    (sharedSlots.p.baseAddress! + i).initialize(to: .picked)
                    guard case let .snapshot(s) = consume slot else { continue }
                    let start = out.count
                    if learn {
                        let seq = box.state.pickCounter
                        let (pick, rec) = engine.pick(s, state: &box.state, top: top)
                        if !box.touched {
                            box.touched = true
                            worker.touched.append(box)
                        }
                        if pick.bin.created { worker.created += 1 }
                        if record { worker.picks.append((rec, seq)) }
                        PickWriter.write(pick, includeRanked: top > 1, into: out)
                    } else {
                        var copy = box.state
                        let pick = engine.pick(s, state: &copy, top: top).pick
                        PickWriter.write(pick, includeRanked: top > 1, into: out)
                    }
                    out.append(0x0A)
                    sharedSpans.p[i] = (start, out.count)
                }
            }
            summary.timings.pick += clock.lap()

            // 4. The block's output goes to the writer; the next block is read meanwhile.
            writePipe.put(Unchecked(value: OutputJob(index: index, slots: slots, owner: owner, spans: spans, cutoff: cutoff)))
            index += 1
            summary.timings.stalled += clock.lap()
            if record && learn {
                do { try commit(workers, all: false) } catch {
                    failure = error
                    break loop
                }
            }
            summary.timings.commit += clock.lap()
            progress(BatchProgress(records: summary.records, bytes: block.consumed))
            if cutoff < n {
                summary.stoppedAtLine = lines[cutoff].line
                break
            }
        }
        // Stop the reader (it may be blocks ahead) and let the writer finish what it has.
        stopReading.store(true, ordering: .relaxed)
        if endedCleanly {
            reader.join()
        } else {
            // The reader may be waiting for input that has not come yet (a pipe whose writer is
            // still running): it is not waited for. What it hands over from now on is dropped, and
            // it ends once its current read returns.
            readPipe.close()
        }
        writePipe.put(Unchecked(value: nil))
        writer.join()
        if let e = failure ?? tally.failure { throw e }
        summary.picks = tally.picks
        summary.rejected = tally.rejected
        summary.timings.output = tally.seconds
        summary.binsCreated = workers.reduce(0) { $0 + $1.created }
        _ = clock.lap()
        if options.learn { try commit(workers, all: true) }
        summary.timings.commit += clock.lap()
        return summary
    }

    private var learn: Bool { options.learn }

    /// The workers (and the users' states) of the last run, kept until the runner goes away: a
    /// one-shot process that exits right after a run then skips freeing millions of allocations.
    private let lastRun = Mutex<[Worker]>([])

    private func keep(_ workers: [Worker]) {
        lastRun.withLock { $0 = workers }
    }

    /// Measures the wall time between laps (durations for the report, not engine time).
    struct PhaseClock {
        private var last = DispatchTime.now().uptimeNanoseconds

        /// Seconds since the previous lap.
        mutating func lap() -> Double {
            let now = DispatchTime.now().uptimeNanoseconds
            defer { last = now }
            return Double(now - last) / 1e9
        }
    }

    /// Writes the touched users' states (and pending pick records) in transactions of
    /// ``BatchOptions/usersPerTransaction`` users.
    private func commit(_ workers: [Worker], all: Bool) throws {
        var bulk = BulkWrite()
        for w in workers {
            bulk.picks += w.picks
            w.picks.removeAll(keepingCapacity: true)
            for box in w.touched.sorted(by: { $0.state.user < $1.state.user }) {
                box.touched = false
                bulk.states.append(box.state)
                box.state.changes = UserState.Changes()
                if bulk.states.count >= options.usersPerTransaction && bulk.picks.isEmpty {
                    try store.commitBulk(bulk)
                    bulk = BulkWrite()
                }
            }
            w.touched.removeAll(keepingCapacity: true)
        }
        try store.commitBulk(bulk)
    }
}
