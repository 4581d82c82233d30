import CBLAS
import SoundtrackContext

/// An in-memory index of a catalog for similar-track search by sound and genre.
///
/// ## Scoring
/// For a query profile `a` and a track `b`:
///
/// - **Sound.** Each present dimension is centred on the catalog mean `μ` and scaled by the
///   square root of a dimension weight `w` (``dimensionWeights``): `z = √w · (x − μ)`. A track's
///   missing dimension is imputed with the mean (`z = 0`). The weighted squared distance over the
///   query's present dimensions is `d² = ‖z_a‖² − 2 z_a·z_b + ‖z_b‖²`. The index keeps, for every
///   track, `z_b²` (8 values), `z_b` (8) and `‖z_b‖²` (1), so that ONE `cblas_sgemv` yields
///   `2 z_a·z_b − ‖z_b‖²` (over the query's present dimensions) for every track at once: with the
///   query `[−m_a, 2 z_a]` over the first 16 values when the query is partial, or `[2 z_a, −1]`
///   over the last 9 when it has all eight dimensions (the common case, 44 % fewer flops).
///   The matrix is stored dimension-major (row-major `17 × count`, a column per track), which
///   makes both cases one contiguous sub-matrix. The distance becomes a similarity in (0, 1]
///   with a Cauchy kernel, `s = 1 / (1 + 4 d² / E)`, where `E = 2 Σ w var` is the expected
///   squared distance between two random tracks of this catalog (so a random track scores
///   about 0.2 and an identical one 1). A track without any audio feature gets the
///   random-track value 0.2 (it is "scored by genre only"); a query without features scores
///   sound as 0 for every track.
/// - **Genre.** `genreWeight` (0.5) × the Jaccard overlap `|Q ∩ G| / |Q ∪ G|` of the query's
///   genres and the track's (lower-cased, trimmed). It is computed from per-genre posting
///   lists, so tracks sharing no genre cost nothing.
/// - An optional `popularityWeight` × popularity / 100.
///
/// The top `k` are selected with a bounded heap (no full sort); ties go to the lower row.
///
/// ```swift
/// let index = CatalogIndex(tracks: tracks)
/// let near = index.similar(to: AudioProfile(seed.audio), genres: ["pop"], k: 10)
/// ```
public final class CatalogIndex: Sendable {
    /// Weight of each profile dimension in the distance (tempo, energy, valence, danceability,
    /// acousticness, instrumentalness, speechiness, loudness): energy and valence are what
    /// listeners notice first; instrumentalness and speechiness are skewed and count less.
    public static let dimensionWeights = SIMD8<Float>(1.0, 1.5, 1.2, 1.0, 1.0, 0.7, 0.7, 0.8)
    /// Weight of the genre Jaccard overlap added to the sound similarity.
    public static let genreWeight: Float = 0.5
    /// The sound similarity given to tracks without audio features (that of a random track).
    public static let featurelessSimilarity: Float = 0.2

    /// The tracks, in row order. An index read back from its stored form (``init(storedForm:)``)
    /// makes them on first use, with what that form keeps (no titles, artists, albums, years or
    /// durations).
    public var tracks: [Track] { trackTable.tracks }
    /// The normalised (uncentred) profile of each track.
    public let profiles: [AudioProfile]
    /// The catalog mean of each normalised dimension (over tracks that have it).
    public let mean: SIMD8<Float>
    /// Popularity / 100 of each track (0 when unknown).
    public let popularity: [Float]

