import Foundation
import SoundtrackCatalog
import SoundtrackContext

extension Recommender {
    /// Applies a feedback event (``feedback(_:pick:state:)``); when it is a like and the sampling
    /// admits its place in the log (``BlendExampleSampling``), also makes the query it teaches the
    /// blend (``BlendExample``): what every front end does with an event.
    ///
    /// The query is made once the event's context and bin are found (the pick's bin, else the bin
    /// chosen for its snapshot) and before the event changes the bin's songs or anything learns
    /// from it: the liked track is ranked among the other candidates a pick for that bin would
    /// rank (``candidateRows(binIndex:attributes:state:index:rng:)``), less the tracks this listening
    /// session's feedback was about (``SessionState/tracks``: a pick does not play again what was
    /// just played), past ``BlendExample/maxOthers`` a seeded sample of them. Tracks the user rated
    /// in earlier sessions stay among them: a pick may play them again, and whether it should is
    /// what the blend learns from the user's own evidence. Making it changes nothing the event does.
    /// - Parameter position: the event's place in the feedback log (1 for the first); `nil`: no query.
    public func feedback(
        _ event: FeedbackEvent, pick: PickRecord?, state: inout UserState, position: Int64?
    ) -> (outcome: FeedbackOutcome, example: BlendExample?) {
        let admitted = position.map { BlendExampleSampling.admits(position: $0, eventId: event.id) } ?? false
        return apply(event, pick: pick, state: &state, teach: admitted)
    }

    /// The query of a liked track in context `x`, bin `binIndex`, from `state` as it is (its ranking
    /// cache is brought up to date, as a pick's is); `nil` when the track is not in the catalog or
    /// there is nothing to rank it against.
    func blendExample(liked track: String, x: FeatureVector, binIndex: Int, eventId: String, state: inout UserState) -> BlendExample? {
        let index = catalog.index()
        guard let liked = index.row(of: track) else { return nil }
        refreshRankingCache(&state, index: index)
        var rng = SeededGenerator(seed: seed ^ StableHash.fnv1a(eventId), user: state.user, counter: -2)
        // The tracks this session's feedback was about are left out, as a pick leaves out what was just played.
        let played = Set(state.session.tracks.compactMap { index.row(of: $0) })
        var others = candidateRows(binIndex: binIndex, attributes: contextAttributes(x, state: state), state: &state, index: index, rng: &rng)
            .filter { $0 != liked && !played.contains($0) }
        guard !others.isEmpty else { return nil }
        if others.count > BlendExample.maxOthers {
            others.shuffle(using: &rng)
            others = others.prefix(BlendExample.maxOthers).sorted()
        }
        let similarities = binDistances(x, state: &state).map(similarity)
        let scored = scoreRows(x, binIndex: binIndex, similarities: similarities, state: &state, rows: [liked] + others)
        return BlendExample(user: state.user, signals: scored.signals)
    }
}
