import Foundation
import SoundtrackContext

/// Which liked feedback events teach the blend a query (``Recommender/feedback(_:pick:state:position:)``):
/// every one of the first ``dense`` events of the log, then a share `dense / position` of them,
/// chosen by a hash of the event's id. The queries then cost about `dense · (1 + ln(n / dense))`
/// rankings over a log of `n` events instead of one an event, and the newest stay as dense as a
/// fit needs (docs/scoring.md, "Learning the blend").
///
/// The choice depends only on the event's id and its position, so a replay killed and run again
/// makes the same queries.
public enum BlendExampleSampling {
    /// The log's first events that all teach a query.
    public static let dense: Int64 = 1_000

    /// Whether the event at `position` of the log (1 for the first) teaches a query.
    public static func admits(position: Int64, eventId: String) -> Bool {
        guard position > dense else { return true }
        return StableHash.fnv1a(eventId) % UInt64(position / dense) == 0
    }
}
