import Foundation
import SoundtrackCatalog
import SoundtrackContext

/// Bins as online clusters: made for a new context, moved by every snapshot they serve, merged
/// when the user has more than ``EngineConfig/binCap``, folded when they never recur
/// (docs/scoring.md, "Bins learn from every snapshot they serve", "Merging and folding").
extension Recommender {
    // MARK: - Creation

    /// Makes a bin centred on `x`, seeded with the liked songs of the nearest bin and with catalog
    /// tracks that fit the best-matching cold-start prior. Returns its index in `state.bins`.
    ///
    /// With `seedSongs` the bin starts with exactly those songs instead (onboarding).
    @discardableResult
    public func createBin(
        _ x: FeatureVector, at: Date, nearest: RankedBin?, seedSongs: [BinSong]? = nil, state: inout UserState, rng: inout SeededGenerator
    ) -> Int {
        let d = FeatureLayout.dimension
        let centroid = Self.centroid(of: x)
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
            var rows = sharedSearch("seed:" + matched.name, capacity: want * 3, k: need * 3, excluding: excluded, index: index) { k, excluding in
                priors.seedTracks(for: matched, index: index, k: k, excluding: excluding)
            }
            // Seeded variety: bins of the same kind should not all start with the same songs.
            rows.shuffle(using: &rng)
            for r in rows.prefix(need) {
                let id = index.id(ofRow: r)
                if taken.insert(id).inserted { songs.append(BinSong(trackId: id)) }
            }
        }
        let bin = Bin(
            number: number, label: "",
            centroid: centroid, spread: [Float](repeating: config.initialSpread, count: d), observed: x.mask,
            observations: 1, songs: songs, prior: matched.name, createdAt: at, updatedAt: at)
        state.bins.append(bin)
        let i = state.bins.count - 1
        relabel(binIndex: i, state: &state)
        state.changes.bins.insert(number)
        if !songs.isEmpty { state.changes.songs.insert(number) }
        return i
    }

    /// A new bin's centroid for `x`: its values on the slots it has, 0 elsewhere.
    static func centroid(of x: FeatureVector) -> [Float] {
        var centroid = [Float](repeating: 0, count: FeatureLayout.dimension)
        for i in centroid.indices where x.mask[i] > 0 { centroid[i] = x.values[i] }
        return centroid
    }

    /// Makes a bin for `x` (``createBin(_:at:nearest:seedSongs:state:rng:)``) and, past the user's
    /// cap, merges the closest pair (``mergeClosest(at:state:)``). Returns the index of the bin that
    /// now holds the new one: itself, or the older bin it was merged into.
    public func makeBin(_ x: FeatureVector, at: Date, nearest: RankedBin?, state: inout UserState, rng: inout SeededGenerator) -> Int {
        let i = createBin(x, at: at, nearest: nearest, state: &state, rng: &rng)
        guard state.bins.count > config.cap(for: state) else { return i }
        let number = state.bins[i].number
        mergeClosest(at: at, state: &state)
        return state.binIndex(number: state.resolve(bin: number) ?? number)!
    }

    /// Exactly at the cap, the bin that a new bin made for `x` would be merged into at once: when the pair
    /// of least ``mergeCost(_:_:weights:)`` among the user's bins and a bin of `x` alone (one
    /// snapshot, its slots, its time) is `x`'s bin and an existing one, that one serves `x` instead
    /// (a bin made only to be merged away would bring its seed songs into the old bin and cost a
    /// catalog search). `nil` below the cap, or when another pair is closer: then the context is
    /// new enough for a bin of its own.
    func joinAtCap(_ x: FeatureVector, at: Date, state: inout UserState) -> Int? {
        // Exactly at the cap (a user over it, after onboarding or a lowered cap, makes the bin and
        // merges back down), the cap counted with this snapshot served, as makeBin counts it.
        guard !state.bins.isEmpty, state.bins.count == max(1, config.cap(for: state, plus: 1)) else { return nil }
        let centroid = Self.centroid(of: x)
        let alone = Bin(
            number: state.nextBinNumber, label: "", centroid: centroid, spread: centroid, observed: x.mask,
            observations: 1, songs: [], prior: nil, createdAt: at, updatedAt: at)
        // The pair mergeClosest would merge after making the bin.
        state.pairs.sync(state.bins, weights: state.weights, threshold: config.presenceThreshold)
        guard let best = state.pairs.cheapestPair(config: config, with: alone), best.cost.isFinite, best.j == state.bins.count
        else { return nil }
        return best.i
    }

    // MARK: - Learning from served snapshots

    /// A snapshot served by a bin (a pick, a batch line, the snapshot of a feedback event): the bin
    /// moves toward it, and a move from another bin within the session is counted.
    ///
    /// Per slot present in `x`, with the rate `r = max(serveRate, 1/(n+1))` (`n` snapshots served
    /// so far, so the centroid is the running mean until `n` reaches `1/serveRate`), and at least
    /// `1 − o` for a slot the bin has rarely seen: `c ← c + r (x − c)`,
    /// `s² ← (1 − r)(s² + r (x − c)²)`; presence `o ← o + r (m − o)` on every slot; the mean time
    /// moves the same way. A bin just made for `x` is only counted in the move.
    func serve(binIndex i: Int, x: FeatureVector, at: Date, created: Bool, state: inout UserState) {
        let number = state.bins[i].number
        if let previous = state.session.currentBin.flatMap({ state.resolve(bin: $0) }), previous != number,
            let p = state.binIndex(number: previous)
        {
            state.bins[i].transitions[previous, default: 0] += 1
            state.bins[p].transitions[number, default: 0] += 1
            state.changes.bins.insert(previous)
        }
        state.changes.bins.insert(number)
        let t = at.timeIntervalSince1970
        if created { return }
        let n = state.bins[i].observations
        let rate = max(config.serveRate, 1 / Float(n + 1))
        let d = FeatureLayout.dimension
        state.bins[i].updateVectors { centroid, spread, observed in
            x.values.withUnsafeBufferPointer { xv in
                x.mask.withUnsafeBufferPointer { xm in
                    for k in 0..<d {
                        if xm[k] > 0 {
                            let r = max(rate, 1 - observed[k])
                            let delta = xv[k] - centroid[k]
                            centroid[k] += r * delta
                            spread[k] = ((1 - r) * (spread[k] * spread[k] + r * delta * delta)).squareRoot()
                            observed[k] += rate * (1 - observed[k])
                        } else {
                            observed[k] -= rate * observed[k]
                        }
                    }
                }
            }
        }
        state.bins[i].observations = n + 1
        state.bins[i].meanTime += (t - state.bins[i].meanTime) / Double(n + 1)
        if at > state.bins[i].updatedAt { state.bins[i].updatedAt = at }
        // A served snapshot moves the centroid by 1/(n+1): the label is computed again when the
        // count reaches a power of two (the centroid has then moved as much as since the last
        // time), not at every pick. Feedback, creation and merges relabel at once.
        let count = n + 1
        if count & (count - 1) == 0 { relabel(binIndex: i, state: &state) }
    }

    // MARK: - Merging and folding

    /// What merging bins `a` and `b` costs (the two lowest-cost bins merge first): the weighted
    /// squared distance of their centroids over the slots both have seen, times the Ward factor
    /// `n_a n_b / (n_a + n_b)`, divided by `1 + adj · switches(a, b)` (bins the user's sessions
    /// move between are one context seen two ways) and multiplied by `1 + τ · days between their
    /// mean times` (bins of the same period of the user's life are more alike than their vectors say).
    func mergeCost(_ a: Bin, _ b: Bin, weights: [Float]) -> Float {
        var pair = BinVectors([a, b], weights: weights, threshold: config.presenceThreshold)
        return pair.mergeCost(0, 1, config: config)
    }

    /// The weighted mean squared distance between two bins' centroids over the slots both have seen
    /// (``EngineConfig/presenceThreshold``); `+∞` when they share none.
    func centroidDistance(_ a: Bin, _ b: Bin, weights: [Float]) -> Float {
        BinVectors([a, b], weights: weights, threshold: config.presenceThreshold).distance(0, 1)
    }

    /// Merges the pair of bins of least ``mergeCost(_:_:weights:)`` while the user has more than
    /// ``EngineConfig/binCap`` bins. The pairs are costed over the bins' vectors laid side by side
    /// (``BinVectors``, kept in the state: only the pairs of bins changed since are costed again).
    func mergeClosest(at: Date, state: inout UserState) {
        while state.bins.count > max(1, config.cap(for: state)) {
            state.pairs.sync(state.bins, weights: state.weights, threshold: config.presenceThreshold)
            guard let best = state.pairs.cheapestPair(config: config) else { return }
            merge(best.j, into: best.i, state: &state)
        }
    }

    /// Merges bin `number` with every bin whose centroid is closer to it than
    /// ``EngineConfig/mergeBelowDistance`` (the older bin survives).
    func mergeNear(_ number: Int, state: inout UserState) {
        guard config.mergeBelowDistance > 0 else { return }
        var current = number
        while let i = state.binIndex(number: current) {
            var near: Int?
            for j in state.bins.indices where j != i {
                if centroidDistance(state.bins[i], state.bins[j], weights: state.weights) < config.mergeBelowDistance {
                    near = j
                    break
                }
            }
            guard let j = near else { return }
            let (keep, drop) = state.bins[i].number < state.bins[j].number ? (i, j) : (j, i)
            current = state.bins[keep].number
            merge(drop, into: keep, state: &state)
        }
    }

    /// Folds bins that never recurred: a bin of at most ``EngineConfig/foldMaxObservations``
    /// snapshots, not served for ``EngineConfig/foldAfterDays``, joins its nearest bin (by
    /// ``centroidDistance(_:_:weights:)``). `keeping` (the bin just chosen) is never folded.
    func foldStale(at: Date, keeping: Int, state: inout UserState) {
        let horizon = at.timeIntervalSince1970 - config.foldAfterDays * 86_400
        var i = 0
        while i < state.bins.count, state.bins.count > 1 {
            guard state.bins[i].number != keeping, state.bins[i].observations <= config.foldMaxObservations,
                state.bins[i].updatedAt.timeIntervalSince1970 < horizon
            else {
                i += 1
                continue
            }
            // The distances of the kept layout (``UserState/pairs``): those of centroidDistance.
            state.pairs.sync(state.bins, weights: state.weights, threshold: config.presenceThreshold)
            var nearest: (j: Int, d: Float)?
            for j in state.bins.indices where j != i {
                let d = state.pairs.pairDistance(i, j)
                if nearest == nil || d < nearest!.d { nearest = (j, d) }
            }
            guard let nearest else { return }
            merge(i, into: nearest.j, state: &state)
        }
    }

    /// Merges bin `j` into bin `i` (indices in `state.bins`): vectors averaged by snapshot counts and
    /// presence, songs united with their counts added, switches and times combined; `j` is removed
    /// and recorded in ``UserState/mergedInto``, and the session's references to it follow.
    func merge(_ j: Int, into i: Int, state: inout UserState) {
        let a = state.bins[i], b = state.bins[j]
        let d = FeatureLayout.dimension
        let na = Float(a.observations), nb = Float(b.observations)
        var centroid = [Float](repeating: 0, count: d)
        var spread = [Float](repeating: 0, count: d)
        var observed = [Float](repeating: 0, count: d)
        for k in 0..<d {
            let wa = na * a.observed[k], wb = nb * b.observed[k]
            observed[k] = (wa + wb) / (na + nb)
            guard wa + wb > 0 else {
                centroid[k] = a.observations >= b.observations ? a.centroid[k] : b.centroid[k]
                spread[k] = max(a.spread[k], b.spread[k])
                continue
            }
            let c = (wa * a.centroid[k] + wb * b.centroid[k]) / (wa + wb)
            let da = a.centroid[k] - c, db = b.centroid[k] - c
            centroid[k] = c
            spread[k] = ((wa * (a.spread[k] * a.spread[k] + da * da) + wb * (b.spread[k] * b.spread[k] + db * db)) / (wa + wb)).squareRoot()
        }
        var merged = a
        merged.setVectors(centroid: centroid, spread: spread, observed: observed)
        merged.observations = a.observations + b.observations
        merged.meanTime = (Double(na) * a.meanTime + Double(nb) * b.meanTime) / Double(na + nb)
        merged.createdAt = min(a.createdAt, b.createdAt)
        merged.updatedAt = max(a.updatedAt, b.updatedAt)
        var songs = a.songs
        // A rating of `b` on a song `a` also has is dropped (the merged song keeps `a`'s): only
        // then does the user's evidence over all bins change.
        var evidenceChanged = false
        for s in b.songs {
            if let k = songs.firstIndex(where: { $0.key == s.key && $0.trackId == s.trackId }) {
                songs[k].likes += s.likes
                songs[k].dislikes += s.dislikes
                if s.rating > 0 { evidenceChanged = true }
            } else {
                songs.append(s)
            }
        }
        merged.songs = songs
        var transitions = a.transitions
        for (other, count) in b.transitions { transitions[other, default: 0] += count }
        transitions[a.number] = nil
        transitions[b.number] = nil
        merged.transitions = transitions
        state.bins[i] = merged
        state.bins.remove(at: j)
        for k in state.bins.indices {
            guard let count = state.bins[k].transitions.removeValue(forKey: b.number) else { continue }
            if state.bins[k].number != a.number { state.bins[k].transitions[a.number, default: 0] += count }
            state.changes.bins.insert(state.bins[k].number)
        }
        state.mergedInto[b.number] = a.number
        if evidenceChanged {
            state.evidenceVersion &+= 1
        } else {
            // The same evidence, held by one bin instead of two: the ranking cache stays valid once
            // the merged bin's list replaces the two (no rebuild of the whole cache per merge).
            mergeBinEvidence(into: merged, dropping: b.number, state: &state)
        }
        if state.session.currentBin == b.number { state.session.currentBin = a.number }
        if state.session.switchedTo == b.number { state.session.switchedTo = a.number }
        if state.session.avoided.contains(b.number) {
            state.session.avoided = state.session.avoided.map { $0 == b.number ? a.number : $0 }
                .reduce(into: [Int]()) { if !$0.contains($1) { $0.append($1) } }
        }
        state.changes.bins.remove(b.number)
        state.changes.songs.remove(b.number)
        state.changes.removedBins.insert(b.number)
        state.changes.bins.insert(a.number)
        state.changes.songs.insert(a.number)
        if let k = state.binIndex(number: a.number) { relabel(binIndex: k, state: &state) }
    }

    // MARK: - Labels

    /// Gives a bin the label ``BinLabeler`` makes for it among the user's other bins.
    func relabel(binIndex i: Int, state: inout UserState) {
        let label = BinLabeler.label(binIndex: i, bins: state.bins, vocabulary: state.vocabulary)
        if state.bins[i].label != label {
            state.bins[i].label = label
            state.changes.bins.insert(state.bins[i].number)
        }
    }
}

