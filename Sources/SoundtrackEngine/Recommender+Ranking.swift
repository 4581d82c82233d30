import Foundation
import SoundtrackCatalog
import SoundtrackContext
import Synchronization

/// What the ranker derives from a user's evidence and the community, kept with the user's state
/// between picks and rebuilt when either changes.
struct RankingCache: Sendable {
    var evidenceVersion: UInt64 = .max
    var communityVersion: UInt64 = .max
    /// The community's ``CommunitySource/generation`` it was built from: a model replaced since
    /// (counted again after a forget) may have any version.
    var communityGeneration: UInt64 = .max
    /// Per catalog row: the sum and count of the user's ratings of the track (a like counts 5, a
    /// dislike 1, a rating its stars), over all bins.
    var own = RowTable<OwnEvidence>()
    /// Rows the user liked (mean rating above 3) and reacted to, in no particular order.
    var liked: [Int] = []
    var rated: [Int] = []
    /// `1 − distinct tracks / events`: how much the user comes back to the same tracks.
    var repetition: Float = 0
    /// The user's likes per genre, indexed by genre number (``CatalogIndex/genreNumbers(ofRow:)``),
    /// up to the highest genre liked (a genre past the end has none); and the likes in all.
    var genreLikes: [Float] = []
    var likes: Float = 0
    /// The collaborative scores of ``Community/neighbourScores(of:liked:)``, already divided by
    /// the square root of the profile's size.
    var knn = RowTable<Float>()
    var knnRated = RowTable<Float>()
    /// The collaborative neighbours, strongest first (candidates): by co-likes, and by co-reactions.
    var knnOrder: [Int] = []
    var knnRatedOrder: [Int] = []
    /// The user's liked rows, best rated first (candidates).
    var likedOrder: [Int] = []
    /// Catalog rows that sound like each bin, by bin number (candidates), with the bin's
    /// ``Bin/soundSignature`` they were found for and how many songs the bin had then (other
    /// bins' feedback leaves them valid).
    var sound: [Int: (signature: UInt64, songs: Int, rows: [Int])] = [:]
    /// The community's most liked rows (candidates).
    var popular: [Int] = []
    /// Each bin's songs with evidence, by bin number: catalog row, sum and count of ratings (the
    /// context-weighted own signal reads them every pick).
    var binEvidence: [Int: [(row: Int, sum: Float, n: Float)]] = [:]
    /// The audio profile each bin's ranking matches, by bin number, with the bin's
    /// ``Bin/evidenceSignature`` it was computed for.
    var binProfile: [Int: (signature: UInt64, profile: AudioProfile)] = [:]
    /// ``binEvidence`` turned around, for the context-weighted own signal: each row with
    /// evidence maps to its entries (the bins that rated it, in bin order, by their index among
    /// ``ContextEvidence/bins``, the bins' numbers when it was built); rebuilt by
    /// ``Recommender/refreshContextEvidence(_:)`` when the bins differ.
    var context = ContextEvidence()
}

/// The user's evidence by catalog row and bin (``RankingCache/binEvidence`` turned around): what
/// the context-weighted own signal reads for each candidate, instead of looking up every rated
/// song of every bin among the candidates.
struct ContextEvidence: Sendable {
    /// One bin's evidence on one row: the bin's index in ``bins``, and the sum and count of its ratings.
    struct Entry: Sendable {
        var bin: Int32
        var sum: Float
        var n: Float
    }
    /// The numbers of the bins it was built for, in the state's order; `nil` before it is built.
    var bins: [Int]?
    /// Each row's entries: `entries[start ..< end]`, in bin order.
    var spans = RowTable<(start: Int32, end: Int32)>()
    var entries: [Entry] = []

    /// Whether it was built for these bins (the same numbers in the same order).
    func isCurrent(for bins: [Bin]) -> Bool {
        guard let numbers = self.bins, numbers.count == bins.count else { return false }
        for (n, b) in zip(numbers, bins) where n != b.number { return false }
        return true
    }

