import Foundation
import SoundtrackCatalog
import SoundtrackContext

/// What one feedback event did.
public struct FeedbackOutcome: Sendable, Equatable {
    /// The bin the event was about (its number).
    public var bin: Int
    /// The signal applied.
    public var signal: Signal
    /// The track joined the bin with this event.
    public var joinedBin: Bool
    /// Dislikes in a row after the event (0 after a like or a switch).
    public var dislikeStreak: Int
    /// The bin switched to when this event completed a dislike streak.
    public var switchedTo: Int?
    /// A bin made for the event's context (a snapshot no bin fitted, or a switch with nowhere to go).
    public var createdBin: Int?
    /// The event's context as all users share it (``ContextAttributes``): what the community counted
    /// it in.
    public var attributes: [UInt64] = []
}

extension Recommender {
    /// Applies one feedback event to the user's state.
    ///
    /// like/complete: the track stays and joins the bin, the centroid moves toward the context,
    /// weights learn from the slots that agreed. dislike/skip: the streak grows, weights learn the
    /// other way; the `dislikeStreakSwitch`-th in a row pushes the bin away from the context and
    /// switches the session to the next-best bin (a new one when there is none).
    ///
    /// Idempotency (by event id) is the store's job: it must not call this twice for one id.
    /// - Parameters:
    ///   - event: the validated event; its user must be `state.user`.
    ///   - pick: the record of the pick the event names (`pick_id`), if it does.
    ///   - state: the user's state, changed in place.
    ///
    /// The event must be one the rules accepted (``Rules``, docs/formats.md "Rules"), or a parsed
    /// log's (`LabelledLog`, which checks the same): its track in the catalog, and a context (a
    /// snapshot, or a pick whose bin the state still has). The engine does not judge events again;
    /// it stops on one that breaks these (a programming error, not bad input).
    public func feedback(_ event: FeedbackEvent, pick: PickRecord?, state: inout UserState) -> FeedbackOutcome {
        apply(event, pick: pick, state: &state, teach: false).outcome
    }