/// A user's bins' vectors side by side (bin `i`'s slots at `i·stride ..< i·stride + d`, the stride
/// rounded up to whole SIMD lanes and padded with absent slots), with what merge costs read of each
/// bin: the pairwise costs of ``Recommender/mergeClosest(at:state:)`` without copying a `Bin` per
/// pair, and without a branch per slot (a slot counts when both bins have seen it: a 0/1 factor).
/// The slot weights are the user's, padded like the vectors.
///
/// Kept in the user's state between picks (``UserState/pairs``) with the pairs' centroid distances:
/// ``sync(_:weights:threshold:)`` lays out again only the bins whose vectors changed (their
/// ``Bin/stamp``) and forgets only their pairs, and a pair's distance is computed when first asked
/// for (``pairDistance(_:_:)``). So the test at the cap (``Recommender/joinAtCap(_:at:state:)``),
/// after a pick moved one bin, costs that bin's pairs and the snapshot's instead of all of them, and
/// a fold costs the folded bin's. The distances are those of the same function on the same numbers:
/// the choices are the same as without the cache.
struct BinVectors: Sendable {
    typealias Lanes = SIMD8<Float>
    private(set) var count: Int
    private let stride: Int
    private var centroids: [Float]
    /// The slot weights, padded to the stride (absent slots weigh 0).
    private var weights: [Float]
    /// 1 where the bin has seen the slot in at least the presence threshold of its snapshots, else 0.
    private var present: [Float]
    private var observations: [Float]
    private var meanTimes: [Double]
    private var numbers: [Int]
    private var transitions: [[Int: Int]]
    /// The ``Bin/stamp`` of each bin's vectors as laid out (0: never laid out).
    private var stamps: [UInt64]
    /// `distance(i, j)` for `i < j` at `i · count + j`, where ``known`` says it is computed.
    private var pairs: [Float]
    /// Whether each entry of ``pairs`` is computed (pairs are computed when first asked for:
    /// a fold asks for one bin's, the cap for all).
    private var known: [Bool]
    /// The weights and presence threshold the layout was made with (a change lays out everything again).
    private var userWeights: [Float]
    private var threshold: Float

