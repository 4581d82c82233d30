import SoundtrackStore

/// Copies the write-ahead log into the database file on a thread of its own, while the next
/// block is written to the log.
///
/// A block's commit appends its pages to the log and waits for the log to reach the disk; by
/// default SQLite then also copies the log into the database file and waits for the file to reach
/// the disk, inside the same commit (a second write of every page and a second `fdatasync`, on the
/// commit thread: for 10,000 users, 312 MB of pages a block). Here that copy (a passive checkpoint)
/// runs on the ``BackgroundThread`` `replay-ckpt`, at most one at a time, started after each commit.
///
/// SQLite writes the log from its start again only when a transaction begins after a checkpoint
/// has copied all of it. A checkpoint that overlaps the next commit cannot, so the log grows;
/// once a checkpoint has found it longer than `limitPages`, the commit thread waits for the
/// checkpoint it has just started (which copies everything committed), and the next block starts
/// the log over. The log stays below about `limitPages` plus two blocks.
///
/// Nothing here decides what is durable: commits still wait for the log to reach the disk, and a
/// checkpoint that fails (or is killed) leaves its frames in the log, which SQLite copies at the
/// next checkpoint or when the last connection closes.
final class LogCheckpoints: @unchecked Sendable {
    private let requests = Pipe<Bool>(capacity: 1)
    private let results = Pipe<(logFrames: Int, copiedFrames: Int)?>(capacity: 1)
    private let thread: BackgroundThread
    private let limitPages: Int
    /// Only the commit thread reads and writes these.
    private var inFlight = false
    private var logPages = 0

    /// Starts the checkpoint thread.
    /// - Parameters:
    ///   - checkpointer: a connection of its own to the database file.
    ///   - limitPages: the log's length, in pages, past which a commit waits for a whole checkpoint.
    init(checkpointer: WALCheckpointer, limitPages: Int) {
        self.limitPages = max(1, limitPages)
        let requests = self.requests, results = self.results
        thread = BackgroundThread(name: "replay-ckpt") {
            while requests.take() {
                // `nil`: busy (another process checkpointing) or failed; the frames stay in the log.
                results.put(try? checkpointer.checkpoint(.passive))
            }
        }
    }

    /// Called by the commit thread after each commit: starts a checkpoint of what is committed,
    /// first waiting for the one before (usually finished long since); waits for the new one too
    /// when the log has grown past the limit.
    func afterCommit() {
        if inFlight { finish() }
        requests.put(true)
        inFlight = true
        if logPages >= limitPages, finish() {
            // All of the log is in the file: the next transaction writes the log from its start.
            logPages = 0
        }
    }

    /// Waits for the checkpoint in flight, if any, and ends the thread.
    func stop() {
        if inFlight { finish() }
        requests.put(false)
        thread.join()
    }

    /// Waits for the checkpoint in flight and notes the log's length.
    /// - Returns: whether it copied the whole log.
    @discardableResult
    private func finish() -> Bool {
        inFlight = false
        guard let r = results.take() else { return false }
        logPages = r.logFrames
        return r.copiedFrames == r.logFrames
    }
}