    /// Values kept a track: `z²` (8), `z` (8), `‖z‖²` (1).
    private static let columns = 17
    /// The weighted centred profiles, stored dimension-major: row-major `17 × count`, one row a
    /// value (the rows described at ``columns``) and one column a track. BLAS then runs as 16 or 9
    /// contiguous passes over the tracks, and a full query uses the last 9 rows as a sub-matrix.
    private let matrix: [Float]
    /// Rows without any audio feature (scored as ``featurelessSimilarity``).
    private let featureless: [Int]
    /// Whether each row is in ``featureless``.
    private let isFeatureless: [Bool]
    /// `w · var` of each dimension over the catalog.
    private let spread: SIMD8<Float>
    let genreNames: [String]
    private let genreIDs: [String: Int32]
    /// The genres of row `r`, by number and sorted, are `genreFlat[genreStart[r]..<genreStart[r + 1]]`
    /// (one contiguous table instead of an array per row, for the searches among a few hundred rows).
    let genreStart: [Int32]
    let genreFlat: [Int32]
    /// `z` of each row (see ``matrix``), row-major: the searches among candidates read one row's
    /// eight values together.
    private let zRows: [SIMD8<Float>]
    private let postings: [[Int32]]
    /// The track id of each row.
    private let ids: [String]
    /// The FNV-1a hash of each row's id (kept in the stored form).
    let rowHashes: [UInt64]
    /// Rows by the FNV-1a hash of their id (``StableHash/fnv1a(_:seed:)``); ``HashRows/shared`` where
    /// two rows share a hash (two ids, or one id twice), whose ids are then found in ``sharedRows``.
    /// Integer keys hash far cheaper than strings.
    private let rowsByHash: HashRows
    /// The first row of each id whose hash is ``HashRows/shared`` (usually none).
    private let sharedRows: [String: Int]
    /// The tracks as given, or made from the stored form when first asked for.
    let trackTable: TrackTable

    /// The number of tracks.
    public let count: Int

    /// Builds the index. When ids repeat, ``row(of:)`` finds the first.
    public convenience init(tracks: [Track]) {
        self.init(columns: IndexColumns(tracks: tracks), tracks: TrackTable(tracks))
    }

    /// Builds the index from its columns; `tracks` gives the tracks themselves.
    init(columns: IndexColumns, tracks: TrackTable) {
        self.trackTable = tracks
        let n = columns.ids.count
        count = n
        ids = columns.ids
        let profiles = columns.profiles
        self.profiles = profiles

        var sum = SIMD8<Float>.zero, present = SIMD8<Float>.zero
        for p in profiles {
            sum += p.values
            present += p.mask
        }
        let mean = sum / present.replacing(with: 1, where: present .== 0)
        self.mean = mean
        var sq = SIMD8<Float>.zero
        for p in profiles {
            let d = (p.values - mean) * p.mask
            sq += d * d
        }
        let variance = sq / present.replacing(with: 1, where: present .== 0)
        spread = variance * Self.dimensionWeights

        let root = Self.dimensionWeights.squareRoot()
        var matrix = [Float](repeating: 0, count: n * Self.columns)
        var featureless: [Int] = []
        var zRows = [SIMD8<Float>](repeating: .zero, count: n)
        matrix.withUnsafeMutableBufferPointer { matrix in
            zRows.withUnsafeMutableBufferPointer { zRows in
                for (r, p) in profiles.enumerated() {
                    let z = root * (p.values - mean) * p.mask
                    zRows[r] = z
                    let z2 = z * z
                    for d in 0..<8 {
                        matrix[d * n + r] = z2[d]
                        matrix[(8 + d) * n + r] = z[d]
                    }
                    matrix[16 * n + r] = z2.sum()
                    if p.isEmpty { featureless.append(r) }
                }
            }
        }
        self.matrix = matrix
        self.zRows = zRows
        self.featureless = featureless
        var isFeatureless = [Bool](repeating: false, count: n)
        for r in featureless { isFeatureless[r] = true }
        self.isFeatureless = isFeatureless

        genreNames = columns.genreNames
        var genreIDs: [String: Int32] = [:]
        for (i, name) in columns.genreNames.enumerated() { genreIDs[name] = Int32(i) }
        self.genreIDs = genreIDs
        genreStart = columns.genreStart
        genreFlat = columns.genreFlat
        self.postings = Self.postings(genreStart: columns.genreStart, genreFlat: columns.genreFlat, genres: columns.genreNames.count)

        var rowsByHash = HashRows(capacity: n)
        let hashes = columns.hashes
        rowHashes = hashes
        for (r, h) in hashes.enumerated() { rowsByHash.insert(h, row: r) }
        var sharedRows: [String: Int] = [:]
        for (r, h) in hashes.enumerated() where rowsByHash.row(h) == HashRows.shared && sharedRows[columns.ids[r]] == nil {
            sharedRows[columns.ids[r]] = r
        }
        self.rowsByHash = rowsByHash
        self.sharedRows = sharedRows
        popularity = columns.popularity.map { Float(min(max($0 ?? 0, 0), 100)) / 100 }
    }