    /// An empty layout (nothing cached yet).
    init() {
        let lanes = Lanes.scalarCount
        stride = (FeatureLayout.dimension + lanes - 1) / lanes * lanes
        count = 0
        centroids = []
        weights = []
        present = []
        observations = []
        meanTimes = []
        numbers = []
        transitions = []
        stamps = []
        pairs = []
        known = []
        userWeights = []
        threshold = .nan
    }

    init(_ bins: [Bin], weights: [Float], threshold: Float) {
        self.init()
        sync(bins, weights: weights, threshold: threshold)
    }

    /// Brings the layout and the pair distances up to date with `bins`: the rows of bins whose
    /// vectors are already laid out (by stamp) are moved, not computed again, and so are the
    /// distances between two such bins. Other weights (feedback changes them) forget every pair's
    /// distance but keep the rows, which do not depend on them; another threshold lays out every
    /// row again. The counts, times and switches of every bin are read each time.
    mutating func sync(_ bins: [Bin], weights: [Float], threshold: Float) {
        // The rows (centroids and presence) depend on the bins and the threshold only; the pair
        // distances on the weights too. Feedback changes the weights at every like or dislike:
        // then the rows stay and only the pairs are measured again.
        let fresh = threshold != self.threshold
        let reweighed = fresh || weights != userWeights
        let oldCount = count, oldStamps = stamps
        // Where each bin's vectors are laid out now (nil: not, or laid out from other vectors).
        var from = [Int?](repeating: nil, count: bins.count)
        if !fresh {
            bins.withUnsafeBufferPointer { bp in
                for r in 0..<bp.count {
                    let stamp = bp[r].stamp
                    if r < oldCount, oldStamps[r] == stamp {
                        from[r] = r
                    } else if let o = oldStamps.firstIndex(of: stamp) {
                        from[r] = o
                    }
                }
            }
        }
        if bins.count == oldCount, !fresh, from.enumerated().allSatisfy({ $0.element == nil || $0.element == $0.offset }) {
            // The same bins in the same places, some of them moved (a served snapshot moves one):
            // their rows are laid out again in place and their pairs forgotten.
            let changed = from.indices.filter { from[$0] == nil }
            readScalars(bins)
            if reweighed {
                setWeights(weights)
                known = [Bool](repeating: false, count: count * count)
            }
            guard !changed.isEmpty else { return }
            bins.withUnsafeBufferPointer { bp in
                for r in changed {
                    Self.layOut(
                        centroid: bp[r].centroid, observed: bp[r].observed, threshold: threshold, centroids: &self.centroids,
                        present: &self.present, at: r * stride)
                    stamps[r] = bp[r].stamp
                }
            }
            for r in changed {
                for i in 0..<count where i != r { known[min(i, r) * count + max(i, r)] = false }
            }
            return
        }
        // A stamp laid out twice (never expected) would alias two rows: lay out everything.
        let kept = from.compactMap { $0 }
        if Set(kept).count != kept.count { from = [Int?](repeating: nil, count: bins.count) }
        let oldCentroids = centroids, oldPresent = present, oldPairs = pairs, oldKnown = known
        var centroids = [Float](repeating: 0, count: bins.count * stride)
        var present = centroids
        // A kept row moves whole (a copy of its floats, not a checked access per slot).
        func move(row o: Int, of old: [Float], to i: Int, in layout: inout [Float], stride: Int) {
            layout.withUnsafeMutableBufferPointer { dst in
                old.withUnsafeBufferPointer { src in (dst.baseAddress! + i * stride).update(from: src.baseAddress! + o * stride, count: stride) }
            }
        }
        bins.withUnsafeBufferPointer { bp in
            for i in 0..<bp.count {
                if let o = from[i] {
                    move(row: o, of: oldCentroids, to: i, in: &centroids, stride: stride)
                    move(row: o, of: oldPresent, to: i, in: &present, stride: stride)
                } else {
                    Self.layOut(
                        centroid: bp[i].centroid, observed: bp[i].observed, threshold: threshold, centroids: &centroids,
                        present: &present, at: i * stride)
                }
            }
        }
        self.centroids = centroids
        self.present = present
        if fresh { self.threshold = threshold }
        if reweighed { setWeights(weights) }
        count = bins.count
        stamps = bins.withUnsafeBufferPointer { bp in bp.map(\.stamp) }
        readScalars(bins)
        var pairs = [Float](repeating: .infinity, count: count * count)
        var known = [Bool](repeating: false, count: count * count)
        for i in 0..<count where !reweighed {
            for j in (i + 1)..<count {
                if let oi = from[i], let oj = from[j] {
                    let old = oi < oj ? oi * oldCount + oj : oj * oldCount + oi
                    pairs[i * count + j] = oldPairs[old]
                    known[i * count + j] = oldKnown[old]
                }
            }
        }
        self.pairs = pairs
        self.known = known
    }