    /// The entries of `bins`' evidence lists, grouped by row, each row's in bin order (and in list
    /// order within a bin): the order in which the signal adds them up.
    init(bins: [Bin], evidence: [Int: [(row: Int, sum: Float, n: Float)]]) {
        self.bins = bins.map(\.number)
        var all: [(row: Int, seq: Int, entry: Entry)] = []
        for (b, bin) in bins.enumerated() {
            guard let list = evidence[bin.number] else { continue }
            for e in list { all.append((e.row, all.count, Entry(bin: Int32(b), sum: e.sum, n: e.n))) }
        }
        all.sort { ($0.row, $0.seq) < ($1.row, $1.seq) }
        spans = RowTable(capacity: all.count)
        entries.reserveCapacity(all.count)
        var i = 0
        while i < all.count {
            let row = all[i].row, start = i
            while i < all.count, all[i].row == row {
                entries.append(all[i].entry)
                i += 1
            }
            spans[row] = (Int32(start), Int32(i))
        }
    }

    /// Not built: ``isCurrent(for:)`` is false.
    init() {}
}

extension Bin {
    /// A fingerprint of the bin's songs and their evidence (track, likes, dislikes, rating, in
    /// order): what the bin's profile is computed from, so it is kept while it is the same,
    /// whatever happens to the user's other bins.
    var evidenceSignature: UInt64 {
        Self.fingerprint(songs, extra: nil)
    }

    /// A fingerprint of what the bin's sound neighbours are searched from: its songs that have
    /// evidence (a like, a dislike or a rating, in order) and its cold-start prior. A song played
    /// without feedback joins the bin at nearly every pick; it leaves the neighbours as they are
    /// (if it is among them, the pick's candidates already hold it as a song of the bin).
    var soundSignature: UInt64 {
        Self.fingerprint(songs.lazy.filter { $0.likes != 0 || $0.dislikes != 0 || $0.rating != 0 }, extra: StableHash.fnv1a(prior ?? ""))
    }

    /// FNV-1a over each song's key and evidence, then `extra`, folded with the number of songs.
    private static func fingerprint(_ songs: some Sequence<BinSong>, extra: UInt64?) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        @inline(__always) func mix(_ v: UInt64) { h = (h ^ v) &* 0x0000_0100_0000_01b3 }
        var n: UInt64 = 0
        for s in songs {
            mix(s.key.value)
            mix(UInt64(truncatingIfNeeded: s.likes) &<< 42 ^ UInt64(truncatingIfNeeded: s.dislikes) &<< 21 ^ UInt64(truncatingIfNeeded: s.rating))
            n += 1
        }
        if let extra { mix(extra) }
        return h ^ n
    }
}

extension CatalogIndex {
    /// The row of a bin song's track (found by its key's hash).
    @inline(__always)
    func row(of song: borrowing BinSong) -> Int? { row(ofHash: song.key.value, id: song.trackId) }
}

/// Rows scored by the ranker: `scores[k]` and the signals `signals[k·n ..< k·n + n]` of `rows[k]`,
/// and the positions `k` best first (ties: the lower row; all of them, or the first few asked for).
struct ScoredRows {
    var rows: [Int]
    var scores: [Float]
    var signals: [Float]
    var order: [Int]
}

/// The sum and count of a user's ratings of one track, over all bins.
struct OwnEvidence: Sendable {
    var sum: Float
    var n: Float
}

/// One ranked track: its catalog row, blended score and the signals that made it.
public struct RankedTrack: Sendable, Equatable {
    /// The catalog row.
    public var row: Int
    /// The blended score `Σ w_k f_k`.
    public var score: Float
    /// The value of each signal, in ``RankerModel/signals`` order.
    public var signals: [Float]
}

extension Recommender {
    /// The evidence one bin song carries: the sum and count of its ratings (a like counts 5, a
    /// dislike 1, a `rate` its stars; the like or dislike of the latest rating is that rating).
    static func evidence(_ s: BinSong) -> (sum: Float, n: Float) {
        let rated = s.rating > 0
        let likes = s.likes - (s.rating >= 4 ? 1 : 0), dislikes = s.dislikes - (rated && s.rating <= 2 ? 1 : 0)
        let n = Float(max(0, likes) + max(0, dislikes) + (rated ? 1 : 0))
        let sum = Float(5 * max(0, likes) + max(0, dislikes)) + Float(s.rating)
        return (sum, n)
    }

    /// How many events of other users the community may gain before a user's collaborative
    /// scores are computed again (the user's own feedback always refreshes them).
    static let communityRefresh: UInt64 = 1_000