    /// Each genre's rows in row order, from every row's genre numbers (``genreStart``,
    /// ``genreFlat``): counted, laid out in one buffer, then cut into a list a genre.
    private static func postings(genreStart: [Int32], genreFlat: [Int32], genres: Int) -> [[Int32]] {
        var end = [Int](repeating: 0, count: genres + 1)
        for g in genreFlat { end[Int(g) + 1] += 1 }
        for g in 0..<genres { end[g + 1] += end[g] }
        var next = end
        var flat = [Int32](repeating: 0, count: genreFlat.count)
        flat.withUnsafeMutableBufferPointer { flat in
            for r in 0..<(genreStart.count - 1) {
                for j in Int(genreStart[r])..<Int(genreStart[r + 1]) {
                    let g = Int(genreFlat[j])
                    flat[next[g]] = Int32(r)
                    next[g] += 1
                }
            }
        }
        return (0..<genres).map { Array(flat[end[$0]..<end[$0 + 1]]) }
    }

    /// The row of a track id, or `nil`.
    public func row(of id: String) -> Int? { row(ofHash: StableHash.fnv1a(id), id: id) }

    /// The row of a track id whose FNV-1a hash is `hash` (known already, for example a bin song's
    /// key), or `nil`: one integer lookup and one comparison of the id instead of hashing it.
    public func row(ofHash hash: UInt64, id: String) -> Int? {
        guard let r = rowsByHash.row(hash) else { return nil }
        if r >= 0 { return ids[Int(r)] == id ? Int(r) : nil }
        return sharedRows[id]
    }

    /// The track id of a row.
    public func id(ofRow row: Int) -> String { ids[row] }

    /// The normalised (lower-cased, trimmed) genres of a row.
    public func genres(ofRow row: Int) -> [String] { genreNumbers(ofRow: row).map { genreNames[Int($0)] } }

    /// A row's genres as numbers (stable within this index; the same genre, the same number).
    public func genreNumbers(ofRow row: Int) -> ArraySlice<Int32> { genreFlat[Int(genreStart[row])..<Int(genreStart[row + 1])] }

    /// Every row's genre numbers at once, for loops over many rows: row `r`'s are
    /// `flat[start[r]..<start[r + 1]]`, those of ``genreNumbers(ofRow:)`` in the same order.
    public var genreTable: (start: [Int32], flat: [Int32]) { (genreStart, genreFlat) }

    /// The normalised name of a genre number of ``genreNumbers(ofRow:)``.
    public func genreName(number: Int32) -> String { genreNames[Int(number)] }

    /// The number of tracks that carry a genre (normalised), 0 if none.
    public func trackCount(ofGenre genre: String) -> Int {
        genreIDs[Self.normalise(genre)].map { postings[Int($0)].count } ?? 0
    }

    /// Whether a row has any audio feature.
    public func hasAudioFeatures(row: Int) -> Bool { !profiles[row].isEmpty }

    /// The mean profile of a set of tracks: each dimension averaged over the tracks that have it
    /// (missing where none does). An empty set gives an empty profile.
    public func profile(ofRows rows: [Int]) -> AudioProfile {
        var sum = SIMD8<Float>.zero, present = SIMD8<Float>.zero
        for r in rows {
            sum += profiles[r].values
            present += profiles[r].mask
        }
        let mask = SIMD8<Float>.zero.replacing(with: 1, where: present .> 0)
        return AudioProfile(values: sum / present.replacing(with: 1, where: present .== 0), mask: mask)
    }

    /// The tracks most similar to a row's track (sound and genres), the track itself excluded.
    /// - Parameters:
    ///   - row: the row of the seed track.
    ///   - k: how many to return.
    ///   - excluding: further rows to leave out.
    public func similar(toTrack row: Int, k: Int, excluding: Set<Int> = []) -> [(row: Int, score: Float)] {
        var ex = excluding
        ex.insert(row)
        let genres = Array(genreNumbers(ofRow: row))
        return search(
            profiles[row], genreIDs: genres, querySize: genres.count, k: k,
            excluding: ex, popularityWeight: 0)
    }