    /// The user's slot weights, and the same padded to the stride.
    private mutating func setWeights(_ weights: [Float]) {
        self.weights = weights + [Float](repeating: 0, count: stride - weights.count)
        userWeights = weights
    }

    /// Writes a bin's centroid and its presence (1 where it has seen the slot in at least
    /// `threshold` of its snapshots, else 0) into a row of a layout, from `offset`.
    private static func layOut(
        centroid: [Float], observed: [Float], threshold: Float, centroids: inout [Float], present: inout [Float], at offset: Int
    ) {
        for k in 0..<FeatureLayout.dimension {
            centroids[offset + k] = centroid[k]
            present[offset + k] = observed[k] >= threshold ? 1 : 0
        }
    }

    /// The counts, times, numbers and switches of every bin, read in one pass through a pointer
    /// (four `map`s over the array copied every bin, its arrays and strings retained, four times).
    private mutating func readScalars(_ bins: [Bin]) {
        let n = bins.count
        observations.removeAll(keepingCapacity: true)
        meanTimes.removeAll(keepingCapacity: true)
        numbers.removeAll(keepingCapacity: true)
        transitions.removeAll(keepingCapacity: true)
        observations.reserveCapacity(n)
        meanTimes.reserveCapacity(n)
        numbers.reserveCapacity(n)
        transitions.reserveCapacity(n)
        bins.withUnsafeBufferPointer { bp in
            for i in 0..<n {
                observations.append(Float(bp[i].observations))
                meanTimes.append(bp[i].meanTime)
                numbers.append(bp[i].number)
                transitions.append(bp[i].transitions)
            }
        }
    }

