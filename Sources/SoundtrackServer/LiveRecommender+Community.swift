import SoundtrackEngine
import SoundtrackStore

/// The community model after a forget: counted again from the store, and swapped in.
extension LiveRecommender {
    /// The community model the service ranks with (`nil`: it ranks without one).
    var community: SharedCommunity? { rules.engine.community as? SharedCommunity }

    /// Counts the community model again from the feedback log and swaps it in, when the store has
    /// forgotten someone since the model in memory was counted (this service's forget, or another
    /// process's): the model loaded at start and the events counted since still count the
    /// forgotten person's events, which shaped everyone's collaborative and popularity signals.
    /// The forget already deleted the person's feedback, so the log counted again holds nothing of
    /// theirs: the new model is the one a process opening the database now rebuilds.
    ///
    /// Picks go on with the old model meanwhile. Events applied meanwhile are recorded in both:
    /// the old model, and a journal that is recorded into the new one for those it was not
    /// counted from (``SharedCommunity/replace(with:forgotten:counted:)``). Every event recorded
    /// before the journal began is committed first (``waitForStagedEvents(stop:)``), so the count
    /// has it; those recorded after are told apart by id. A forget during the count starts it all
    /// over (journal, wait, count).
    /// - Parameters:
    ///   - slice: how many feedback rows each read transaction of the count reads.
    ///   - stop: asked between steps; when it says so the count is given up.
    /// One count runs at a time: a call while another counts returns `false` at once (the model has
    /// one journal, which two counts would end for each other, losing the events between).
    /// - Returns: whether the model was replaced.
    /// - Throws: database errors (the model in memory stays, and the next call tries again).
    @discardableResult
    func recountCommunityIfForgotten(slice: Int = 2_000, stop: () -> Bool = { false }) throws -> Bool {
        guard let community else { return false }
        let began = communityRecounting.withLock { busy in
            defer { busy = true }
            return !busy
        }
        guard began else { return false }
        defer { communityRecounting.withLock { $0 = false } }
        while true {
            let forgotten = try store.forgottenCount()
            guard forgotten != community.forgotten else { return false }
            // Read before the journal begins: every event the journal gets has a later row.
            let newest = try store.feedbackLogSize()
            community.beginJournal()
            var replaced = false
            defer { if !replaced { community.endJournal() } }
            guard waitForStagedEvents(stop: stop), let (model, ids) = try store.recountCommunity(idsAfter: newest, slice: slice, stop: stop) else {
                return false
            }
            // Someone else forgotten meanwhile: rows counted may be theirs. Counted again, from the start.
            guard try store.forgottenCount() == forgotten else { continue }
            community.replace(with: consume model, forgotten: forgotten, counted: ids.contains)
            replaced = true
            return true
        }
    }
}
