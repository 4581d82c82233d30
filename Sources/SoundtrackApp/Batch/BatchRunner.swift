import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackRules
import SoundtrackStore
import Synchronization

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
    /// How the blend is learned again at the end of a learning run when the database's feedback
    /// taught enough new queries since the last attempt (``BlendRefit``); `nil` (`--no-fit`): not.
    /// A read-only run never does.
    public var refit: BlendRefit? = BlendRefit()
    /// When the run happens (a refit's time).
    public var now = Date(timeIntervalSince1970: 0)

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
    /// The attempt to learn the blend again at the end, when one was due (``BatchOptions/refit``).
    public var blend: BlendRefit.Outcome?
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
/// threads, so that one thread owns each user and stages that user's snapshots with the ``Rules``
/// in input order on the user's ``UserState``, kept in memory for the whole run. Each worker
/// encodes its picks with ``PickEncoder`` into its own buffer; the block's output is then assembled
/// in input order. The states go back to SQLite in large transactions at the end (never with
/// `learn` off). The picks are the ones one-at-a-time `soundtrack pick` calls would make in the
/// same order.
public final class BatchRunner: Sendable {
    /// The database.
    public let store: Store
    /// The rules, with the whole catalog in memory.
    public let rules: Rules
    /// The options.
    public let options: BatchOptions

    /// Creates a runner over a service's store, loading the whole catalog into memory.
    public convenience init(service: SoundtrackService, options: BatchOptions) throws {
        let index = CatalogIndex(tracks: try service.store.allTracks())
        self.init(store: service.store, rules: Rules(engine: service.engine.with(catalog: IndexCatalog(index))), options: options)
    }

    /// Creates a runner.
    public init(store: Store, rules: Rules, options: BatchOptions) {
        self.store = store
        self.rules = rules
        self.options = options
    }

    /// A user's state, boxed so that the pick mutates it in place behind one dictionary lookup.
    final class StateBox {
        var state: UserState
        /// The order in which the run first met the user: the grouping key within a block.
        let ordinal: Int
        /// The person's settings (``Rules/permitted(_:settings:)``).
        let settings: UserSettings
        var touched = false
        init(_ state: UserState, ordinal: Int, settings: UserSettings = UserSettings()) {
            self.state = state
            self.ordinal = ordinal
            self.settings = settings
        }
    }

    final class Worker: @unchecked Sendable {
        var states: [String: StateBox] = [:]
        var touched: [StateBox] = []
        /// Two output buffers, used by alternate blocks: the workers fill one while the output
        /// thread drains the other.
        let outs = [ByteArena(capacity: 1 << 20), ByteArena(capacity: 1 << 20)]
        var picks: [PickRow] = []
        var created = 0
    }

    /// Run-wide bookkeeping, on the calling thread.
    final class RunState {
        let workers: [Worker]
        var unknown = Set<String>()
        var nextOrdinal = 0
        var summary = BatchSummary()
        /// The reader has handed over the end of the input or its failure, and returned.
        var inputEnded = false
        init(workers: Int) { self.workers = (0..<workers).map { _ in Worker() } }

