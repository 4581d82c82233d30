import Foundation
import SoundtrackCatalog
import SoundtrackContext

/// The engine's facade: a snapshot becomes a pick, a feedback event changes bins.
///
/// The recommender is a value without hidden state: everything it learns goes into the
/// ``UserState`` passed in, and every random choice is drawn from a ``SeededGenerator``
/// derived from `seed`, the user and a counter, so that the same inputs always give the
/// same picks.
///
/// ```swift
/// let engine = Recommender(config: EngineConfig(), catalog: IndexCatalog(index), priors: priors, seed: 42)
/// var state = engine.newUser("u-1")
/// let (pick, record) = engine.pick(snapshot, state: &state)
/// let outcome = try engine.feedback(event, pick: record, state: &state)
/// ```
public struct Recommender: Sendable {
    /// Thresholds and rates.
    public let config: EngineConfig
    /// Track metadata and the similarity index.
    public let catalog: any CatalogSource
    /// Cold-start priors for new bins.
    public let priors: ColdStartPriors
    /// The seed every random choice derives from.
    public let seed: UInt64
    /// Snapshot → feature vector.
    public let extractor: FeatureExtractor
    /// The blend of the track ranker.
    public let ranker: RankerModel
    /// What all users taught the engine (collaborative and popularity signals); `nil`: none.
    public let community: (any CommunitySource)?
    /// Catalog tracks that sound like each cold-start prior, shared by the engine's copies (``with(catalog:)``…).
    let soundCache: SoundCache

    /// Creates a recommender.
    public init(
        config: EngineConfig, catalog: any CatalogSource, priors: ColdStartPriors, seed: UInt64 = 0,
        extractor: FeatureExtractor = FeatureExtractor(), ranker: RankerModel = BundledModels.ranker(),
        community: (any CommunitySource)? = nil
    ) {
        self.init(config: config, catalog: catalog, priors: priors, seed: seed, extractor: extractor, ranker: ranker, community: community, soundCache: SoundCache())
    }

    init(
        config: EngineConfig, catalog: any CatalogSource, priors: ColdStartPriors, seed: UInt64, extractor: FeatureExtractor,
        ranker: RankerModel, community: (any CommunitySource)?, soundCache: SoundCache
    ) {
        self.soundCache = soundCache
        self.config = config
        self.catalog = catalog
        self.priors = priors
        self.seed = seed
        self.extractor = extractor
        self.ranker = ranker
        self.community = community
    }

    /// The state of a user the engine has never seen: no bins, default weights.
    public func newUser(_ user: String) -> UserState {
        UserState(
            user: user, bins: [], weights: config.defaultWeights, places: PlaceBook(), session: SessionState(),
            recentTracks: [], pickCounter: 0, nextBinNumber: 1, vocabulary: FeatureVocabulary())
    }

    // MARK: - Snapshot → pick

