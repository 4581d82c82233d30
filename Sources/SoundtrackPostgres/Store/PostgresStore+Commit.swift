import Foundation
import PostgresNIO
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackStore

extension PostgresStore {
    /// Commits writes in one transaction holding the locks of every person they name, in order
    /// (``PersonStore/commit(_:)``; each ``UserWrite`` as the SQLite store writes it). A feedback
    /// row's id is inserted into `event_ids` with its row: an id committed already fails the commit.
    public func commit(_ writes: [UserWrite]) throws {
        guard !writes.isEmpty else { return }
        try transaction(locking: writes.flatMap(\.users)) { tx in try Self.commit(writes, tx) }
    }

    static func commit(_ writes: [UserWrite], _ tx: PostgresTransaction) throws {
        var staging = StateStaging(writes)
        func stage(_ state: UserState, at i: Int, deleteCovered: Bool = true) throws {
            guard let due = staging.stage(state, at: i, deleteCovered: deleteCovered) else { return }
            try saveState(tx, due.state, deleteCovered: due.deleteCovered)
        }
        for (i, w) in writes.enumerated() {
            switch w {
            case let .addUser(user, at):
                try tx.execute("INSERT INTO users (user_id, created_at) VALUES (\(user), \(StoredForm.timestamp(at)))")
                try tx.execute("INSERT INTO user_settings (user_id) VALUES (\(user))")
            case let .pick(row, state):
                try insertPick(tx, row.record, seq: row.seq)
                if let state { try stage(state, at: i) }
            case let .feedback(row, state):
                try insertFeedback(tx, row)
                if let state { try stage(state, at: i) }
            case let .pendingFeedback(row, event):
                try insertFeedback(tx, row)
                try tx.execute(
                    """
                    INSERT INTO pending_events (user_id, applied_seq, event)
                    VALUES (\(row.event.user), \(row.seq), \(String(decoding: event.utf8, as: UTF8.self)))
                    """)
            case let .feedbackRows(rows):
                for row in rows { try insertFeedback(tx, row) }
            case let .state(state):
                try stage(state, at: i)
            case let .view(state):
                try stage(state, at: i, deleteCovered: false)
            case let .prunePending(limit):
                try tx.execute(
                    """
                    DELETE FROM pending_events WHERE (user_id, id) IN (
                        SELECT p.user_id, p.id FROM pending_events p JOIN users u ON u.user_id = p.user_id
                        WHERE p.applied_seq <= u.view_seq ORDER BY p.id LIMIT \(Int64(limit)))
                    """)
            case let .forget(user):
                try deletePerson(tx, user)
            case let .settings(user, settings, scrub):
                try writeSettings(tx, user: user, settings, scrubLocation: scrub)
            }
        }
    }

    /// Inserts a pick's row (vectors, mask and ranking in the SQLite store's bytes, ``StoredForm``).
    static func insertPick(_ tx: PostgresTransaction, _ r: PickRecord, seq: Int64) throws {
        try tx.execute(
            """
            INSERT INTO picks (user_id, id, seq, at, bin_number, track_id, layout_version, features, mask, ranking)
            VALUES (\(r.user), \(r.pickId), \(seq), \(r.at.timeIntervalSince1970), \(Int64(r.binNumber)), \(r.trackId),
                \(Int64(FeatureLayout.version)), \(bytes(StoredForm.vector(r.features.values))), \(bytes(StoredForm.mask(r.features.mask))),
                \(bytes(StoredForm.ranking(r.ranking))))
            """)
    }

    /// Inserts a feedback row, its id's owner in `event_ids` first (the id's uniqueness across
    /// people), and the query it taught the blend, if any.
    static func insertFeedback(_ tx: PostgresTransaction, _ row: FeedbackRow) throws {
        let e = row.event
        try tx.execute("INSERT INTO event_ids (id, user_id) VALUES (\(e.id), \(e.user))")
        let snapshot = row.keepSnapshot ? e.snapshot?.json().serialized() : nil
        try tx.execute(
            """
            INSERT INTO feedback (user_id, id, at, track_id, signal, played_ms, pick_id, bin_number, switched_to, snapshot, applied_seq,
                rating, context)
            VALUES (\(e.user), \(e.id), \(e.at.date.timeIntervalSince1970), \(e.track), \(e.signal.rawValue), \(e.playedMs.map(Int64.init)),
                \(e.pickId), \(Int64(row.outcome.bin)), \(row.outcome.switchedTo.map(Int64.init)), \(snapshot), \(row.seq),
                \(e.rating.map(Int64.init)), \(bytes(StoredForm.attributes(row.outcome.attributes))))
            """)
        if let example = row.example {
            try tx.execute(
                """
                INSERT INTO blend_examples (user_id, applied_seq, width, signals)
                VALUES (\(example.user), \(row.seq), \(Int64(RankerModel.signals.count)), \(bytes(StoredForm.vector(example.signals))))
                """)
        }
    }

    /// Bytes as a `bytea` parameter.
    static func bytes(_ b: [UInt8]) -> ByteBuffer { ByteBuffer(bytes: b) }

    /// Text a store wrote as UTF-8 bytes.
    static func text(_ b: [UInt8]) -> String { String(decoding: b, as: UTF8.self) }
}