        func worker(of user: String) -> Int { Int(StableHash.fnv1a(user) % UInt64(workers.count)) }
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
    /// workers decode and pick block after block, and an output thread assembles each block's
    /// picks in input order and writes them (and the block's rejected lines) while the next block
    /// is picked.
    /// - Parameters:
    ///   - read: reads input into a buffer, returning how many bytes it read (0 at the end); called on the reader thread.
    ///   - write: receives the output (JSON Lines of picks), block by block, in input order, as byte
    ///     ranges to write one after the other (valid only during the call); called
    ///     on the output thread, never concurrently with `reject`.
    ///   - reject: receives each bad line, in line order; called on the output thread.
    ///   - progress: called after each block is picked, on the calling thread.
    /// - Returns: the summary.
    /// - Throws: errors of `read`, `write`, `reject` or the database (a runtime failure);
    ///   ``WriterLockError/held(database:holder:)`` at once, when learning, if another replay or
    ///   learning batch writes the same database file.
    public func run(
        read: @escaping LineBlocks.Read,
        write: @escaping ([UnsafeRawBufferPointer]) throws -> Void,
        reject: @escaping (LineError) throws -> Void,
        progress: (BatchProgress) -> Void = { _ in }
    ) throws -> BatchSummary {
        let lock = try options.learn ? store.path.map { try WriterLock(databasePath: $0, holder: "batch") } : nil
        defer { lock?.release() }
        let run = RunState(workers: max(1, options.workers))
        keep(run.workers)
        let reader = BlockReader(blockBytes: options.blockBytes, read: read)
        let output = OutputThread(workers: run.workers, write: write, reject: reject)
        var failure: (any Error)?
        do {
            try pickBlocks(from: reader, to: output, run: run, progress: progress)
        } catch {
            failure = error
        }
        reader.stop(waiting: run.inputEnded)
        output.finish()
        if let e = failure ?? output.failure { throw e }
        var summary = run.summary
        summary.picks = output.picks
        summary.rejected = output.rejected
        summary.timings.output = output.seconds
        summary.binsCreated = run.workers.reduce(0) { $0 + $1.created }
        var clock = PhaseClock()
        if options.learn { try commit(run.workers, all: true) }
        summary.timings.commit += clock.lap()
        if options.learn { summary.blend = try options.refit?.runIfDue(store, current: rules.engine.ranker, at: options.now) }
        return summary
    }

    /// The calling thread's loop: block after block from the reader, decoded, loaded, picked and
    /// handed to the output thread, until the input ends, `--fail-fast` stops at a bad line, or
    /// something fails.
    private func pickBlocks(from reader: BlockReader, to output: OutputThread, run: RunState, progress: (BatchProgress) -> Void) throws {
        var clock = PhaseClock()
        var index = 0
        while true {
            let next = reader.next()
            run.summary.timings.stalled += clock.lap()
            let block: LineBlocks.Block
            switch next {
            case .end:
                run.inputEnded = true
                return
            case let .failed(e):
                run.inputEnded = true  // the reader has returned
                throw e
            case let .block(b, seconds):
                block = b
                run.summary.timings.read += seconds
            }
            if let e = output.failure { throw e }
            let n = block.lines.count
            run.summary.records += n
            let job = BlockJob(count: n)
            decode(block, into: job)
            reader.buffers.give(block.bytes)  // the snapshots own their bytes
            run.summary.timings.decode += clock.lap()
            do {
                try assign(job, run: run)
            } catch {
                job.deallocate()
                throw error
            }
            let cutoff = markUnknownUsers(job, lines: block.lines, run: run)
            run.summary.timings.load += clock.lap()
            // The output buffers of this block's parity are free once the output thread has
            // written the block before the previous one.
            output.waitUntilWritten(count: index - 1)
            run.summary.timings.stalled += clock.lap()
            pick(job, upTo: cutoff, parity: index % 2, expectedBytes: 4 * block.bytes.count / run.workers.count, run: run)
            run.summary.timings.pick += clock.lap()
            // The block's output goes to the output thread; the next block is read meanwhile.
            output.submit(OutputJob(index: index, job: job, cutoff: cutoff))
            index += 1
            run.summary.timings.stalled += clock.lap()
            if options.recordPicks && options.learn { try commit(run.workers, all: false) }
            run.summary.timings.commit += clock.lap()
            progress(BatchProgress(records: run.summary.records, bytes: block.consumed))
            if cutoff < n {
                run.summary.stoppedAtLine = block.lines[cutoff].line
                return
            }
        }
    }

    /// One block's lines on their way through the workers to the output thread, which frees them:
    /// what each line holds, which worker owns it, where its pick is in that worker's buffer, and
    /// its user (read once, so that the passes over the block do not copy the snapshot out of its
    /// slot: a copy retains and releases every string and array in it).
    struct BlockJob: @unchecked Sendable {
        let slots: UnsafeMutableBufferPointer<Slot>
        let owner: UnsafeMutableBufferPointer<Int>
        let spans: UnsafeMutableBufferPointer<(Int, Int)>
        let users: UnsafeMutableBufferPointer<String>
        var count: Int { slots.count }