    /// Picks a track for a snapshot, creating a bin when none fits; the chosen bin learns from
    /// the snapshot (``serve(binIndex:x:at:state:)``); updates the session and recent tracks.
    ///
    /// - Parameters:
    ///   - snapshot: the validated snapshot (its user must be `state.user`).
    ///   - state: the user's state; changed in place (see ``UserState/changes``).
    ///   - top: how many tracks to rank (`--top K`); the pick's track is the first.
    ///   - pickId: the pick's id; `nil` derives it from the seed, the user and the pick counter
    ///     (``pickId(seed:user:counter:)``), stable across runs. The HTTP service passes ids that
    ///     increase with time, so that its index of picks grows at one end.
    /// - Returns: the pick to answer with, and the record to keep for feedback.
    public func pick(_ snapshot: Snapshot, state: inout UserState, top: Int = 1, pickId: String? = nil) -> (pick: Pick, record: PickRecord) {
        precondition(snapshot.user == state.user, "snapshot of another user")
        let at = snapshot.at.date
        var rng = SeededGenerator(seed: seed, user: state.user, counter: state.pickCounter)
        let x = features(of: snapshot, state: &state)
        beginSession(at: at, state: &state)
        let sessionBin = state.session.currentBin

        let choice = chooseBin(x, at: at, state: &state, rng: &rng)
        let binIdx = choice.index
        let tracks = chooseTracks(
            x, binIndex: binIdx, count: max(1, top), similarities: choice.similarities, avoiding: rutStyle(at: at, state: state), state: &state, rng: &rng)
        let trackIds = tracks.ranked
        let source = tracks.source

        let alternatives = self.alternatives(choice.ranking, besides: state.bins[binIdx].number, state: &state)
        let why = explain(binIndex: binIdx, x: x, state: &state)

        let counter = state.pickCounter
        let pickId = pickId ?? Self.pickId(seed: seed, user: state.user, counter: counter)
        let chosenTrack = tracks.pick
        state.pickCounter += 1
        state.changes.counters = true
        remember(track: chosenTrack, state: &state)
        continueRun(row: tracks.pickRow, at: at, state: &state)
        let number = state.bins[binIdx].number
        if state.session.currentBin != number { state.session.dislikeStreak = 0 }
        state.session.currentBin = number
        state.session.lastAt = at

        let summaries = trackIds.map { id in
            let meta = catalog.track(id: id)
            return Pick.TrackSummary(id: id, title: meta?.title ?? "", artist: meta?.artist ?? "")
        }
        let meta = catalog.track(id: chosenTrack)
        var pick = Pick(
            pickId: pickId, user: state.user, at: snapshot.at,
            bin: .init(id: Bin.id(number), label: state.bins[binIdx].label, score: choice.score, created: choice.created),
            track: .init(id: chosenTrack, title: meta?.title ?? "", artist: meta?.artist ?? ""),
            ranked: summaries, alternatives: alternatives, why: why, source: source, signals: tracks.signals,
            blend: ranker.version)
        pick.volume = suggestedVolume(binIndex: binIdx, x: x, continuing: sessionBin == number, state: state)
        let record = PickRecord(
            pickId: pickId, user: state.user, at: at, binNumber: number, trackId: chosenTrack,
            features: x, ranking: choice.ranking)
        return (pick, record)
    }

    /// Computes what picks derive from the state and keep in it (each bin's scoring rows and songs
    /// in like-rate order with their catalog rows, the bins' layout for merge costs, and the ranking cache with every bin's
    /// sound neighbours and profile), so that copies of the state picked from without learning
    /// (`--read-only`) share them instead of each computing them again.
    public func prepare(_ state: inout UserState) {
        state.scoring.sync(bins: state.bins, config: config)
        state.pairs.sync(state.bins, weights: state.weights, threshold: config.presenceThreshold)
        let index = catalog.index()
        for i in state.bins.indices { _ = songRowsByRate(binIndex: i, state: &state, index: index) }
        warmRankingCache(&state)
    }

    /// The feature vector of a snapshot, learning places and the user's vocabulary from it.
    public func features(of snapshot: Snapshot, state: inout UserState) -> FeatureVector {
        let places = state.places.places.count
        let vocabulary = (state.vocabulary.places.count, state.vocabulary.tags.count)
        let before = state.places
        let x = extractor.extract(snapshot, places: &state.places, vocabulary: &state.vocabulary)
        if state.places.places.count != places || state.places != before
            || state.vocabulary.places.count != vocabulary.0 || state.vocabulary.tags.count != vocabulary.1
        {
            state.changes.places = true
        }
        return x
    }

    /// Every bin's similarity to `x`, best first (then the older bin), without the bins avoided in
    /// this session: `exp(−d / κ)` of the weighted distance `d` (docs/scoring.md).
    public func rank(_ x: FeatureVector, state: inout UserState) -> [RankedBin] {
        let distances = binDistances(x, state: &state)
        return ranking(distances.map(similarity), state: state)
    }

    /// The similarity of a distance: `exp(−d / κ)`, 0 for no shared evidence.
    @inline(__always)
    func similarity(_ d: Float) -> Float {
        d.isFinite ? expf(-d / config.distanceScale) : 0
    }

    /// Every bin's similarity to `x`, `exp(−d / κ)`, in bin order (0 for a bin that shares no slot with `x`).
    public func binSimilarities(_ x: FeatureVector, state: inout UserState) -> [Float] {
        binDistances(x, state: &state).map(similarity)
    }

    /// Every bin's weighted distance to `x`, in bin order.
    func binDistances(_ x: FeatureVector, state: inout UserState) -> [Float] {
        state.scoring.sync(bins: state.bins, config: config)
        return state.scoring.distances(x, weights: state.weights)
    }