    /// ``distance(_:_:)`` of bins `i` and `j` (`i ≠ j`), computed once while both are laid out as they are.
    mutating func pairDistance(_ i: Int, _ j: Int) -> Float {
        let k = i < j ? i * count + j : j * count + i
        if !known[k] {
            pairs[k] = i < j ? distance(i, j) : distance(j, i)
            known[k] = true
        }
        return pairs[k]
    }

    /// The weighted mean squared distance between the centroids of bins `i` and `j` over the slots
    /// both have seen; `+∞` when they share none.
    func distance(_ i: Int, _ j: Int) -> Float {
        centroids.withUnsafeBufferPointer { c in
            present.withUnsafeBufferPointer { p in
                distance(c.baseAddress! + i * stride, p.baseAddress! + i * stride, c.baseAddress! + j * stride, p.baseAddress! + j * stride)
            }
        }
    }

    /// The distance of two laid-out rows (`stride` slots each), in lanes: every row, whether kept in
    /// the layout or not, is measured by this one function.
    private func distance(
        _ ca: UnsafePointer<Float>, _ pa: UnsafePointer<Float>, _ cb: UnsafePointer<Float>, _ pb: UnsafePointer<Float>
    ) -> Float {
        var sw = Lanes(), s = Lanes()
        weights.withUnsafeBufferPointer { w in
            let ca = UnsafeRawPointer(ca), pa = UnsafeRawPointer(pa), cb = UnsafeRawPointer(cb), pb = UnsafeRawPointer(pb)
            let w = UnsafeRawPointer(w.baseAddress!)
            let size = MemoryLayout<Float>.stride
            for k in Swift.stride(from: 0, to: stride * size, by: Lanes.scalarCount * size) {
                let m =
                    w.loadUnaligned(fromByteOffset: k, as: Lanes.self) * pa.loadUnaligned(fromByteOffset: k, as: Lanes.self)
                    * pb.loadUnaligned(fromByteOffset: k, as: Lanes.self)
                let dc = ca.loadUnaligned(fromByteOffset: k, as: Lanes.self) - cb.loadUnaligned(fromByteOffset: k, as: Lanes.self)
                sw += m
                s += m * dc * dc
            }
        }
        let total = sw.sum()
        return total > 0 ? s.sum() / total : .infinity
    }