        init(count n: Int) {
            slots = .allocate(capacity: n)
            slots.initialize(repeating: .none)
            owner = .allocate(capacity: n)
            owner.initialize(repeating: -1)
            spans = .allocate(capacity: n)
            spans.initialize(repeating: (0, 0))
            users = .allocate(capacity: n)
            users.initialize(repeating: "")
        }

        func deallocate() {
            slots.deinitialize().deallocate()
            owner.deallocate()
            spans.deallocate()
            users.deinitialize().deallocate()
        }
    }

    /// 1. Decodes a block, in parallel over ranges of lines.
    private func decode(_ block: LineBlocks.Block, into job: BlockJob) {
        let strict = options.strict
        block.forEachRecordInParallel(workers: options.workers) { i, line, rec in
            do throws(InputError) {
                let snapshot = try Snapshot.decode(bytes: rec, strict: strict)
                job.users[i] = snapshot.user
                job.slots[i] = .snapshot(snapshot)
            } catch {
                job.slots[i] = .bad(LineError(line: line, error))
            }
        }
    }

    /// 2. Assigns each line to its user's worker, and loads the users seen for the first time:
    /// each worker its own users (one read transaction each) straight into its states, in
    /// parallel; ordinals follow the order of first appearance. Users the database does not know
    /// are remembered as unknown.
    private func assign(_ job: BlockJob, run: RunState) throws {
        var missing: [String] = []
        var seen = Set<String>()
        for i in 0..<job.count {
            guard case .snapshot = job.slots[i] else { continue }
            let user = job.users[i]
            let w = run.worker(of: user)
            job.owner[i] = w
            if run.workers[w].states[user] == nil && !run.unknown.contains(user) && seen.insert(user).inserted {
                missing.append(user)
            }
        }
        guard !missing.isEmpty else { return }
        var ordinals: [String: Int] = [:]
        ordinals.reserveCapacity(missing.count)
        for user in missing {
            ordinals[user] = run.nextOrdinal
            run.nextOrdinal += 1
        }
        let firstSeen = ordinals, learn = options.learn, rules = rules, engine = rules.engine, workers = run.workers, store = store
        let found = try loadStatesInParallel(
            store: store, users: missing, workers: workers.count, defaults: engine.config.defaultWeights, worker: run.worker(of:)
        ) { w, loaded in
            for (user, l) in loaded {
                var l = l
                // A state the service left behind its feedback is brought up to date first.
                try rules.catchUp(&l) { id in try store.pickRecord(id: id) }
                var state = l.state
                if !learn { engine.prepare(&state) }  // derived data computed once, shared by the per-pick copies
                workers[w].states[user] = StateBox(state, ordinal: firstSeen[user]!, settings: l.settings)
            }
            return loaded.count
        }
        let loaded = found.reduce(0, +)
        run.summary.users += loaded
        if loaded < missing.count {
            for user in missing where run.workers[run.worker(of: user)].states[user] == nil { run.unknown.insert(user) }
        }
    }

    /// Rejects the lines of unknown users, as the rules judge them (``Rules/requireKnown(user:known:)``):
    /// before any line is picked, so that `--fail-fast` stops before the first of them.
    /// - Returns: the line before which `--fail-fast` stops (the first bad one), or the block's end.
    private func markUnknownUsers(_ job: BlockJob, lines: [(start: Int, end: Int, line: Int)], run: RunState) -> Int {
        var cutoff = job.count
        for i in 0..<job.count {
            if case .snapshot = job.slots[i] {
                do {
                    try Rules.requireKnown(user: job.users[i], known: !run.unknown.contains(job.users[i]))
                } catch {
                    job.slots[i] = .bad(LineError(line: lines[i].line, error))
                }
            }
            if case .bad = job.slots[i], options.failFast, cutoff == job.count { cutoff = i }
        }
        return cutoff
    }