    /// A bin's songs with evidence, as ``RankingCache/binEvidence`` lists them.
    static func evidenceList(_ bin: Bin, index: CatalogIndex) -> [(row: Int, sum: Float, n: Float)] {
        var list: [(row: Int, sum: Float, n: Float)] = []
        for s in bin.songs {
            let e = evidence(s)
            guard e.n > 0, let row = index.row(of: s) else { continue }
            list.append((row, e.sum, e.n))
        }
        return list
    }

    /// The catalog rows of the bin's liked songs (mean rating above 3), in the bin's order.
    static func likedRows(of bin: Bin, index: CatalogIndex) -> [Int] {
        bin.songs.compactMap { s in
            let e = evidence(s)
            return e.n > 0 && e.sum / e.n > 3 ? index.row(of: s) : nil
        }
    }

    /// After a merge that kept the user's evidence (``merge(_:into:state:)``): the merged bin's
    /// evidence list replaces the two bins' in the ranking cache. A stale cache is left to
    /// ``refreshRankingCache(_:index:)``.
    func mergeBinEvidence(into merged: Bin, dropping dropped: Int, state: inout UserState) {
        state.rankingCache.sound[dropped] = nil
        state.rankingCache.binProfile[dropped] = nil
        guard state.rankingCache.evidenceVersion == state.evidenceVersion else { return }
        state.rankingCache.binEvidence[dropped] = nil
        let list = Self.evidenceList(merged, index: catalog.index())
        state.rankingCache.binEvidence[merged.number] = list.isEmpty ? nil : list
    }

    /// Rebuilds the user's ranking cache when the user's evidence changed, when the community
    /// gained ``communityRefresh`` events since it was built, or when the community's model was
    /// replaced (counted again after a forget: nothing of the forgotten person stays in the cache).
    func refreshRankingCache(_ state: inout UserState, index: CatalogIndex) {
        // The generation first: a model replaced after it was read leaves the cache stale, to be
        // built again at the next pick, never marked as built from a model it was not built from.
        let communityGeneration = community?.generation ?? 0
        let communityVersion = community?.read { $0.version } ?? 0
        let current = state.rankingCache
        guard
            current.evidenceVersion != state.evidenceVersion
                || communityVersion &- current.communityVersion >= Self.communityRefresh
                || (current.communityVersion == .max && communityVersion != .max)
                || communityGeneration != current.communityGeneration
        else { return }
        var cache = RankingCache()
        cache.evidenceVersion = state.evidenceVersion
        cache.communityVersion = communityVersion
        cache.communityGeneration = communityGeneration
        var events: Float = 0
        for bin in state.bins {
            let list = Self.evidenceList(bin, index: index)
            for e in list {
                let o = cache.own[e.row] ?? OwnEvidence(sum: 0, n: 0)
                cache.own[e.row] = OwnEvidence(sum: o.sum + e.sum, n: o.n + e.n)
                events += e.n
            }
            if !list.isEmpty { cache.binEvidence[bin.number] = list }
        }
        for (row, e) in cache.own.pairs {
            cache.rated.append(row)
            if e.sum / e.n > 3 {
                cache.liked.append(row)
                cache.likes += 1
                for g in index.genreNumbers(ofRow: row) {
                    if Int(g) >= cache.genreLikes.count { cache.genreLikes += repeatElement(0, count: Int(g) + 1 - cache.genreLikes.count) }
                    cache.genreLikes[Int(g)] += 1
                }
            }
        }
        cache.liked.sort()
        cache.rated.sort()
        let own = cache.own
        cache.likedOrder = cache.liked.sorted { (own[$0]!.sum / own[$0]!.n, $1) > (own[$1]!.sum / own[$1]!.n, $0) }
        cache.repetition = events > 0 ? 1 - Float(cache.own.count) / events : 0
        if let community {
            let limit = config.candidates
            let (knn, knnRated, popular) = community.read { c in
                (c.neighbourSums(of: cache.liked, liked: true), c.neighbourSums(of: cache.rated, liked: false), c.mostLiked(limit / 4))
            }
            // Each person's strongest neighbour scores 1: the sums grow with the person's history and
            // the deployment's density, so one weight for every person and every deployment reads
            // them on one scale (docs/scoring.md, `knn`).
            (cache.knn, cache.knnOrder) = Self.scaled(knn, limit)
            (cache.knnRated, cache.knnRatedOrder) = Self.scaled(knnRated, limit)
            cache.popular = popular
        }
        // Sound neighbours and profiles of bins stay valid while the bin is the same (those of bins
        // merged or folded away are dropped).
        for bin in state.bins {
            if let entry = current.sound[bin.number] { cache.sound[bin.number] = entry }
            if let entry = current.binProfile[bin.number] { cache.binProfile[bin.number] = entry }
        }
        state.rankingCache = cache
    }