    /// Bins sorted by score, best first, then the older bin, leaving out the session's avoided bins.
    func ranking(_ scores: [Float], state: UserState) -> [RankedBin] {
        let avoided = state.session.avoided
        var ranking: [RankedBin] = []
        ranking.reserveCapacity(scores.count)
        for (i, s) in scores.enumerated() where avoided.isEmpty || !avoided.contains(state.bins[i].number) {
            // Insertion into the sorted prefix: score, then the older bin (bins are few).
            let item = RankedBin(bin: state.bins[i].number, score: s)
            var at = ranking.count
            ranking.append(item)
            while at > 0, Self.before(item, ranking[at - 1]) {
                ranking[at] = ranking[at - 1]
                at -= 1
            }
            ranking[at] = item
        }
        return ranking
    }

    /// The ranking order: higher score first, then the older (lower-numbered) bin.
    @inline(__always)
    static func before(_ a: RankedBin, _ b: RankedBin) -> Bool {
        a.score != b.score ? a.score > b.score : a.bin < b.bin
    }

    struct BinChoice {
        var index: Int
        var score: Float
        var created: Bool
        var ranking: [RankedBin]
        /// Every bin's similarity to the context before the chosen bin learned from it, in bin
        /// order; `nil` when bins were created, merged or folded during the choice (their order changed).
        var similarities: [Float]?
    }

    /// The bin for a context, which then learns from it (``serve(binIndex:x:at:state:)``).
    ///
    /// Each bin's distance is adjusted for the decision: the session's current bin counts
    /// ``EngineConfig/stickiness`` closer (decaying with the time since the session's last event: a
    /// context persists), and every bin counts farther the longer it has not served
    /// (``EngineConfig/recency``). The best bin whose adjusted similarity reaches
    /// ``EngineConfig/createBinBelow`` is chosen; else the bin switched to in this session after a
    /// dislike streak; else, at the cap, the bin a new one would be merged into at once
    /// (``joinAtCap(_:at:state:)``); else a new bin, after which, past ``EngineConfig/binCap`` bins,
    /// the two closest bins merge (``mergeClosest(at:state:)``).
    /// The score reported is the unadjusted similarity.
    func chooseBin(_ x: FeatureVector, at: Date, state: inout UserState, rng: inout SeededGenerator) -> BinChoice {
        let distances = binDistances(x, state: &state)
        let scores = distances.map(similarity)
        let ranking = self.ranking(scores, state: state)
        let t = at.timeIntervalSince1970
        var best: (index: Int, adjusted: Float)?
        let avoided = state.session.avoided
        let currentBin = state.session.currentBin
        let stickiness: Float =
            if let last = state.session.lastAt {
                config.stickiness * Float(exp(-max(0, at.timeIntervalSince(last)) / (config.stickinessMinutes * 60)))
            } else { 0 }
        state.bins.withUnsafeBufferPointer { bins in
            for (i, d) in distances.enumerated() where d.isFinite {
                let number = bins[i].number
                if !avoided.isEmpty && avoided.contains(number) { continue }
                var adjusted = d
                if number == currentBin { adjusted -= stickiness }
                if config.recency > 0 {
                    let idle = max(0, t - bins[i].updatedAt.timeIntervalSince1970)
                    adjusted += config.recency * Float(1 - exp(-idle / (config.recencyHours * 3600)))
                }
                if best == nil || adjusted < best!.adjusted || (adjusted == best!.adjusted && number < bins[best!.index].number) {
                    best = (i, adjusted)
                }
            }
        }
        var chosen: (index: Int, created: Bool)
        if let best, similarity(max(0, best.adjusted)) >= config.createBinBelow {
            chosen = (best.index, false)
        } else if let target = state.session.switchedTo.flatMap({ state.resolve(bin: $0) }), let i = state.binIndex(number: target) {
            chosen = (i, false)
        } else if let i = joinAtCap(x, at: at, state: &state) {
            chosen = (i, false)
        } else {
            let next = state.nextBinNumber
            let i = makeBin(x, at: at, nearest: ranking.first, state: &state, rng: &rng)
            // The new bin may have been merged into an older one at once: then that one is the choice.
            chosen = (i, state.bins[i].number == next)
        }
        let number = state.bins[chosen.index].number
        let score: Float
        if chosen.created {
            score = 1
        } else if let r = ranking.first(where: { $0.bin == number }) {
            score = r.score
        } else {
            score = similarity(binDistances(x, state: &state)[chosen.index])
        }
        serve(binIndex: chosen.index, x: x, at: at, created: chosen.created, state: &state)
        mergeNear(number, state: &state)
        let kept = state.resolve(bin: number) ?? number
        foldStale(at: at, keeping: kept, state: &state)
        let index = state.binIndex(number: state.resolve(bin: kept) ?? kept)!
        // Bins merged or folded away during the choice leave the ranking (rarely: only then is it filtered).
        let live = ranking.count == state.bins.count - (chosen.created ? 1 : 0) ? ranking : ranking.filter { state.binIndex(number: $0.bin) != nil }
        let unchanged = !chosen.created && state.bins.count == scores.count
        return BinChoice(index: index, score: score, created: chosen.created, ranking: live, similarities: unchanged ? scores : nil)
    }