    /// The `k` tracks most similar to a profile and a set of genres, best first.
    /// - Parameters:
    ///   - profile: the target sound; may be partial or empty (then genres alone decide).
    ///   - genres: target genres (matched lower-cased and trimmed); empty for none.
    ///   - k: how many to return (fewer when the catalog is smaller).
    ///   - excluding: rows to leave out (recent plays, disliked tracks…).
    ///   - popularityWeight: weight of popularity / 100 added to the score (0 by default).
    /// - Returns: rows and scores, best first; equal scores in row order.
    public func similar(
        to profile: AudioProfile, genres: Set<String> = [], k: Int, excluding: Set<Int> = [],
        popularityWeight: Float = 0
    ) -> [(row: Int, score: Float)] {
        let query = genreQuery(genres)
        return search(
            profile, genreIDs: query.ids, querySize: query.size, k: k, excluding: excluding,
            popularityWeight: popularityWeight)
    }

    /// The catalog's ids of `genres` (normalised, each once; unknown genres have none) and how many
    /// distinct genres were asked for (the size of the query set in the Jaccard overlap).
    private func genreQuery(_ genres: Set<String>) -> (ids: [Int32], size: Int) {
        var ids: [Int32] = []
        var unknown = Set<String>()
        for g in genres {
            // A catalog genre as the index spells it (the engine's queries: genres of tracks) is
            // normalised already; others are normalised first. Each known genre has one id.
            if let id = genreIDs[g] ?? genreIDs[Self.normalise(g)] {
                if !ids.contains(id) { ids.append(id) }
                continue
            }
            let key = Self.normalise(g)
            if !key.isEmpty { unknown.insert(key) }
        }
        return (ids, ids.count + unknown.count)
    }

    /// What a search for `profile` compares every track with: its weighted centred values `za`
    /// (0 where absent), `base = Σ za²`, and the gain that turns the distance into a similarity.
    private struct ProfileQuery {
        let mask: SIMD8<Float>
        let za: SIMD8<Float>
        let base: Float
        let gain: Float
        /// Whether every dimension is present (the search then reads fewer matrix rows).
        let full: Bool

        /// The similarity `1 / (1 + gain · max(base − dot, 0))` for a track whose product with the
        /// query (the terms of ``CatalogIndex/matrix``) is `dot`.
        func similarity(dot: Float) -> Float { 1 / (1 + gain * max(base - dot, 0)) }
    }

    private func profileQuery(_ profile: AudioProfile) -> ProfileQuery {
        let m = profile.mask
        let za = Self.dimensionWeights.squareRoot() * (profile.values - mean) * m
        return ProfileQuery(
            mask: m, za: za, base: (za * za).sum(), gain: 4 / max(2 * (spread * m).sum(), 1e-6),
            full: profile.presentCount == AudioProfile.dimension)
    }

    /// The `k` tracks of `candidates` most similar to a profile and a set of genres, best first:
    /// the scores of ``similar(to:genres:k:excluding:popularityWeight:)`` (without popularity),
    /// computed for those rows only.
    /// - Parameters:
    ///   - candidates: catalog rows, in any order; duplicates and rows outside the catalog are ignored.
    ///   - excluding: rows to leave out.
    /// - Returns: rows and scores, best first; equal scores in row order.
    public func similar(
        to profile: AudioProfile, genres: Set<String> = [], k: Int, among candidates: [Int], excluding: Set<Int> = []
    ) -> [(row: Int, score: Float)] {
        let query = genreQuery(genres)
        return similar(to: profile, genreNumbers: query.ids, querySize: query.size, k: k, among: candidates, excluding: excluding)
    }

    /// ``similar(to:genres:k:among:excluding:)`` for genres given by number (``genreNumbers(ofRow:)``,
    /// each once): the engine's query, the top genres of a bin's liked tracks, without the names.
    public func similar(
        to profile: AudioProfile, genreNumbers: [Int32], k: Int, among candidates: [Int], excluding: Set<Int> = []
    ) -> [(row: Int, score: Float)] {
        similar(to: profile, genreNumbers: genreNumbers, querySize: genreNumbers.count, k: k, among: candidates, excluding: excluding)
    }