    /// Collaborative sums (``Community/neighbourSums(of:liked:)``) divided by the strongest, by
    /// row, and the `limit` rows of highest score, highest first (ties: the lower row), kept by
    /// ``TopK`` instead of sorting them all.
    static func scaled(_ scores: (rows: [Int], sums: [Float]), _ limit: Int) -> (table: RowTable<Float>, strongest: [Int]) {
        let (rows, sums) = scores
        let scale = max(rows.lazy.map { sums[$0] }.max() ?? 1, 1e-6)
        var table = RowTable<Float>(capacity: rows.count)
        for row in rows { table[row] = sums[row] / scale }
        let order = TopK<(row: Int, score: Float)>.best(
            capacity: min(limit, rows.count),
            { top in
                for row in rows { top.offer((row, sums[row])) { a, b in a.score != b.score ? a.score > b.score : a.row < b.row } }
            }, \.row)
        return (table, order)
    }

    /// The tracks a pick ranks: the chosen bin's songs, the user's own liked tracks from any bin,
    /// the strongest collaborative neighbours (by co-likes, then by co-reactions), the community's
    /// most liked tracks, those most liked in contexts sharing the pick's `attributes`
    /// (``ContextAttributes``) and catalog tracks that sound like the bin — at most
    /// ``EngineConfig/candidates``, the recent picks left out.
    public func candidateRows(
        binIndex: Int, attributes: [UInt64], state: inout UserState, index: CatalogIndex, rng: inout SeededGenerator
    ) -> [Int] {
        let limit = config.candidates
        var out: [Int] = []
        out.reserveCapacity(limit)
        // Rows already taken or recently played (a RowTable: no SipHash per candidate).
        var skip = RowTable<Bool>(capacity: limit + config.repeatWindow)
        let recentTracks = state.recentTracks, recentKeys = state.recentKeys
        let recent = min(recentTracks.count, recentKeys.count)
        for i in max(0, recent - config.repeatWindow)..<recent {
            if let r = index.row(ofHash: recentKeys[i].value, id: recentTracks[i]) { skip[r] = true }
        }
        func add(_ row: Int) {
            guard out.count < limit, skip[row] == nil else { return }
            skip[row] = true
            out.append(row)
        }
        // The bin's songs, best like rate first, at most three quarters of the list: a bin that has
        // played hundreds of songs still leaves room for the user's taste and new sounds, and its
        // best songs, not its oldest, are the ones ranked.
        let own = limit - limit / 4
        for r in songRowsByRate(binIndex: binIndex, state: &state, index: index) {
            guard out.count < own else { break }
            if r >= 0 { add(Int(r)) }
        }
        // Each source its share first; then, while there is room, the rest of the collaborative and
        // popular lists (a user with few bin songs and likes still gets a full list to rank).
        let cache = state.rankingCache
        for r in cache.likedOrder.prefix(limit / 4) { add(r) }
        for r in cache.knnOrder.prefix(limit / 4) { add(r) }
        for r in cache.knnRatedOrder.prefix(limit / 8) { add(r) }
        for r in cache.popular.prefix(limit / 8) { add(r) }
        let contextual = attributes.isEmpty ? [] : community?.read { $0.contextMostLiked(attributes, limit: limit / 4) } ?? []
        for r in contextual.prefix(limit / 8) { add(r) }
        for r in soundRows(binIndex: binIndex, state: &state, index: index) { add(r) }
        for r in cache.knnOrder.dropFirst(limit / 4) { add(r) }
        for r in cache.knnRatedOrder.dropFirst(limit / 8) { add(r) }
        for r in cache.popular.dropFirst(limit / 8) { add(r) }
        for r in contextual.dropFirst(limit / 8) { add(r) }
        return out
    }