    func explain(binIndex: Int, x: FeatureVector, state: inout UserState) -> [Explanation] {
        state.scoring.sync(bins: state.bins, config: config)
        return state.bins.withUnsafeBufferPointer { bins in
            state.scoring.topContributions(
                row: binIndex, centroid: bins[binIndex].centroid, x: x, weights: state.weights, vocabulary: state.vocabulary, count: 5)
        }
    }

    func remember(track: String, state: inout UserState) {
        guard !track.isEmpty else { return }
        state.remember(track, keep: max(config.repeatWindow, 1))
    }

    func beginSession(at: Date, state: inout UserState) {
        if !state.session.isActive(at: at, timeout: config.sessionTimeout) {
            state.session = SessionState()
        }
    }

    /// A pick id derived from the seed, the user and the user's pick counter: stable across runs.
    public static func pickId(seed: UInt64, user: String, counter: Int64) -> String {
        let h = StableHash.mix(seed ^ StableHash.fnv1a(user) ^ StableHash.mix(UInt64(bitPattern: counter) &+ 0x5157))
        return StableHash.hex(h, prefix: "p-")
    }

    /// The id of a pick that learns nothing (`--read-only`, `?learn=false`, `batch --read-only`):
    /// derived from the seed, the user, the pick counter and the snapshot's instant, with a salt no
    /// learning pick's id has. The person's next learning pick, which takes the same counter, gets
    /// another id, so feedback naming a read-only pick is refused as naming an unknown pick instead
    /// of attaching to that next pick; the same read-only pick made again has the same id.
    public static func previewPickId(seed: UInt64, user: String, counter: Int64, at: Date) -> String {
        let instant = UInt64(bitPattern: Int64((at.timeIntervalSince1970 * 1000).rounded()))
        let h = StableHash.mix(
            seed ^ StableHash.fnv1a(user) ^ StableHash.mix(UInt64(bitPattern: counter) &+ 0x5245_4144) ^ StableHash.mix(instant &+ 0x7072))
        return StableHash.hex(h, prefix: "p-")
    }
}

extension Recommender {
    /// The same engine over another catalog source.
    public func with(catalog: any CatalogSource) -> Recommender {
        Recommender(
            config: config, catalog: catalog, priors: priors, seed: seed, extractor: extractor, ranker: ranker, community: community,
            soundCache: soundCache)
    }

    /// The same engine with another community source (or none).
    public func with(community: (any CommunitySource)?) -> Recommender {
        Recommender(
            config: config, catalog: catalog, priors: priors, seed: seed, extractor: extractor, ranker: ranker, community: community,
            soundCache: soundCache)
    }

    /// The same engine with another ranker model.
    public func with(ranker: RankerModel) -> Recommender {
        Recommender(
            config: config, catalog: catalog, priors: priors, seed: seed, extractor: extractor, ranker: ranker, community: community,
            soundCache: soundCache)
    }

    /// The same engine with another configuration.
    public func with(config: EngineConfig) -> Recommender {
        Recommender(
            config: config, catalog: catalog, priors: priors, seed: seed, extractor: extractor, ranker: ranker, community: community,
            soundCache: soundCache)
    }
}