    /// ``feedback(_:pick:state:)``, and when `teach` is set and the event is a like, the query it
    /// teaches the blend (``blendExample(liked:x:binIndex:eventId:state:)``), made once the event's
    /// bin is chosen and before the event changes the bin's songs, as a pick there would rank.
    func apply(
        _ event: FeedbackEvent, pick: PickRecord?, state: inout UserState, teach: Bool
    ) -> (outcome: FeedbackOutcome, example: BlendExample?) {
        precondition(event.user == state.user, "event of another user")
        assert(catalog.track(id: event.track) != nil, "an event of a track the catalog lacks: the rules refuse it (unknownTrack)")
        let at = event.at.date
        var rng = SeededGenerator(seed: seed ^ StableHash.fnv1a(event.id), user: state.user, counter: -1)
        beginSession(at: at, state: &state)

        var x: FeatureVector
        var ranking: [RankedBin]
        var binIndex: Int
        var created: Int?
        if let pick, let n = state.resolve(bin: pick.binNumber), let i = state.binIndex(number: n) {
            // The pick's bin, or the bin it was merged into since; a like teaches the volume it
            // reports (docs/scoring.md, "Volume"), not the pick's (a dislike streak pushes the bin
            // away from the pick's context, not from the volume the person chose).
            x = pick.features
            if event.isLike, let volume = event.snapshot?.audio?.volume { x.set(FeatureLayout.volumeSlot, Float(volume)) }
            ranking = pick.ranking
            binIndex = i
        } else if let snapshot = event.snapshot {
            x = features(of: snapshot, state: &state)
            let choice = chooseBin(x, at: at, state: &state, rng: &rng)
            ranking = choice.ranking
            binIndex = choice.index
            if choice.created { created = state.bins[binIndex].number }
        } else {
            preconditionFailure("an event without a context (no snapshot, no pick whose bin exists): the rules refuse it (noContext, pickBinGone)")
        }

        let example = teach && event.isLike ? blendExample(liked: event.track, x: x, binIndex: binIndex, eventId: event.id, state: &state) : nil
        let number = state.bins[binIndex].number
        var outcome = FeedbackOutcome(bin: number, signal: event.signal, joinedBin: false, dislikeStreak: 0, switchedTo: nil, createdBin: created)
        if state.session.currentBin != number {
            state.session.dislikeStreak = 0
        }
        state.session.currentBin = number
        state.session.lastAt = at

        if event.signal == .rate {
            // Ratings are upserted per user, track and bin: an earlier rating of the track here
            // stops counting, the new one counts instead.
            if let s = state.bins[binIndex].songIndex(event.track) {
                let old = state.bins[binIndex].songs[s].rating
                if old >= 4 { state.bins[binIndex].songs[s].likes -= 1 }
                if old >= 1 && old <= 2 { state.bins[binIndex].songs[s].dislikes -= 1 }
                state.bins[binIndex].songs[s].rating = event.rating ?? 0
            } else {
                state.bins[binIndex].songs.append(BinSong(trackId: event.track, rating: event.rating ?? 0))
                outcome.joinedBin = true
            }
            state.changes.songs.insert(number)
        }
        if event.isLike {
            if let s = state.bins[binIndex].songIndex(event.track) {
                state.bins[binIndex].songs[s].likes += 1
            } else {
                state.bins[binIndex].songs.append(BinSong(trackId: event.track, likes: 1))
                outcome.joinedBin = true
            }
            state.changes.songs.insert(number)
            addNeighbours(of: event.track, binIndex: binIndex, state: &state)
            learnWeights(x, binIndex: binIndex, positive: true, state: &state)
            pull(binIndex: binIndex, toward: x, at: at, state: &state)
            state.session.dislikeStreak = 0
            state.session.styleRun = nil
        } else if event.isDislike {
            if let s = state.bins[binIndex].songIndex(event.track) {
                state.bins[binIndex].songs[s].dislikes += 1
                state.changes.songs.insert(number)
            }
            learnWeights(x, binIndex: binIndex, positive: false, state: &state)
            state.session.dislikeStreak += 1
            if state.session.dislikeStreak >= config.dislikeStreakSwitch {
                push(binIndex: binIndex, awayFrom: x, at: at, state: &state)
                if !state.session.avoided.contains(number) { state.session.avoided.append(number) }
                let avoided = Set(state.session.avoided)
                var target = ranking.compactMap { state.resolve(bin: $0.bin) }
                    .first { !avoided.contains($0) && $0 != number }
                if target == nil {
                    // Nowhere to go: a fresh bin for this context, without the songs just disliked.
                    let i = makeBin(x, at: at, nearest: nil, state: &state, rng: &rng)
                    target = state.bins[i].number
                    outcome.createdBin = target
                }
                state.session.switchedTo = target
                state.session.currentBin = target
                state.session.dislikeStreak = 0
                outcome.switchedTo = target
            }
        }
        // A rating of 3 is neither: it is kept with the song (above) and changes nothing else.
        state.evidenceVersion &+= 1
        // The context as all users share it: what the community counts the event in, and what the
        // event's row keeps so that a model kept in a store can count it again (docs/scoring.md).
        outcome.attributes = ContextAttributes.of(x, vocabulary: state.vocabulary)
        if let community, let row = catalog.index().row(of: event.track) {
            community.record(event: event.id, user: state.user, row: row, like: event.isLike, dislike: event.isDislike, attributes: outcome.attributes)
        }
        outcome.dislikeStreak = state.session.dislikeStreak
        state.session.remember(track: event.track)
        return (outcome, example)
    }

    /// A like teaches the bin more than one song: the liked track's ``EngineConfig/likeNeighbours``
    /// nearest catalog tracks (sound and genres, the search the candidates use) join the bin's songs
    /// without evidence of their own, those already there left as they are. A track with neither
    /// sound nor genres has no neighbours.
    func addNeighbours(of track: String, binIndex: Int, state: inout UserState) {
        guard config.likeNeighbours > 0 else { return }
        let index = catalog.index()
        guard let row = index.row(of: track), index.profiles[row].mask.sum() > 0 || !index.genreNumbers(ofRow: row).isEmpty else { return }
        let near = soundCache.neighbours(ofRow: row, index: index) { index.similar(toTrack: row, k: SoundCache.trackNeighbours).map(\.row) }
        var added = false
        for r in near.prefix(config.likeNeighbours) {
            let id = index.id(ofRow: r)
            guard state.bins[binIndex].songIndex(id) == nil else { continue }
            state.bins[binIndex].songs.append(BinSong(trackId: id))
            added = true
        }
        if added { state.changes.songs.insert(state.bins[binIndex].number) }
    }