    /// The catalog rows of a bin's songs, best like rate first (``Bin/rateRows``): looked up once
    /// after each change of the songs, not at every pick.
    func songRowsByRate(binIndex: Int, state: inout UserState, index: CatalogIndex) -> [Int32] {
        // Read first: a mutating access to a bin of a state that shares its bins (the copies that
        // `--read-only` picks from) would copy every bin.
        if let rows = state.bins[binIndex].rateRows { return rows }
        state.bins[binIndex].orderSongsByRate()
        let rows = state.bins.withUnsafeBufferPointer { bins in
            bins[binIndex].songs.withUnsafeBufferPointer { songs in
                bins[binIndex].rateOrder!.map { Int32(index.row(of: songs[Int($0)]) ?? -1) }
            }
        }
        state.bins[binIndex].rateRows = rows
        return rows
    }

    /// The bin's ``soundNeighbours(of:count:index:)``, from the ranking cache while the bin's
    /// evidence and prior are the same (``Bin/soundSignature``).
    ///
    /// The neighbours leave out the bin's own songs, also those played without feedback, which
    /// join the bin at nearly every pick and which the signature does not count: such a song
    /// appends to the bin's songs (a song's evidence, and a merge's, change the signature). While
    /// none of the songs appended since the search is among its rows, a new search would find the
    /// same rows (the best `k` of a ranking less one more track that is not among them); once one
    /// is, the search runs again. So the rows are those a state loaded from the store finds,
    /// whatever its cache saw before (a pick of the HTTP service equals the CLI's after a restart).
    func soundRows(binIndex: Int, state: inout UserState, index: CatalogIndex) -> [Int] {
        let number = state.bins[binIndex].number
        let signature = state.bins[binIndex].soundSignature
        let songs = state.bins[binIndex].songs.count
        if let cached = state.rankingCache.sound[number], cached.signature == signature, cached.songs <= songs {
            if cached.songs == songs { return cached.rows }
            let joined = state.bins.withUnsafeBufferPointer { bins in
                bins[binIndex].songs[cached.songs...].contains { s in index.row(of: s).map(cached.rows.contains) ?? false }
            }
            if !joined {
                state.rankingCache.sound[number]!.songs = songs
                return cached.rows
            }
        }
        let rows = soundNeighbours(of: state.bins[binIndex], count: config.candidates / 8, index: index)
        state.rankingCache.sound[number] = (signature, songs, rows)
        return rows
    }

    /// The audio profile the bin's ranking matches: the mean of its liked songs (else of all its
    /// songs), from the ranking cache while the bin's evidence is the same.
    func binProfile(binIndex: Int, state: inout UserState, index: CatalogIndex) -> AudioProfile {
        let bin = state.bins[binIndex]
        let signature = bin.evidenceSignature
        if let p = state.rankingCache.binProfile[bin.number], p.signature == signature { return p.profile }
        let likedRows = Self.likedRows(of: bin, index: index)
        let profile = index.profile(ofRows: likedRows.isEmpty ? bin.songs.compactMap { index.row(of: $0) } : likedRows)
        state.rankingCache.binProfile[bin.number] = (signature, profile)
        return profile
    }

    /// Builds the ranking cache's ``ContextEvidence`` again when the bins changed since (a bin
    /// created, merged or folded: their indices moved) or the evidence did (a new cache).
    func refreshContextEvidence(_ state: inout UserState) {
        guard !state.rankingCache.context.isCurrent(for: state.bins) else { return }
        state.rankingCache.context = ContextEvidence(bins: state.bins, evidence: state.rankingCache.binEvidence)
    }

    /// Fills the ranking cache for every bin (sound neighbours, profiles): for a state that is
    /// copied for each pick and never written back (a read-only batch), whose copies would
    /// otherwise each compute them again.
    func warmRankingCache(_ state: inout UserState) {
        let index = catalog.index()
        refreshRankingCache(&state, index: index)
        for i in state.bins.indices {
            _ = soundRows(binIndex: i, state: &state, index: index)
            _ = binProfile(binIndex: i, state: &state, index: index)
        }
        refreshContextEvidence(&state)
    }

