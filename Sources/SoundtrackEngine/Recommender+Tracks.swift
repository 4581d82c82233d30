import Foundation
import SoundtrackCatalog
import SoundtrackContext

extension Recommender {
    // MARK: - Tracks

    /// What a pick plays: the ranked list (best first, by the blended score), the track of the
    /// single pick (the best, or on an exploration draw one of the next best), where it came from,
    /// and the signals that put it there.
    struct TrackChoice {
        var ranked: [String]
        var pick: String
        /// The catalog row of ``pick`` (`nil` when there was no track to pick).
        var pickRow: Int?
        var source: String
        var signals: [Pick.Signal]
    }

    /// Ranks the candidates of a context (``candidateRows(binIndex:state:index:rng:)``) by the
    /// blend (``rankTracks(_:binIndex:similarities:state:rows:)``) and takes the first `count`.
    /// With probability ``EngineConfig/exploration`` the single pick is drawn uniformly among the
    /// ranks 2…``EngineConfig/explorationDepth`` instead (the list itself stays in score order). A
    /// picked track that is not yet a song of the bin joins it, so that feedback on it teaches the bin.
    /// `source` is `bin` (a song of the bin), `taste` (the user's own liked track from another
    /// context), `community` (brought by people with the same taste or the popularity of the
    /// context) or `catalog` (a track that sounds like the bin). With `style` (a session in a rut,
    /// ``rutStyle(at:state:)``) the tracks of that style come after all the others.
    func chooseTracks(
        _ x: FeatureVector, binIndex: Int, count: Int, similarities known: [Float]? = nil, avoiding style: UInt64? = nil, state: inout UserState,
        rng: inout SeededGenerator
    ) -> TrackChoice {
        let index = catalog.index()
        refreshRankingCache(&state, index: index)
        let rows = candidateRows(binIndex: binIndex, attributes: contextAttributes(x, state: state), state: &state, index: index, rng: &rng)
        // The bins' similarities to the context: as the bin choice saw them, but the chosen bin's
        // again, now that it has learned from the context (else all computed now).
        var similarities: [Float]
        if var known {
            state.scoring.sync(bins: state.bins, config: config)
            known[binIndex] = similarity(state.scoring.distance(row: binIndex, x, weights: state.weights))
            similarities = known
        } else {
            similarities = binDistances(x, state: &state).map(similarity)
        }
        let depth = config.exploration > 0 ? max(2, config.explorationDepth) : 1
        // In a rut every candidate's place is needed (the first ones may all be of the style).
        let scored = scoreRows(x, binIndex: binIndex, similarities: similarities, state: &state, rows: rows, first: style == nil ? max(count, depth) : nil)
        guard !rows.isEmpty else { return TrackChoice(ranked: [], pick: "", pickRow: nil, source: "catalog", signals: []) }
        let order = style.map { Self.movingAway(from: $0, order: scored.order, rows: rows, index: index) } ?? scored.order
        var chosen = 0
        if config.exploration > 0, rows.count > 1, Float(rng.unit()) < config.exploration {
            let depth = min(depth, order.count)
            chosen = 1 + Int(rng.next() % UInt64(depth - 1))
        }
        let n = RankerModel.signals.count
        let k = order[chosen]
        let top = (row: rows[k], signals: scored.signals[(k * n)..<(k * n + n)])
        let id = index.id(ofRow: top.row)
        let number = state.bins[binIndex].number
        let source: String
        if state.bins[binIndex].songIndex(id) != nil {
            source = "bin"
        } else {
            let f = top.signals.startIndex
            source = top.signals[f + 1] > 0 ? "taste" : (top.signals[f + 4] > 0 || top.signals[f + 5] > 0 || top.signals[f + 9] > 0) ? "community" : "catalog"
            state.bins[binIndex].songs.append(BinSong(trackId: id))
            state.changes.songs.insert(number)
        }
        let signals = Self.topSignals(top.signals, weights: ranker.weights, names: RankerModel.signals, count: 3)
        return TrackChoice(
            ranked: order.prefix(count).map { index.id(ofRow: rows[$0]) }, pick: id, pickRow: top.row, source: source, signals: signals)
    }

    /// The context's attributes (``ContextAttributes``) when there is a community to count them in, else none.
    func contextAttributes(_ x: FeatureVector, state: UserState) -> [UInt64] {
        guard let community, community.read({ $0.version }) > 0 else { return [] }
        return ContextAttributes.of(x, vocabulary: state.vocabulary)
    }

    /// The signals that put a track first, for a pick's `track_why`: the `count` largest positive
    /// contributions `weights[j] · features[j]`, largest first (ties by name), selected in a stack
    /// buffer instead of sorting them all.
    static func topSignals(_ features: ArraySlice<Float>, weights: [Float], names: [String], count: Int) -> [Pick.Signal] {
        guard count > 0, !names.isEmpty else { return [] }
        return TopK<(j: Int, c: Float)>.best(
            capacity: min(count, names.count),
            { best in
                for j in names.indices {
                    let c = weights[j] * features[features.startIndex + j]
                    guard c > 0 else { continue }
                    best.offer((j, c)) { a, b in a.c != b.c ? a.c > b.c : names[a.j] < names[b.j] }
                }
            }
        ) { Pick.Signal(name: names[$0.j], contribution: $0.c) }
    }

    /// The pick's alternatives: the best-ranked bins other than `chosen`, each with its best tracks.
    func alternatives(_ ranking: [RankedBin], besides chosen: Int, state: inout UserState) -> [Pick.Alternative] {
        var out: [Pick.Alternative] = []
        out.reserveCapacity(config.alternatives)
        for rb in ranking where rb.bin != chosen {
            guard out.count < config.alternatives else { break }
            guard let i = state.binIndex(number: rb.bin) else { continue }
            out.append(
                Pick.Alternative(
                    bin: .init(id: Bin.id(rb.bin), label: state.bins[i].label, score: rb.score, created: false),
                    tracks: topTracks(ofBin: i, count: config.tracksPerAlternative, state: &state)))
        }
        return out
    }

    /// A bin's best tracks by mean like rate `(likes+1)/(likes+dislikes+2)`, earlier songs first on ties,
    /// for a pick's alternatives.
    func topTracks(ofBin binIndex: Int, count: Int, state: inout UserState) -> [String] {
        guard count > 0 else { return [] }
        // Read first: a mutating access to a bin of a state that shares its bins (the copies that
        // `--read-only` picks from) would copy every bin even when the order is already known.
        if state.bins[binIndex].rateOrder == nil { state.bins[binIndex].orderSongsByRate() }
        let window = config.repeatWindow
        return state.bins.withUnsafeBufferPointer { bins in
            var out: [String] = []
            out.reserveCapacity(count)
            bins[binIndex].songs.withUnsafeBufferPointer { songs in
                for i in bins[binIndex].rateOrder! where !state.isRecent(songs[Int(i)], window: window) {
                    out.append(songs[Int(i)].trackId)
                    if out.count == count { break }
                }
            }
            return out
        }
    }

}