    /// The pair `i < j` of least ``mergeCost(_:_:config:)`` (the first such pair in the order
    /// `(0, 1), (0, 2), …, (1, 2), …` on ties); `nil` with fewer than two bins. With `extra`, over
    /// the bins and that one more, laid out last (index ``count``) without being added to the
    /// layout: the pair `mergeClosest` would merge if `extra` were made.
    mutating func cheapestPair(config: EngineConfig, with extra: Bin? = nil) -> (i: Int, j: Int, cost: Float)? {
        // Each bin's cost of a merge with `extra`, measured as the layout measures its own pairs.
        var toExtra: [Float] = []
        if let extra {
            var ce = [Float](repeating: 0, count: stride), pe = ce
            Self.layOut(centroid: extra.centroid, observed: extra.observed, threshold: threshold, centroids: &ce, present: &pe, at: 0)
            let ne = Float(extra.observations)
            toExtra = [Float](repeating: .infinity, count: count)
            centroids.withUnsafeBufferPointer { c in
                present.withUnsafeBufferPointer { p in
                    for i in 0..<count {
                        let distance = distance(c.baseAddress! + i * stride, p.baseAddress! + i * stride, ce, pe)
                        guard distance.isFinite else { continue }
                        let switches = Float(transitions[i][extra.number] ?? 0)
                        let days = Float(abs(meanTimes[i] - extra.meanTime) / 86_400)
                        toExtra[i] = Self.cost(observations[i], ne, distance, switches: switches, days: days, config: config)
                    }
                }
            }
        }
        let n = count + (extra == nil ? 0 : 1)
        var best: (i: Int, j: Int, cost: Float)?
        for i in 0..<n {
            for j in (i + 1)..<n {
                let c = j == count ? toExtra[i] : mergeCost(i, j, config: config)
                if best == nil || c < best!.cost { best = (i, j, c) }
            }
        }
        return best
    }

    /// ``Recommender/mergeCost(_:_:weights:)`` of bins `i` and `j`.
    mutating func mergeCost(_ i: Int, _ j: Int, config: EngineConfig) -> Float {
        let distance = pairDistance(i, j)
        guard distance.isFinite else { return .infinity }
        let switches = Float(transitions[i][numbers[j]] ?? 0)
        let days = Float(abs(meanTimes[i] - meanTimes[j]) / 86_400)
        return Self.cost(observations[i], observations[j], distance, switches: switches, days: days, config: config)
    }

    /// The Ward factor times the distance, less for switches between the bins, more for days between them.
    @inline(__always)
    private static func cost(_ na: Float, _ nb: Float, _ distance: Float, switches: Float, days: Float, config: EngineConfig) -> Float {
        na * nb / (na + nb) * distance / (1 + config.mergeTransitionWeight * switches) * (1 + config.mergeTimeWeightPerDay * days)
    }
}