    /// 3. Picks, each worker its own users, into the output buffers of this block's parity: each
    /// worker's lines grouped by user, in input order within each user.
    /// - Parameter expectedBytes: room to reserve in each output buffer at once (a pick's JSON
    ///   is about three times its snapshot's): address space only until written, where growing
    ///   by doubling copied the buffer and made the kernel zero every new copy's pages.
    private func pick(_ job: BlockJob, upTo end: Int, parity: Int, expectedBytes: Int, run: RunState) {
        let learn = options.learn, top = options.top, record = options.recordPicks, rules = self.rules
        let workers = run.workers
        DispatchQueue.concurrentPerform(iterations: workers.count) { w in
            let worker = workers[w]
            let out = worker.outs[parity]
            out.reserve(expectedBytes)
            var mine: [UserLine<StateBox>] = []
            for i in 0..<end where job.owner[i] == w {
                guard case .snapshot = job.slots[i] else { continue }
                let box = worker.states[job.users[i]]!
                mine.append((box.ordinal, i, box))
            }
            groupByUser(&mine)
            for (_, i, box) in mine {
                // Moved out, not copied; the slot then records that the line was picked.
                let slot = (job.slots.baseAddress! + i).move()
                (job.slots.baseAddress! + i).initialize(to: .picked)
                guard case let .snapshot(s) = consume slot else { continue }
                let start = out.count
                if learn {
                    let staged = rules.stagePick(s, top: top, state: &box.state, settings: box.settings)
                    if !box.touched {
                        box.touched = true
                        worker.touched.append(box)
                    }
                    if staged.pick.bin.created { worker.created += 1 }
                    if record { worker.picks.append(staged.row) }
                    PickEncoder.write(staged.pick, includeRanked: top > 1, into: out)
                } else {
                    PickEncoder.write(
                        rules.previewPick(s, top: top, state: box.state, settings: box.settings), includeRanked: top > 1, into: out)
                }
                out.append(0x0A)
                job.spans[i] = (start, out.count)
            }
        }
    }

    /// One block's output, handed from the workers to the output thread.
    struct OutputJob: @unchecked Sendable {
        var index: Int
        var job: BlockJob
        var cutoff: Int
    }

    /// The reader thread: blocks of whole lines, up to two ahead of the workers.
    final class BlockReader: @unchecked Sendable {
        enum Item { case block(LineBlocks.Block, seconds: Double), end, failed(any Error) }
        private struct Unchecked: @unchecked Sendable { let item: Item }
        private struct Source: @unchecked Sendable { let read: LineBlocks.Read }
        private let pipe = Pipe<Unchecked>(capacity: 2)
        private let stopping = Atomic<Bool>(false)
        private var thread: BackgroundThread!

        /// Buffers of blocks already decoded, for the reader to read into again.
        let buffers = BlockBuffers(limit: 2)

        init(blockBytes: Int, read: @escaping LineBlocks.Read) {
            let source = Source(read: read)
            let buffers = buffers
            thread = BackgroundThread(name: "batch-reader") { [self] in
                var blocks = LineBlocks(blockBytes: blockBytes, buffers: buffers, read: source.read)
                var clock = PhaseClock()
                while !stopping.load(ordering: .relaxed) {
                    do {
                        _ = clock.lap()
                        guard let block = try blocks.next() else { break }
                        pipe.put(Unchecked(item: .block(block, seconds: clock.lap())))
                    } catch {
                        pipe.put(Unchecked(item: .failed(error)))
                        return
                    }
                }
                pipe.put(Unchecked(item: .end))
            }
        }

        /// The next block, the end of the input, or the read's failure.
        func next() -> Item { pipe.take().item }

        /// Stops the reader, which may be blocks ahead. When the input did not end, the reader may
        /// be waiting for input that has not come yet (a pipe whose writer is still running): it
        /// is not waited for; what it hands over from now on is dropped, and it ends once its
        /// current read returns.
        func stop(waiting: Bool) {
            stopping.store(true, ordering: .relaxed)
            if waiting {
                thread.join()
            } else {
                pipe.close()
            }
        }
    }

    /// The output thread: each block's picks in input order, then its rejected lines; it frees
    /// each block's buffers once written. What it did is read after ``finish()``.
    final class OutputThread: @unchecked Sendable {
        private struct Unchecked: @unchecked Sendable { let job: OutputJob? }
        private struct Sinks: @unchecked Sendable {
            let write: ([UnsafeRawBufferPointer]) throws -> Void
            let reject: (LineError) throws -> Void
        }
        private let pipe = Pipe<Unchecked>(capacity: 1)
        private let condition = NSCondition()
        private var completed = 0
        private var error: (any Error)?
        private var thread: BackgroundThread!
        private(set) var picks = 0
        private(set) var rejected = 0
        private(set) var seconds = 0.0