    /// Catalog rows that sound like a bin's liked songs: among the ``SoundCache/trackNeighbours``
    /// nearest tracks of each liked song, those nearest their mean audio profile and top genres;
    /// else the tracks that sound like the bin's cold-start prior. The bin's songs are left out.
    func soundNeighbours(of bin: Bin, count: Int, index: CatalogIndex) -> [Int] {
        guard index.count > 0, count > 0 else { return [] }
        let members = Set(bin.songs.compactMap { index.row(of: $0) })
        let liked = Self.likedRows(of: bin, index: index)
        if liked.isEmpty {
            // A bin without likes sounds like its prior: the prior's nearest tracks are searched once
            // per catalog and shared by every such bin, less the bin's own songs (the same rows as
            // a search that excludes them, as long as the shared list is long enough).
            guard let prior = priors.contexts.first(where: { $0.name == bin.prior }) ?? priors.contexts.first(where: { $0.name == "default" })
            else { return [] }
            return sharedSearch("sound:" + prior.name, capacity: count, k: count, excluding: members, index: index) { k, excluding in
                index.similar(to: prior.profile, genres: Set(prior.genres), k: k, excluding: excluding).map(\.row)
            }
        }
        let genres = Self.topGenres(ofRows: liked, count: 5, index: index)
        // Candidates: the nearest tracks of each liked song (searched once per track and catalog,
        // shared by every bin and person who likes it), ranked by the bin's sound and genres.
        // A bin of many likes takes fewer of each song's (best first): about 256 in all, at least 8 each.
        let each = max(8, min(SoundCache.trackNeighbours, 256 / liked.count))
        var pool: [Int] = []
        for r in liked {
            pool += soundCache.neighbours(ofRow: r, index: index) { index.similar(toTrack: r, k: SoundCache.trackNeighbours).map(\.row) }
                .prefix(each)
        }
        return index.similar(to: index.profile(ofRows: liked), genreNumbers: genres, k: count, among: pool, excluding: members).map(\.row)
    }

    /// The `count` genres most frequent among `rows` (ties by name), by number, most frequent
    /// first. Counted by sorting the rows' genre numbers (no hash table), and the best kept by
    /// ``TopK`` (names compared only between genres of equal counts).
    static func topGenres(ofRows rows: [Int], count: Int, index: CatalogIndex) -> [Int32] {
        guard count > 0 else { return [] }
        var all: [Int32] = []
        for r in rows { all += index.genreNumbers(ofRow: r) }
        all.sort()
        func before(_ a: (genre: Int32, n: Int), _ b: (genre: Int32, n: Int)) -> Bool {
            a.n != b.n ? a.n > b.n : index.genreName(number: a.genre) < index.genreName(number: b.genre)
        }
        return TopK<(genre: Int32, n: Int)>.best(
            capacity: count,
            { top in
                var i = 0
                while i < all.count {
                    var j = i + 1
                    while j < all.count, all[j] == all[i] { j += 1 }
                    top.offer((genre: all[i], n: j - i), before: before)
                    i = j
                }
            }, \.genre)
    }

    /// The first `k` rows of `search(k, excluding)`, a search over the whole catalog that is the
    /// same for every caller with this `key` (a cold-start prior's sound): the search runs once per
    /// catalog index for `capacity` rows and ``SoundCache/spare`` more, and each caller's
    /// exclusions are filtered out of that shared list. The rows are those of the search itself
    /// whenever `k ≤ capacity` and at most `spare` rows are excluded (results are in score order,
    /// ties by row); otherwise the search runs for this caller alone.
    func sharedSearch(
        _ key: String, capacity: Int, k: Int, excluding: Set<Int>, index: CatalogIndex,
        search: (_ k: Int, _ excluding: Set<Int>) -> [Int]
    ) -> [Int] {
        let spare = SoundCache.spare
        let shared = soundCache.rows(key: key, index: index) { search(capacity + spare, []) }
        if k <= capacity, excluding.count <= spare, shared.count == min(capacity + spare, index.count) {
            return Array(shared.lazy.filter { !excluding.contains($0) }.prefix(k))
        }
        return search(k, excluding)
    }

