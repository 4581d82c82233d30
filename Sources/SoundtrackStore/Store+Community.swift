import Foundation
import GRDB
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

extension Store {
    /// The ``Community`` model of what all users taught, rebuilt from the feedback log: every applied
    /// event in the order it was applied (row order), its track by its row in the catalog index (the
    /// same index, and so the same rows, as the engine's), like or dislike as the event's signal says
    /// (``FeedbackEvent/isLike``, ``FeedbackEvent/isDislike``), and the context attributes of the
    /// event's pick (its stored features, named through the user's vocabulary). An event without a
    /// pick counts in likes and co-likes but in no context. Events of tracks no longer in the
    /// catalog are skipped.
    ///
    /// A process that ranks tracks (pick, batch, serve) rebuilds the model once when it opens the
    /// database; the engine then records every event it applies (docs/scoring.md, "Ranking tracks").
    /// - Throws: ``StoreError`` for a user row whose vocabulary does not read; database errors.
    public func rebuildCommunity() throws -> Community {
        try database.read { db in
            let index = try catalogIndex.get { CatalogIndex(tracks: try Self.indexTracks(db)) }
            var community = Community()
            var vocabularies: [String: FeatureVocabulary] = [:]
            let rows = try RawStatement(
                db,
                """
                SELECT f.user_id, f.track_id, f.signal, f.rating, p.features, p.mask, u.rowid, u.place_names, u.tag_names
                FROM feedback f JOIN users u ON u.id = f.user_id LEFT JOIN picks p ON p.id = f.pick_id
                ORDER BY f.rowid
                """)
            while try rows.step() {
                guard let row = index.row(of: rows.text(1)), let signal = Signal(rawValue: rows.text(2)) else { continue }
                let rating: Int? = rows.isNull(3) ? nil : rows.int(3)
                let like = signal.isLike(rating: rating), dislike = signal.isDislike(rating: rating)
                let user = rows.text(0)
                var attributes: [UInt64] = []
                if !rows.isNull(4), !rows.isNull(5) {
                    let values = rows.floats(4)
                    if values.count == FeatureLayout.dimension, let mask = VectorCoding.decode(mask: rows.bytes(5), count: values.count) {
                        let vocabulary: FeatureVocabulary
                        if let v = vocabularies[user] {
                            vocabulary = v
                        } else {
                            vocabulary = try Self.decodeUserLists(
                                row: rows.int64(6), placeNames: rows.text(7), tagNames: rows.text(8), mergedInto: "[]"
                            ).0
                            vocabularies[user] = vocabulary
                        }
                        attributes = ContextAttributes.of(FeatureVector(values: values, mask: mask), vocabulary: vocabulary)
                    }
                }
                community.record(user: user, row: row, like: like, dislike: dislike, attributes: attributes)
            }
            return community
        }
    }
}