    private func similar(
        to profile: AudioProfile, genreNumbers query: [Int32], querySize: Int, k: Int, among candidates: [Int],
        excluding: Set<Int>
    ) -> [(row: Int, score: Float)] {
        let n = count
        guard k > 0, n > 0 else { return [] }
        // Each row once, and not an excluded one: a bit per catalog row (excluded rows are marked
        // first), in the candidates' order. The order does not change the result: ties are
        // decided by row (``TopK/offer(row:score:)``).
        var rows: [Int] = []
        rows.reserveCapacity(candidates.count)
        var seen = [UInt64](repeating: 0, count: (n + 63) >> 6)
        seen.withUnsafeMutableBufferPointer { bits in
            for r in excluding where r >= 0 && r < n { bits[r >> 6] |= 1 << UInt64(r & 63) }
            for r in candidates where r >= 0 && r < n {
                let bit: UInt64 = 1 << UInt64(r & 63)
                if bits[r >> 6] & bit == 0 {
                    bits[r >> 6] |= bit
                    rows.append(r)
                }
            }
        }
        guard !rows.isEmpty else { return [] }
        var scores = [Float](repeating: 0, count: rows.count)
        scores.withUnsafeMutableBufferPointer { scores in
            if !profile.isEmpty {
                // The terms of the full-catalog search's matrix product, from each row's own `z`
                // (one read a row instead of 17 strided ones).
                let pq = profileQuery(profile)
                zRows.withUnsafeBufferPointer { zs in
                    isFeatureless.withUnsafeBufferPointer { featureless in
                        for (i, r) in rows.enumerated() {
                            if featureless[r] {
                                scores[i] = Self.featurelessSimilarity
                                continue
                            }
                            let z = zs[r]
                            let z2 = z * z
                            let dot = pq.full ? (2 * pq.za * z).sum() - z2.sum() : (2 * pq.za * z - pq.mask * z2).sum()
                            scores[i] = pq.similarity(dot: dot)
                        }
                    }
                }
            }
            guard !query.isEmpty else { return }
            // The query's genres as a bit per genre number: one test per genre of a row (a track
            // has a dozen genres or more, a scan of the query for each cost most of the search).
            let q = Float(querySize)
            var asked = [UInt64](repeating: 0, count: (genreNames.count + 63) >> 6)
            for g in query where g >= 0 && Int(g) < genreNames.count { asked[Int(g) >> 6] |= 1 << UInt64(g & 63) }
            genreStart.withUnsafeBufferPointer { start in
                genreFlat.withUnsafeBufferPointer { flat in
                    asked.withUnsafeBufferPointer { asked in
                        for (i, r) in rows.enumerated() {
                            let from = Int(start[r]), to = Int(start[r + 1])
                            var c = 0
                            for j in from..<to {
                                let g = Int(flat[j])
                                c &+= Int((asked[g >> 6] >> UInt64(g & 63)) & 1)
                            }
                            guard c > 0 else { continue }
                            scores[i] += Self.genreWeight * Float(c) / (q + Float(to - from) - Float(c))
                        }
                    }
                }
            }
        }
        var top = TopK(k: min(k, rows.count))
        for (i, r) in rows.enumerated() { top.offer(row: r, score: scores[i]) }
        return top.sorted()
    }

    /// The `k` most popular tracks, most popular first (ties in row order).
    public func mostPopular(k: Int, excluding: Set<Int> = []) -> [Int] {
        var scores = popularity
        for r in excluding where r >= 0 && r < count { scores[r] = -.infinity }
        return Self.topK(scores, k: k).map(\.row)
    }

    // MARK: - Search