    /// Ranks tracks for a context by the blended score of docs/scoring.md ("Ranking tracks"):
    /// `Σ_k w_k f_k` over the signals of ``RankerModel/signals``, weights from ``ranker``, best first
    /// (ties: the lower catalog row).
    ///
    /// - Parameters:
    ///   - x: the context's features.
    ///   - binIndex: the bin chosen for the context (its liked songs give the sound to match).
    ///   - similarities: every bin's similarity to `x`, in bin order (the context weights of the
    ///     user's own evidence).
    ///   - state: the user's state (its ranking cache is brought up to date).
    ///   - rows: the catalog rows to rank.
    /// - Returns: every row with its score and signals, best first.
    public func rankTracks(
        _ x: FeatureVector, binIndex: Int?, similarities: [Float], state: inout UserState, rows: [Int]
    ) -> [RankedTrack] {
        let scored = scoreRows(x, binIndex: binIndex, similarities: similarities, state: &state, rows: rows)
        let n = RankerModel.signals.count
        return scored.order.map { k in
            RankedTrack(row: rows[k], score: scored.scores[k], signals: Array(scored.signals[(k * n)..<(k * n + n)]))
        }
    }

    /// The rows scored by the blend, in one flat buffer of signals (``rankTracks(_:binIndex:similarities:state:rows:)``
    /// without an array per row: what a pick uses).
    /// - Parameter first: when given, ``ScoredRows/order`` holds only the best `first` positions.
    func scoreRows(
        _ x: FeatureVector, binIndex: Int?, similarities: [Float], state: inout UserState, rows: [Int], first: Int? = nil
    ) -> ScoredRows {
        let index = catalog.index()
        refreshRankingCache(&state, index: index)
        refreshContextEvidence(&state)
        let cache = state.rankingCache
        let n = RankerModel.signals.count
        // The sound of the bin's liked songs (else all its songs), kept while the bin's evidence and songs are the same.
        let profile = binIndex.map { binProfile(binIndex: $0, state: &state, index: index) } ?? AudioProfile()
        // Context attributes only matter when there is a community to count them in.
        let communityEvents = community?.read { $0.version } ?? 0
        let attributes = communityEvents > 0 ? ContextAttributes.of(x, vocabulary: state.vocabulary) : []
        let (stats, maxLikes, maxRaters, context): ([Community.Stats], Float, Float, [Float]) =
            communityEvents > 0
            ? community!.read { c in
                (
                    rows.map { c.stats(of: $0) }, Float(c.maxLikes), Float(c.maxRaters),
                    rows.map { c.contextLikes(of: $0, attributes: attributes) }
                )
            } : ([], 0, 0, [])
        let likeScale = log1p(max(maxLikes, 1)), raterScale = log1p(max(maxRaters, 1))
        let weights = ranker.weights
        var scores = [Float](repeating: 0, count: rows.count)
        var signals = [Float](repeating: 0, count: rows.count * n)
        let hasCommunity = communityEvents > 0
        let profiles = index.profiles
        let genreTable = index.genreTable
        let byRow = cache.context
        let evidence = byRow.entries
        genreTable.start.withUnsafeBufferPointer { genreStart in
            genreTable.flat.withUnsafeBufferPointer { genreFlat in
                cache.genreLikes.withUnsafeBufferPointer { genreLikes in
                    signals.withUnsafeMutableBufferPointer { all in
                        for (k, row) in rows.enumerated() {
                            let f = UnsafeMutableBufferPointer(rebasing: all[(k * n)..<(k * n + n)])
                            if let e = cache.own[row] {
                                f[0] = (e.sum / e.n - 3) / 2
                                f[1] = 1
                                f[2] = cache.repetition
                            }
                            // The user's own evidence in similar contexts: Σ_b sim_b Σ (r − 3)/2 over the bin's ratings of j.
                            if let span = byRow.spans[row] {
                                var num: Float = 0, den: Float = 0
                                for j in Int(span.start)..<Int(span.end) {
                                    let e = evidence[j], b = Int(e.bin)
                                    let sim = b < similarities.count ? similarities[b] : 0
                                    guard sim > 0 else { continue }
                                    num += sim * (e.sum - 3 * e.n) / 2
                                    den += sim * e.n
                                }
                                if den > 0 { f[3] = num / (den + 1) }
                            }
                            if cache.knn.count > 0 { f[4] = cache.knn[row] ?? 0 }
                            if cache.knnRated.count > 0 { f[5] = cache.knnRated[row] ?? 0 }
                            let genres = Int(genreStart[row])..<Int(genreStart[row + 1])
                            if !genres.isEmpty {
                                var g: Float = 0
                                for j in genres {
                                    let genre = Int(genreFlat[j])
                                    if genre < genreLikes.count { g += genreLikes[genre] }
                                }
                                f[6] = (g + 0.1) / (cache.likes + 1)
                            }
                            if hasCommunity {
                                let s = stats[k]
                                f[7] = log1p(Float(s.likes)) / likeScale
                                f[8] = log1p(Float(s.raters)) / raterScale
                                f[9] = log1p((context[k] + Float(s.likes)) / Float(attributes.count + 1)) / likeScale
                            }
                            f[10] = Self.soundSimilarity(profiles[row], profile)
                            var score: Float = 0
                            for i in 0..<n { score += weights[i] * f[i] }
                            scores[k] = score
                        }
                    }
                }
            }
        }
        @inline(__always) func before(_ a: Int, _ b: Int) -> Bool { scores[a] != scores[b] ? scores[a] > scores[b] : rows[a] < rows[b] }
        var order: [Int]
        if let first, first < rows.count {
            // Only the first `first` positions are needed (a pick's list and its exploration draw):
            // kept by ``TopK`` instead of sorting every candidate.
            order = TopK<Int>.best(capacity: first, { top in for k in rows.indices { top.offer(k, before: before) } }, { $0 })
        } else {
            order = rows.indices.sorted(by: before)
        }
        return ScoredRows(rows: rows, scores: scores, signals: signals, order: order)
    }