    /// Moves a bin's centroid toward a liked context and updates its spread and presence frequencies
    /// (on top of the move every served snapshot makes: feedback weighs more than a silent pick).
    ///
    /// The rate is `max(learningRate, 1/(n+1))`, and per slot at least `1 − observed` so that a
    /// slot the bin has never seen takes the context's value at once.
    func pull(binIndex: Int, toward x: FeatureVector, at: Date, state: inout UserState) {
        let d = FeatureLayout.dimension
        let eta = max(config.learningRate, 1 / Float(state.bins[binIndex].observations + 1))
        // In place: a copy of the bin (and of its three vectors) per liked event was most of the cost.
        state.bins[binIndex].updateVectors { centroid, spread, observed in
            x.values.withUnsafeBufferPointer { xv in
                x.mask.withUnsafeBufferPointer { xm in
                    for i in 0..<d {
                        if xm[i] > 0 {
                            let rate = max(eta, 1 - observed[i])
                            let delta = xv[i] - centroid[i]
                            centroid[i] += rate * delta
                            let s2 = (1 - rate) * spread[i] * spread[i] + rate * delta * delta
                            spread[i] = max(0.02, s2.squareRoot())
                            observed[i] += eta * (1 - observed[i])
                        } else {
                            observed[i] -= eta * observed[i]
                        }
                    }
                }
            }
        }
        if at > state.bins[binIndex].updatedAt { state.bins[binIndex].updatedAt = at }
        relabel(binIndex: binIndex, state: &state)
        state.changes.bins.insert(state.bins[binIndex].number)
    }

    /// Weakens a bin's association with a context: the centroid moves away and the spread widens.
    func push(binIndex: Int, awayFrom x: FeatureVector, at: Date, state: inout UserState) {
        var bin = state.bins[binIndex]
        let rate = config.learningRate / 2
        var centroid = bin.centroid, spread = bin.spread
        for i in 0..<FeatureLayout.dimension where x.mask[i] > 0 && bin.observed[i] > 0 {
            let delta = x.values[i] - centroid[i]
            centroid[i] = min(1.5, max(-1.5, centroid[i] - rate * delta))
            spread[i] = (spread[i] * spread[i] + rate * max(delta * delta, config.initialSpread * config.initialSpread)).squareRoot()
        }
        bin.setVectors(centroid: centroid, spread: spread, observed: bin.observed)
        bin.updatedAt = at
        state.bins[binIndex] = bin
        state.changes.bins.insert(bin.number)
    }

    /// Multiplicative per-user weight update: slots that agreed with the bin gain weight after a
    /// like and lose it after a dislike, relative to the mean agreement; the total is kept.
    func learnWeights(_ x: FeatureVector, binIndex: Int, positive: Bool, state: inout UserState) {
        let d = FeatureLayout.dimension
        let sign: Float = positive ? 1 : -1
        let rate = config.weightLearningRate, range = config.weightRange
        // Through buffers, and the weights changed in place: the bin was copied (retaining its
        // arrays), the agreements collected in a new array and the weights copied, per event.
        let changed = withUnsafeTemporaryAllocation(of: (Int, Float).self, capacity: d) { agreement -> Bool in
            var count = 0
            var sum: Float = 0
            state.bins.withUnsafeBufferPointer { bins in
                bins[binIndex].centroid.withUnsafeBufferPointer { c in
                    bins[binIndex].observed.withUnsafeBufferPointer { ob in
                        for i in 0..<d where x.mask[i] > 0 && ob[i] > 0.05 {
                            let a = 1 - min(1, abs(x.values[i] - c[i]))
                            agreement[count] = (i, a)
                            count += 1
                            sum += a
                        }
                    }
                }
            }
            guard count > 1 else { return false }
            let mean = sum / Float(count)
            state.weights.withUnsafeMutableBufferPointer { w in
                let total = w.reduce(0, +)
                for (i, a) in agreement[0..<count] where w[i] > 0 {
                    w[i] *= Float(exp(Double(sign * rate * (a - mean))))
                    w[i] = min(range.upperBound, max(range.lowerBound, w[i]))
                }
                let newTotal = w.reduce(0, +)
                if newTotal > 0 {
                    let k = total / newTotal
                    // A slot the model weighs 0 (the day of the week) stays out of scoring.
                    for i in w.indices where w[i] > 0 { w[i] = min(range.upperBound, max(range.lowerBound, w[i] * k)) }
                }
            }
            return true
        }
        if changed { state.changes.weights = true }
    }
}