        init(workers: [Worker], write: @escaping ([UnsafeRawBufferPointer]) throws -> Void, reject: @escaping (LineError) throws -> Void) {
            let sinks = Sinks(write: write, reject: reject)
            thread = BackgroundThread(name: "batch-output") { [self] in
                var pieces: [UnsafeRawBufferPointer] = []
                while let job = pipe.take().job {
                    var clock = PhaseClock()
                    if failure == nil {
                        do { try output(job, workers: workers, sinks: sinks, pieces: &pieces) } catch { fail(error) }
                    }
                    for w in workers { w.outs[job.index % 2].removeAll() }
                    job.job.deallocate()
                    seconds += clock.lap()
                    finished(job.index)
                }
            }
        }

        /// Writes one block: the picks in input order, as ranges of the workers' buffers (adjacent
        /// ranges merged), without copying them into one buffer first; then the rejected lines.
        private func output(_ o: OutputJob, workers: [Worker], sinks: Sinks, pieces: inout [UnsafeRawBufferPointer]) throws {
            let job = o.job, parity = o.index % 2
            pieces.removeAll(keepingCapacity: true)
            for i in 0..<o.cutoff {
                guard job.owner[i] >= 0, case .picked = job.slots[i] else { continue }
                let (a, b) = job.spans[i]
                let piece = workers[job.owner[i]].outs[parity].bytes(a..<b)
                if let last = pieces.last, last.baseAddress! + last.count == piece.baseAddress! {
                    pieces[pieces.count - 1] = UnsafeRawBufferPointer(start: last.baseAddress, count: last.count + piece.count)
                } else {
                    pieces.append(piece)
                }
                picks += 1
            }
            if !pieces.isEmpty { try sinks.write(pieces) }
            for i in 0..<min(job.count, o.cutoff + 1) {
                if case let .bad(e) = job.slots[i] {
                    rejected += 1
                    try sinks.reject(e)
                }
            }
        }

        /// Hands a block over (waits while the one before is still queued).
        func submit(_ job: OutputJob) { pipe.put(Unchecked(job: job)) }

        /// Waits until the first `count` blocks are written (or writing failed).
        func waitUntilWritten(count: Int) {
            condition.lock()
            while completed < count && error == nil { condition.wait() }
            condition.unlock()
        }

        /// Lets the thread write what it has, and ends it.
        func finish() {
            pipe.put(Unchecked(job: nil))
            thread.join()
        }

        /// The first error of `write` or `reject`, if any.
        var failure: (any Error)? {
            condition.lock()
            defer { condition.unlock() }
            return error
        }

        private func finished(_ job: Int) {
            condition.lock()
            completed = job + 1
            condition.broadcast()
            condition.unlock()
        }

        private func fail(_ e: any Error) {
            condition.lock()
            if error == nil { error = e }
            condition.broadcast()
            condition.unlock()
        }
    }

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

    /// Writes the touched users' states (and pending pick rows) in transactions of
    /// ``BatchOptions/usersPerTransaction`` users.
    private func commit(_ workers: [Worker], all: Bool) throws {
        var writes: [UserWrite] = []
        var states = 0, picks = false
        for w in workers {
            // States first: a pick row's user may be new to the database (the states are the
            // whole ones, shared with the live states until the workers change them again).
            for box in w.touched.sorted(by: { $0.state.user < $1.state.user }) {
                box.touched = false
                writes.append(.state(box.state))
                states += 1
                box.state.changes = UserState.Changes()
                if states >= options.usersPerTransaction && !picks && w.picks.isEmpty {
                    try store.commit(writes)
                    writes.removeAll(keepingCapacity: true)
                    states = 0
                }
            }
            w.touched.removeAll(keepingCapacity: true)
            for row in w.picks { writes.append(.pick(row, state: nil)) }
            picks = picks || !w.picks.isEmpty
            w.picks.removeAll(keepingCapacity: true)
        }
        try store.commit(writes)
    }
}