    private func search(
        _ profile: AudioProfile, genreIDs query: [Int32], querySize: Int, k: Int, excluding: Set<Int>,
        popularityWeight: Float
    ) -> [(row: Int, score: Float)] {
        let n = count
        guard n > 0, k > 0 else { return [] }
        var scores = [Float](repeating: 0, count: n)

        if !profile.isEmpty {
            let pq = profileQuery(profile)
            let (m, za, full) = (pq.mask, pq.za, pq.full)
            var x = [Float](repeating: 0, count: Self.columns)
            if full {
                for d in 0..<8 { x[d] = 2 * za[d] }
                x[8] = -1
            } else {
                for d in 0..<8 {
                    x[d] = -m[d]
                    x[8 + d] = 2 * za[d]
                }
            }
            let (first, rows) = full ? (8, 9) : (0, 16)
            matrix.withUnsafeBufferPointer { a in
                x.withUnsafeBufferPointer { xp in
                    scores.withUnsafeMutableBufferPointer { y in
                        cblas_sgemv(
                            CblasRowMajor, CblasTrans, Int32(rows), Int32(n), 1, a.baseAddress! + first * n, Int32(n),
                            xp.baseAddress, 1, 0, y.baseAddress, 1)
                    }
                }
            }
            scores.withUnsafeMutableBufferPointer { s in
                for r in 0..<n {
                    s[r] = pq.similarity(dot: s[r])
                }
            }
            for r in featureless { scores[r] = Self.featurelessSimilarity }
        }

        if !query.isEmpty {
            // Count shared genres per track from the posting lists, then add the Jaccard bonus.
            var shared = [UInt16](repeating: 0, count: n)
            var touched: [Int32] = []
            shared.withUnsafeMutableBufferPointer { c in
                for g in query {
                    postings[Int(g)].withUnsafeBufferPointer { rows in
                        for r in rows {
                            if c[Int(r)] == 0 { touched.append(r) }
                            c[Int(r)] &+= 1
                        }
                    }
                }
            }
            let q = Float(querySize)
            scores.withUnsafeMutableBufferPointer { s in
                for r in touched {
                    let c = Float(shared[Int(r)])
                    let union = q + Float(genreStart[Int(r) + 1] - genreStart[Int(r)]) - c
                    s[Int(r)] += Self.genreWeight * c / union
                }
            }
        }

        if popularityWeight != 0 {
            for r in 0..<n { scores[r] += popularityWeight * popularity[r] }
        }
        for r in excluding where r >= 0 && r < n { scores[r] = -.infinity }
        return Self.topK(scores, k: k)
    }

    /// The `k` best scores above −∞, best first, ties to the lower row (a bounded min-heap, no full sort).
    static func topK(_ scores: [Float], k: Int) -> [(row: Int, score: Float)] {
        var top = TopK(k: min(k, scores.count))
        guard top.k > 0 else { return [] }
        scores.withUnsafeBufferPointer { s in
            for r in 0..<s.count where s[r] > top.floor {
                top.offer(row: r, score: s[r])
            }
        }
        return top.sorted()
    }

    static func normalise(_ genre: String) -> String { CatalogField.trim(genre).lowercased() }
}

/// The `k` best (row, score) pairs seen so far, the worst on top of a binary heap.
///
/// Rows may be offered in any order (``offer(row:score:)``); ties go to the lower row.
struct TopK {
    let k: Int
    private var rows: [Int] = []
    private var scores: [Float] = []
    /// A score must beat this to enter: −∞ until `k` are kept, then the worst kept score.
    private(set) var floor: Float = -.infinity

    init(k: Int) {
        self.k = max(k, 0)
        rows.reserveCapacity(self.k)
        scores.reserveCapacity(self.k)
    }

    /// Whether entry `i` ranks below entry `j`.
    private func worse(_ i: Int, _ j: Int) -> Bool {
        scores[i] < scores[j] || (scores[i] == scores[j] && rows[i] > rows[j])
    }

    /// Offers a pair, rows in any order: an equal score displaces the worst kept pair when its row
    /// is lower, so ties go to the lower row.
    mutating func offer(row: Int, score: Float) {
        guard k > 0, score > floor || (rows.count == k && score == floor && row < rows[0]) else { return }
        if rows.count < k {
            rows.append(row)
            scores.append(score)
            var i = rows.count - 1
            while i > 0 {
                let p = (i - 1) / 2
                guard worse(i, p) else { break }
                rows.swapAt(i, p)
                scores.swapAt(i, p)
                i = p
            }
            if rows.count == k { floor = scores[0] }
            return
        }
        rows[0] = row
        scores[0] = score
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < k, worse(l, m) { m = l }
            if r < k, worse(r, m) { m = r }
            if m == i { break }
            rows.swapAt(i, m)
            scores.swapAt(i, m)
            i = m
        }
        floor = scores[0]
    }

    /// The kept pairs, best first.
    func sorted() -> [(row: Int, score: Float)] {
        zip(rows, scores).map { (row: $0, score: $1) }
            .sorted { $0.score > $1.score || ($0.score == $1.score && $0.row < $1.row) }
    }
}