    /// `1 − √(mean squared difference)` over the audio dimensions both profiles have, clamped to
    /// 0…1; 0 when they share none.
    static func soundSimilarity(_ a: AudioProfile, _ b: AudioProfile) -> Float {
        let shared = a.mask * b.mask
        let count = shared.sum()
        guard count > 0 else { return 0 }
        let d = (a.values - b.values) * shared
        return max(0, 1 - ((d * d).sum() / count).squareRoot())
    }
}

/// The catalog tracks nearest each cold-start prior, by a key naming the prior and the search
/// (its sound for ranking, its seed tracks for new bins), for the catalog index they were found
/// in: every bin without likes ranks its prior's sound and every new bin is seeded from its
/// prior, and the search over the whole catalog is the same for all of them
/// (``Recommender/sharedSearch(_:capacity:k:excluding:index:search:)``).
final class SoundCache: Sendable {
    /// How many rows more than asked are kept, so that a bin's own songs can be left out.
    static let spare = 64
    /// How many nearest tracks of each liked track are kept (``neighbours(ofRow:index:search:)``).
    static let trackNeighbours = 32
    private let shared = IndexMemo<String>()
    private let tracks = IndexMemo<Int>()

    /// The nearest tracks of catalog row `row` in `index`, computed by `search` when not known yet.
    func neighbours(ofRow row: Int, index: CatalogIndex, search: () -> [Int]) -> [Int] {
        tracks.rows(row, index: index, search: search)
    }

    /// The rows known under `key` for `index`, computed by `search` when not known yet.
    func rows(key: String, index: CatalogIndex, search: () -> [Int]) -> [Int] {
        shared.rows(key, index: index, search: search)
    }
}

/// Catalog rows remembered by key for one catalog index: a new index starts them over. The index
/// itself is kept and compared by identity (its address could be reused by a new index once it is
/// freed). The search runs outside the lock; two threads may both run it for a new key, with the
/// same result.
final class IndexMemo<Key: Hashable & Sendable>: Sendable {
    private let state = Mutex<(index: CatalogIndex?, rows: [Key: [Int]])>((nil, [:]))

    /// The rows of `key` in `index`, computed by `search` when not known yet.
    func rows(_ key: Key, index: CatalogIndex, search: () -> [Int]) -> [Int] {
        if let known = state.withLock({ $0.index === index ? $0.rows[key] : nil }) { return known }
        let rows = search()
        state.withLock {
            if $0.index !== index { $0 = (index, [:]) }
            $0.rows[key] = rows
        }
        return rows
    }
}
