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

    /// Creates a recommender.
    public init(config: EngineConfig, catalog: any CatalogSource, priors: ColdStartPriors, seed: UInt64 = 0, extractor: FeatureExtractor = FeatureExtractor()) {
        self.config = config
        self.catalog = catalog
        self.priors = priors
        self.seed = seed
        self.extractor = extractor
    }

    /// The state of a user the engine has never seen: no bins, default weights.
    public func newUser(_ user: String) -> UserState {
        UserState(
            user: user, bins: [], weights: config.defaultWeights, places: PlaceBook(), session: SessionState(),
            recentTracks: [], pickCounter: 0, nextBinNumber: 1)
    }

    // MARK: - Snapshot → pick

    /// Picks a track for a snapshot, creating a bin when none fits; updates the session and recent tracks.
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

        let choice = chooseBin(x, at: at, state: &state, rng: &rng)
        let binIdx = choice.index
        let (trackIds, source) = chooseTracks(binIndex: binIdx, count: max(1, top), state: &state, rng: &rng)

        let alternatives = self.alternatives(choice.ranking, besides: state.bins[binIdx].number, state: &state)
        let why = explain(binIndex: binIdx, x: x, state: &state)

        let counter = state.pickCounter
        let pickId = pickId ?? Self.pickId(seed: seed, user: state.user, counter: counter)
        let chosenTrack = trackIds.first ?? ""
        state.pickCounter += 1
        state.changes.counters = true
        remember(track: chosenTrack, state: &state)
        let number = state.bins[binIdx].number
        if state.session.currentBin != number { state.session.dislikeStreak = 0 }
        state.session.currentBin = number
        state.session.lastAt = at

        let summaries = trackIds.map { id in
            let meta = catalog.track(id: id)
            return Pick.TrackSummary(id: id, title: meta?.title ?? "", artist: meta?.artist ?? "")
        }
        let pick = Pick(
            pickId: pickId, user: state.user, at: snapshot.at,
            bin: .init(id: Bin.id(number), label: state.bins[binIdx].label, score: choice.score, created: choice.created),
            track: summaries.first ?? .init(id: "", title: "", artist: ""),
            ranked: summaries, alternatives: alternatives, why: why, source: source)
        let record = PickRecord(
            pickId: pickId, user: state.user, at: at, binNumber: number, trackId: chosenTrack,
            features: x, ranking: choice.ranking)
        return (pick, record)
    }

    /// Computes what picks derive from the state and keep in it (each bin's scoring rows and its
    /// songs in like-rate order), so that copies of the state picked from without learning
    /// (`--read-only`) share them instead of each computing them again.
    public func prepare(_ state: inout UserState) {
        state.scoring.sync(bins: state.bins, config: config)
        for i in state.bins.indices { state.bins[i].orderSongsByRate() }
    }

    /// The feature vector of a snapshot, learning places from its coordinates.
    public func features(of snapshot: Snapshot, state: inout UserState) -> FeatureVector {
        let before = state.places
        let x = extractor.extract(snapshot, places: &state.places)
        if state.places != before { state.changes.places = true }
        return x
    }

    /// Every bin's weighted correlation with `x`, best first, without the bins avoided in this session.
    public func rank(_ x: FeatureVector, state: inout UserState) -> [RankedBin] {
        state.scoring.sync(bins: state.bins, config: config)
        let scores = state.scoring.scores(x, weights: state.weights)
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
    }

    /// The bin for a context: the best one above the creation threshold, else the bin switched to
    /// in this session, else a new bin.
    func chooseBin(_ x: FeatureVector, at: Date, state: inout UserState, rng: inout SeededGenerator) -> BinChoice {
        let ranking = rank(x, state: &state)
        if let best = ranking.first, best.score >= config.createBinBelow, let i = state.binIndex(number: best.bin) {
            return BinChoice(index: i, score: best.score, created: false, ranking: ranking)
        }
        if let target = state.session.switchedTo, let i = state.binIndex(number: target) {
            let score = ranking.first { $0.bin == target }?.score ?? 0
            return BinChoice(index: i, score: score, created: false, ranking: ranking)
        }
        let i = createBin(x, at: at, nearest: ranking.first, state: &state, rng: &rng)
        let score = rank(x, state: &state).first { $0.bin == state.bins[i].number }?.score ?? 1
        return BinChoice(index: i, score: score, created: true, ranking: ranking)
    }

    // MARK: - Bins

    /// Makes a bin centred on `x`, seeded with the liked songs of the nearest bin and with catalog
    /// tracks that fit the best-matching cold-start prior. Returns its index in `state.bins`.
    ///
    /// With `seedSongs` the bin starts with exactly those songs instead (onboarding).
    @discardableResult
    public func createBin(
        _ x: FeatureVector, at: Date, nearest: RankedBin?, seedSongs: [BinSong]? = nil, state: inout UserState, rng: inout SeededGenerator
    ) -> Int {
        let d = FeatureLayout.dimension
        var centroid = [Float](repeating: 0, count: d)
        for i in 0..<d where x.mask[i] > 0 { centroid[i] = x.values[i] }
        let number = state.nextBinNumber
        state.nextBinNumber += 1
        state.changes.counters = true

        var songs: [BinSong] = []
        var taken = Set<String>()
        let want = seedSongs == nil ? config.seedTracksPerNewBin : 0
        for s in seedSongs ?? [] where taken.insert(s.trackId).inserted { songs.append(s) }
        if seedSongs == nil, let nearest, nearest.score > 0, let ni = state.binIndex(number: nearest.bin) {
            let liked = state.bins[ni].songs.filter { $0.likes > $0.dislikes }
                .sorted { ($0.likes - $0.dislikes, $1.trackId) > ($1.likes - $1.dislikes, $0.trackId) }
            for s in liked.prefix(max(1, want / 3)) where taken.insert(s.trackId).inserted {
                songs.append(BinSong(trackId: s.trackId))
            }
        }
        let matched = priors.bestMatch(x, weights: state.weights)
        if songs.count < want {
            let index = catalog.index()
            var excluded = Set<Int>()
            for id in taken.union(state.recentTracks) { if let r = index.row(of: id) { excluded.insert(r) } }
            let need = want - songs.count
            var rows = priors.seedTracks(for: matched, index: index, k: need * 3, excluding: excluded)
            // Seeded variety: bins of the same kind should not all start with the same songs.
            rows.shuffle(using: &rng)
            for r in rows.prefix(need) {
                let id = index.tracks[r].id
                if taken.insert(id).inserted { songs.append(BinSong(trackId: id)) }
            }
        }
        let bin = Bin(
            number: number, label: BinLabeler.label(centroid: centroid, observed: x.mask),
            centroid: centroid, spread: [Float](repeating: config.initialSpread, count: d), observed: x.mask,
            observations: 1, songs: songs, prior: matched.name, createdAt: at, updatedAt: at)
        state.bins.append(bin)
        state.changes.bins.insert(number)
        if !songs.isEmpty { state.changes.songs.insert(number) }
        return state.bins.count - 1
    }

    // MARK: - Tracks

    /// Up to `count` tracks from a bin: liked songs first, Thompson sampling on like/dislike counts
    /// within each tier with some exploration, and no track of the repeat window. A bin that runs dry
    /// is refilled with similar catalog tracks, which join it as new songs. Returns the ids and where
    /// the first one came from (`bin`, or `catalog` for a refill).
    func chooseTracks(binIndex: Int, count: Int, state: inout UserState, rng: inout SeededGenerator) -> ([String], String) {
        var ids = rankSongs(binIndex: binIndex, count: count, state: state, rng: &rng)
        var source = "bin"
        if ids.count < count {
            if ids.isEmpty { source = "catalog" }
            let recent = Set(state.recentTracks.suffix(config.repeatWindow))
            let refill = similarCatalogTracks(
                for: state.bins[binIndex], count: max(count - ids.count, config.seedTracksPerNewBin),
                avoiding: recent.union(ids), rng: &rng)
            let number = state.bins[binIndex].number
            for id in refill where state.bins[binIndex].songIndex(id) == nil {
                state.bins[binIndex].songs.append(BinSong(trackId: id))
                state.changes.songs.insert(number)
            }
            ids += refill.prefix(count - ids.count)
        }
        return (ids, source)
    }

    /// The bin's songs outside `avoiding`, ordered for playing: tier (liked first, unless this is an
    /// exploration draw), then a Thompson sample of Beta(1 + likes, 1 + dislikes).
    func rankSongs(binIndex: Int, count: Int, state: UserState, rng: inout SeededGenerator) -> [String] {
        struct Candidate {
            var tier: Int
            var sample: Double
            var index: Int
        }
        @inline(__always) func before(_ a: Candidate, _ b: Candidate) -> Bool {
            a.tier != b.tier ? a.tier > b.tier : a.sample > b.sample
        }
        guard count > 0 else { return [] }
        let explore = rng.unit() < 0.15
        let window = config.repeatWindow
        return state.bins.withUnsafeBufferPointer { bins in
            bins[binIndex].songs.withUnsafeBufferPointer { songs in
                // The `count` best in (tier, sample) order, earlier songs first on ties.
                withUnsafeTemporaryAllocation(of: Candidate.self, capacity: count) { buffer in
                    var best = TopK(buffer: buffer)
                    for i in songs.indices where !state.isRecent(songs[i], window: window) {
                        let likes = songs[i].likes, dislikes = songs[i].dislikes
                        best.offer(Candidate(
                            tier: (!explore && likes > dislikes) ? 1 : 0,
                            sample: rng.beta(counts: 1 + likes, 1 + dislikes), index: i), before: before)
                    }
                    return (0..<best.count).map { songs[best[$0].index].trackId }
                }
            }
        }
    }

    /// Catalog tracks whose audio profile and genres fit the bin (its liked songs, else all its songs,
    /// else its prior), for a bin that ran dry.
    func similarCatalogTracks(for bin: Bin, count: Int, avoiding: Set<String>, rng: inout SeededGenerator) -> [String] {
        let index = catalog.index()
        guard index.count > 0 else { return [] }
        let liked = bin.songs.filter { $0.likes > $0.dislikes }.compactMap { index.row(of: $0.trackId) }
        let members = bin.songs.compactMap { index.row(of: $0.trackId) }
        var excluded = Set(members)
        for id in avoiding { if let r = index.row(of: id) { excluded.insert(r) } }
        let basis = liked.isEmpty ? members : liked
        let profile: AudioProfile
        var genres = Set<String>()
        if !basis.isEmpty {
            profile = index.profile(ofRows: basis)
            var counts: [String: Int] = [:]
            for r in basis { for g in index.tracks[r].genres { counts[g, default: 0] += 1 } }
            genres = Set(counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(5).map(\.key))
        } else if let name = bin.prior, let prior = priors.contexts.first(where: { $0.name == name }) {
            profile = prior.profile
            genres = Set(prior.genres)
        } else if let prior = priors.contexts.first(where: { $0.name == "default" }) ?? priors.contexts.first {
            profile = prior.profile
            genres = Set(prior.genres)
        } else {
            return []
        }
        var rows = index.similar(to: profile, genres: genres, k: count * 4, excluding: excluded).map(\.row)
        rows.shuffle(using: &rng)
        return rows.prefix(count).map { index.tracks[$0].id }
    }

    /// The pick's alternatives: the best-ranked bins other than `chosen`, each with its best tracks.
    func alternatives(_ ranking: [RankedBin], besides chosen: Int, state: inout UserState) -> [Pick.Alternative] {
        var out: [Pick.Alternative] = []
        out.reserveCapacity(config.alternatives)
        for rb in ranking where rb.bin != chosen {
            guard out.count < config.alternatives else { break }
            guard let i = state.binIndex(number: rb.bin) else { continue }
            out.append(Pick.Alternative(
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

    func explain(binIndex: Int, x: FeatureVector, state: inout UserState) -> [Explanation] {
        state.scoring.sync(bins: state.bins, config: config)
        return state.bins.withUnsafeBufferPointer { bins in
            state.scoring.topContributions(row: binIndex, centroid: bins[binIndex].centroid, x: x, weights: state.weights, count: 5)
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
        return "p-" + StableHash.hex(h)
    }
}

extension Recommender {
    /// The same engine over another catalog source.
    public func with(catalog: any CatalogSource) -> Recommender {
        Recommender(config: config, catalog: catalog, priors: priors, seed: seed, extractor: extractor)
    }
}
