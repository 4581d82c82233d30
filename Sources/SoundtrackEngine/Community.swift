import Foundation
import SoundtrackCatalog
import SoundtrackContext

/// What all users together taught the engine about tracks: how often each was liked and by how
/// many people, which tracks the same people like (item–item co-occurrence), and in which contexts
/// each was liked. The collaborative and popularity signals of the ranker
/// (``Recommender/rankTracks(_:state:candidates:count:)``) read it; docs/scoring.md gives the formulas.
///
/// Tracks are keyed by their row in the engine's catalog index. The model is updated one event at
/// a time (``record(user:row:like:dislike:attributes:)``), so the evaluators keep it current as the
/// simulated or replayed people answer, and the store rebuilds it from the feedback log.
///
/// ```swift
/// var community = Community()
/// community.record(user: "u-1", row: 12, like: true, dislike: false, attributes: attributes)
/// community.stats(of: 12).likes   // 1
/// ```
public struct Community: Sendable, Equatable {
    /// Counts of one track.
    public struct Stats: Sendable, Equatable {
        /// Like events (likes, completes, ratings of 4 and 5).
        public var likes: Int32 = 0
        /// Events of any kind.
        public var events: Int32 = 0
        /// Distinct people who liked the track.
        public var likers: Int32 = 0
        /// Distinct people who reacted to it at all.
        public var raters: Int32 = 0

        /// Counts from their four values.
        public init(likes: Int32 = 0, events: Int32 = 0, likers: Int32 = 0, raters: Int32 = 0) {
            self.likes = likes
            self.events = events
            self.likers = likers
            self.raters = raters
        }
    }

    /// What a model kept in a store holds for everyone, read when it is loaded: the counts of every
    /// track, the most liked, the scale and the events recorded.
    public struct Header: Sendable, Equatable {
        public var stats: [Int: Stats]
        public var top: [Int]
        public var maxLikes: Int32
        public var maxRaters: Int32
        public var version: UInt64

        /// Creates a header.
        public init(stats: [Int: Stats], top: [Int], maxLikes: Int32, maxRaters: Int32, version: UInt64) {
            self.stats = stats
            self.top = top
            self.maxLikes = maxLikes
            self.maxRaters = maxRaters
            self.version = version
        }
    }

    /// How many of a person's earlier liked (and reacted-to) tracks a new one is paired with: the
    /// co-occurrence counts then cost at most this many updates per event.
    public static let pairWindow = 100

    private(set) var stats: [Int: Stats] = [:]
    /// Co-like counts: how many people liked both tracks (the rows ``loaded`` from the base, or new).
    private(set) var coLiked: [Int: [Int: Int32]] = [:]
    /// Co-reaction counts: how many people reacted to both tracks.
    private(set) var coRated: [Int: [Int: Int32]] = [:]
    /// Like events per track and context attribute (``ContextAttributes``).
    private(set) var contextLikes: [Int: [UInt64: Int32]] = [:]
    /// Each person's liked and reacted-to tracks, oldest first (the pairing window).
    private var liked: [String: [Int]] = [:]
    private var rated: [String: [Int]] = [:]
    private var likedSet: [String: Set<Int>] = [:]
    private var ratedSet: [String: Set<Int>] = [:]
    /// The largest like count and rater count of any track (the popularity scale).
    public private(set) var maxLikes: Int32 = 0
    /// See ``maxLikes``.
    public private(set) var maxRaters: Int32 = 0
    /// Changes with every recorded event: caches derived from the model compare it.
    public private(set) var version: UInt64 = 0
    /// The ``topCapacity`` most liked tracks, most first (ties: the lower row), kept as likes are
    /// recorded, so that ``mostLiked(_:)`` does not sort every track.
    private(set) var top: [Int] = []
    /// How many of the most liked tracks are kept in order.
    public static let topCapacity = 64
    /// Per context attribute, the ``contextTopCapacity`` tracks most liked in it, most first (ties:
    /// the lower row), kept as likes are recorded (``contextMostLiked(_:limit:)``).
    private(set) var contextTop: [UInt64: [Int]] = [:]
    /// How many of the most liked tracks of each attribute are kept in order.
    public static let contextTopCapacity = 32

    /// Where the co-occurrences, contexts and people not in memory yet are read from (a model kept
    /// in a store, ``CommunityBase``); `nil`: everything is in memory.
    private let base: (any CommunityBase)?
    /// Rows, people and attributes whose values are in memory (read from the base or recorded).
    private var loadedRows: Set<Int> = []
    private var loadedPeople: Set<String> = []
    private var loadedTops: Set<UInt64> = []
    /// What changed since the model was loaded or last written (``changes``).
    public private(set) var changed = Changes()

    /// The parts of a model that changed since it was loaded or written.
    public struct Changes: Sendable, Equatable {
        public var rows: Set<Int> = []
        public var people: Set<String> = []
        public var attributes: Set<UInt64> = []
        /// Events recorded.
        public var events = 0

        /// No change.
        public init() {}
    }

    /// An empty model.
    public init() {
        base = nil
    }

    /// A model kept in a store: the header now, the rest from `base` as it is needed.
    public init(header: Header, base: any CommunityBase) {
        self.base = base
        stats = header.stats
        for (row, s) in header.stats where row >= 0 { notePeople(row, s) }
        top = header.top
        maxLikes = header.maxLikes
        maxRaters = header.maxRaters
        version = header.version
    }

    /// The counts of a track (zeros when nobody reacted to it).
    public func stats(of row: Int) -> Stats { stats[row] ?? Stats() }

    /// Records one event: a like or dislike (or neither: a rating of 3) of a track by a person, in
    /// a context described by its attributes.
    public mutating func record(user: String, row: Int, like: Bool, dislike: Bool, attributes: [UInt64]) {
        version &+= 1
        changed.events += 1
        loadPerson(user)
        load(row)
        changed.people.insert(user)
        changed.rows.insert(row)
        var s = stats[row] ?? Stats()
        s.events += 1
        if ratedSet[user, default: []].insert(row).inserted {
            s.raters += 1
            for other in rated[user, default: []].suffix(Self.pairWindow) {
                load(other)
                changed.rows.insert(other)
                coRated[row, default: [:]][other, default: 0] += 1
                coRated[other, default: [:]][row, default: 0] += 1
            }
            rated[user, default: []].append(row)
        }
        if like {
            s.likes += 1
            if likedSet[user, default: []].insert(row).inserted {
                s.likers += 1
                for other in liked[user, default: []].suffix(Self.pairWindow) {
                    load(other)
                    changed.rows.insert(other)
                    coLiked[row, default: [:]][other, default: 0] += 1
                    coLiked[other, default: [:]][row, default: 0] += 1
                }
                liked[user, default: []].append(row)
            }
            for a in attributes {
                contextLikes[row, default: [:]][a, default: 0] += 1
                raiseInContextTop(row, attribute: a)
            }
        }
        stats[row] = s
        notePeople(row, s)
        maxLikes = max(maxLikes, s.likes)
        maxRaters = max(maxRaters, s.raters)
        if like { raiseInTop(row) }
    }

    /// Brings a row's co-occurrences and contexts into memory from the base (once).
    private mutating func load(_ row: Int) {
        guard let base, loadedRows.insert(row).inserted else { return }
        if let co = base.coLiked(row), !co.isEmpty { coLiked[row] = co.dictionary }
        if let co = base.coRated(row), !co.isEmpty { coRated[row] = co.dictionary }
        if let c = base.contexts(row), !c.isEmpty { contextLikes[row] = c }
    }

    /// Brings a person's pairing windows into memory from the base (once).
    private mutating func loadPerson(_ user: String) {
        guard let base, loadedPeople.insert(user).inserted, let p = base.person(user) else { return }
        liked[user] = p.liked
        rated[user] = p.rated
        likedSet[user] = Set(p.liked)
        ratedSet[user] = Set(p.rated)
    }

    /// Brings an attribute's most liked into memory from the base (once).
    private mutating func loadTop(_ attribute: UInt64) {
        guard let base, loadedTops.insert(attribute).inserted, let rows = base.contextTop(attribute) else { return }
        contextTop[attribute] = rows
    }

    /// Moves a track whose likes grew to its place among the most liked.
    private mutating func raiseInTop(_ row: Int) {
        let stats = self.stats
        Self.raise(row, in: &top, capacity: Self.topCapacity) { stats[$0]?.likes ?? 0 }
    }

    /// Moves a track whose likes in a context attribute grew to its place among that attribute's most liked.
    private mutating func raiseInContextTop(_ row: Int, attribute: UInt64) {
        loadTop(attribute)
        changed.attributes.insert(attribute)
        // The other rows of the list are read through the base when they are not in memory.
        for other in contextTop[attribute] ?? [] { load(other) }
        let counts = contextLikes
        Self.raise(row, in: &contextTop[attribute, default: []], capacity: Self.contextTopCapacity) { counts[$0]?[attribute] ?? 0 }
    }

    /// Moves `row`, whose count grew, to its place in `list` (the `capacity` rows of most `count`,
    /// most first, ties by the lower row). Counts only grow, so a row outside the list can only
    /// enter it by growing: the list stays exact.
    private static func raise(_ row: Int, in list: inout [Int], capacity: Int, count: (Int) -> Int32) {
        func before(_ a: Int, _ b: Int) -> Bool {
            let ca = count(a), cb = count(b)
            return ca != cb ? ca > cb : a < b
        }
        var i: Int
        if let at = list.firstIndex(of: row) {
            i = at
        } else {
            guard list.count < capacity || before(row, list[list.count - 1]) else { return }
            if list.count == capacity { list.removeLast() }
            list.append(row)
            i = list.count - 1
        }
        while i > 0, before(list[i], list[i - 1]) {
            list.swapAt(i, i - 1)
            i -= 1
        }
    }

    /// Visits a row's co-likes (``coLiked``) or co-reactions held in memory.
    private func forEachCoOccurrenceInMemory(_ row: Int, liked useLikes: Bool, _ body: (Int, Int32) -> Void) {
        guard let co = (useLikes ? coLiked : coRated)[row] else { return }
        for (j, n) in co { body(j, n) }
    }

    /// An attribute's most liked, from memory or the base.
    func mostLiked(attribute: UInt64) -> [Int] {
        if base == nil || loadedTops.contains(attribute) { return contextTop[attribute] ?? [] }
        return base!.contextTop(attribute) ?? []
    }

    /// The tracks most liked in contexts sharing the attributes, most first by
    /// ``contextLikes(of:attributes:)`` (ties: the lower row), at most `limit`, drawn from each
    /// attribute's most liked (``contextTopCapacity`` of each): what a pick adds to its candidates
    /// for the context, without reading every track.
    public func contextMostLiked(_ attributes: [UInt64], limit: Int) -> [Int] {
        guard limit > 0 else { return [] }
        var rows: [Int] = []
        for a in attributes { rows += mostLiked(attribute: a) }
        rows.sort()
        var scored: [(row: Int, likes: Float)] = []
        var last = -1
        for r in rows where r != last {
            last = r
            scored.append((r, contextLikes(of: r, attributes: attributes)))
        }
        scored.sort { ($0.likes, $1.row) > ($1.likes, $0.row) }
        return scored.prefix(limit).map(\.row)
    }

    /// `Σ_{l ∈ profile} co(l, j) / √(n_l · n_j)` for every track `j` co-occurring with the profile
    /// (cosine of the tracks' people vectors; a track of the profile scores by the profile's other
    /// tracks, so that the user's own tracks and new ones are on one scale): `liked` uses
    /// co-likes and distinct likers, else co-reactions and distinct raters.
    ///
    /// Summed in a dense array by row (each track's terms in profile order, as a dictionary summed
    /// them), with every track's people count read from ``people``: a user's hundreds of liked
    /// tracks, each with hundreds of co-occurrences, cost no hash lookups.
    public func neighbourScores(of profile: [Int], liked useLikes: Bool) -> [Int: Float] {
        let (rows, sums) = neighbourSums(of: profile, liked: useLikes)
        var out: [Int: Float] = [:]
        out.reserveCapacity(rows.count)
        for j in rows { out[j] = sums[j] }
        return out
    }

    /// ``neighbourScores(of:liked:)`` as the tracks that have a score, in the order first reached,
    /// and every track's score by row (0 for the others): what a pick reads, without a dictionary
    /// of thousands of tracks.
    public func neighbourSums(of profile: [Int], liked useLikes: Bool) -> (rows: [Int], sums: [Float]) {
        let counts = useLikes ? people.likers : people.raters
        var sums = [Float](repeating: 0, count: counts.count)
        var seen = [Bool](repeating: false, count: counts.count)
        var touched: [Int] = []
        counts.withUnsafeBufferPointer { counts in
            sums.withUnsafeMutableBufferPointer { sums in
                seen.withUnsafeMutableBufferPointer { seen in
                    @inline(__always) func add(_ j: Int, _ co: Int32, _ nl: Float) {
                        let nj = Float(j >= 0 && j < counts.count ? counts[j] : 0)
                        guard nj > 0 else { return }
                        if !seen[j] {
                            seen[j] = true
                            touched.append(j)
                        }
                        sums[j] += Float(co) / (nl * nj).squareRoot()
                    }
                    for l in profile {
                        let nl = Float(l < counts.count ? counts[l] : 0)
                        guard nl > 0 else { continue }
                        if base == nil || loadedRows.contains(l) {
                            forEachCoOccurrenceInMemory(l, liked: useLikes) { j, co in add(j, co, nl) }
                        } else {
                            // A row of the base, read in place: one loop over its pairs, no call a pair.
                            base!.withCoOccurrences(l, liked: useLikes) { packed in
                                for k in 0..<packed.count { add(packed.row(k), packed.count(k), nl) }
                            }
                        }
                    }
                }
            }
        }
        return (touched, sums)
    }

    /// Every track's distinct likers and raters by row (``Stats/likers``, ``Stats/raters``), kept
    /// beside ``stats`` for the collaborative scores.
    private(set) var people = (likers: [Int32](), raters: [Int32]())

    /// Keeps ``people`` current for a row whose counts changed.
    private mutating func notePeople(_ row: Int, _ s: Stats) {
        if row >= people.likers.count {
            let n = max(row + 1, people.likers.count * 2)
            people.likers += [Int32](repeating: 0, count: n - people.likers.count)
            people.raters += [Int32](repeating: 0, count: n - people.raters.count)
        }
        people.likers[row] = s.likers
        people.raters[row] = s.raters
    }

    /// `Σ_{a ∈ attributes} likes of the track in a` (like events of the track in contexts sharing
    /// each attribute).
    public func contextLikes(of row: Int, attributes: [UInt64]) -> Float {
        if let base, !loadedRows.contains(row) { return Float(base.contextLikes(row, attributes: attributes)) }
        guard let counts = contextLikes[row] else { return 0 }
        var sum: Int32 = 0
        for a in attributes { sum += counts[a] ?? 0 }
        return Float(sum)
    }

    /// The tracks with the most likes in contexts sharing the attributes (``contextLikes(of:attributes:)``),
    /// most first (ties: the lower row), at most `limit`: over every track in memory (the
    /// evaluators' baselines; a model read from a store lists only the tracks it loaded).
    public func contextOrder(_ attributes: [UInt64], limit: Int) -> [Int] {
        contextLikes.compactMap { row, counts -> (Int, Int32)? in
            var sum: Int32 = 0
            for a in attributes { sum += counts[a] ?? 0 }
            return sum > 0 ? (row, sum) : nil
        }
        .sorted { ($0.1, $1.0) > ($1.1, $0.0) }.prefix(limit).map(\.0)
    }

    /// The tracks with the most likes, most first (ties: the lower row), at most `k`.
    public func mostLiked(_ k: Int) -> [Int] {
        if k <= Self.topCapacity { return Array(top.prefix(k)) }
        return stats.filter { $0.value.likes > 0 }.sorted { ($0.value.likes, $1.key) > ($1.value.likes, $0.key) }.prefix(k).map(\.key)
    }

    // MARK: - Writing to a store

    /// The header to write (every track's counts, the most liked, the scale, the events).
    public var header: Header {
        Header(stats: stats, top: top, maxLikes: maxLikes, maxRaters: maxRaters, version: version)
    }

    /// A changed row's co-likes, co-reactions and contexts (in memory: a changed row is loaded).
    public func record(ofRow row: Int) -> (coLiked: [Int: Int32], coRated: [Int: Int32], contexts: [UInt64: Int32]) {
        (coLiked[row] ?? [:], coRated[row] ?? [:], contextLikes[row] ?? [:])
    }

    /// A changed person's pairing windows.
    public func windows(of user: String) -> (liked: [Int], rated: [Int]) {
        (liked[user] ?? [], rated[user] ?? [])
    }

    /// A changed attribute's most liked.
    public func top(of attribute: UInt64) -> [Int] {
        contextTop[attribute] ?? []
    }

    /// Forgets what changed: it was written.
    public mutating func markWritten() {
        changed = Changes()
    }

    /// Marks changes again (a write that failed).
    public mutating func remark(_ c: Changes) {
        changed.rows.formUnion(c.rows)
        changed.people.formUnion(c.people)
        changed.attributes.formUnion(c.attributes)
        changed.events += c.events
    }

    /// Equal when the counts are (the per-person pairing windows follow from the same events); for
    /// models whose rows are all in memory.
    public static func == (a: Community, b: Community) -> Bool {
        a.stats == b.stats && a.coLiked == b.coLiked && a.coRated == b.coRated && a.contextLikes == b.contextLikes
    }
}

/// Where a ``Community`` kept in a store reads what it has not in memory yet, row by row: the
/// co-occurrences and contexts of a track, a person's pairing windows, an attribute's most liked.
/// The model reads each row at most once for its writes (``coLiked(_:)``, ``coRated(_:)``,
/// ``contexts(_:)``); what picks read (``withCoOccurrences(_:liked:_:)``, ``contextLikes(_:attributes:)``)
/// an implementation may keep or read again.
public protocol CommunityBase: Sendable {
    /// A row's co-likes (`nil`: none).
    func coLiked(_ row: Int) -> CoOccurrences?
    /// A row's co-reactions.
    func coRated(_ row: Int) -> CoOccurrences?
    /// A row's like events by context attribute.
    func contexts(_ row: Int) -> [UInt64: Int32]?
    /// A person's liked and reacted-to tracks, oldest first.
    func person(_ user: String) -> (liked: [Int], rated: [Int])?
    /// An attribute's most liked tracks, most first.
    func contextTop(_ attribute: UInt64) -> [Int]?
    /// Calls `body` with a row's co-likes (`liked`) or co-reactions in their stored layout, lent for
    /// the call (nothing when the row has none): what the collaborative scores read
    /// (``Community/neighbourScores(of:liked:)``), a heavy listener's hundreds of rows at a pick.
    func withCoOccurrences(_ row: Int, liked: Bool, _ body: (PackedCoOccurrences) -> Void)
    /// `Σ_{a ∈ attributes}` the row's like events in context attribute `a` (what
    /// ``Community/contextLikes(of:attributes:)`` reads for every candidate of a pick).
    func contextLikes(_ row: Int, attributes: [UInt64]) -> Int32
}

/// A row's co-occurrences as a store keeps them: (row, count) pairs of little-endian Int32s, one
/// after the other, each row once; valid only inside the call that lends them.
public struct PackedCoOccurrences {
    /// The pairs' bytes (8 a pair).
    public let bytes: UnsafeRawBufferPointer

    /// Pairs over `bytes` (a multiple of 8 bytes; a partial pair at the end is not read).
    public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The number of pairs.
    public var count: Int { bytes.count / 8 }
    /// The row of pair `k`.
    @inline(__always) public func row(_ k: Int) -> Int { Int(Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: k * 8, as: Int32.self))) }
    /// The count of pair `k`.
    @inline(__always) public func count(_ k: Int) -> Int32 { Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: k * 8 + 4, as: Int32.self)) }
}

/// The context of an event as attributes shared by all users (`daypart=morning`, `weekend`,
/// `motion: walking`, `tag company = family`, `place: home`): what the contextual popularity of the
/// ranker compares across people. Per-user slots (tags, learned places) are named through the
/// user's vocabulary, so the same tag means the same attribute for everyone.
public enum ContextAttributes {
    /// The attributes of a feature vector, as stable 64-bit hashes.
    public static func of(_ x: FeatureVector, vocabulary: FeatureVocabulary) -> [UInt64] {
        names(x, vocabulary: vocabulary).map { StableHash.fnv1a($0) }
    }

    /// The attributes by name: the part of the day and weekday/weekend (from the time slots, when
    /// present), every one-hot or multi-hot value the context has, and the temperature in 10 °C bands.
    public static func names(_ x: FeatureVector, vocabulary: FeatureVocabulary) -> [String] {
        var out: [String] = []
        if x.mask[Slots.todSin] > 0, x.mask[Slots.todCos] > 0 {
            var hour = Double(atan2(x.values[Slots.todSin], x.values[Slots.todCos])) / (2 * .pi) * 24
            if hour < 0 { hour += 24 }
            let part =
                hour < 5
                ? "night"
                : hour < 8
                    ? "early morning"
                    : hour < 11
                        ? "morning"
                        : hour < 14
                            ? "midday"
                            : hour < 18 ? "afternoon" : hour < 22 ? "evening" : "night"
            out.append("daypart=\(part)")
        }
        if x.mask[Slots.weekend] > 0 { out.append(x.values[Slots.weekend] >= 0.5 ? "weekend" : "weekday") }
        if x.mask[Slots.temp] > 0 { out.append("temperature=\(Int((x.values[Slots.temp] * 60 - 20) / 10))") }
        for i in FeatureLayout.slots.indices where ExplanationSlots.categorical[i] && x.mask[i] > 0 && x.values[i] >= 0.5 {
            out.append(vocabulary.displayName(slot: i))
        }
        return out
    }

    enum Slots {
        static let todSin = FeatureLayout.require("time.tod_sin")
        static let todCos = FeatureLayout.require("time.tod_cos")
        static let weekend = FeatureLayout.require("time.weekend")
        static let temp = FeatureLayout.require("weather.temp")
    }
}

/// One row's co-occurrence counts as a stored model keeps them: other rows and counts, by row.
public struct CoOccurrences: Sendable {
    public var rows: [Int32]
    public var counts: [Int32]

    /// Counts from their rows and counts (the same length).
    public init(rows: [Int32], counts: [Int32]) {
        precondition(rows.count == counts.count, "a count a row")
        self.rows = rows
        self.counts = counts
    }

    /// Counts from a row as a store keeps it.
    public init(_ packed: PackedCoOccurrences) {
        self.init(rows: (0..<packed.count).map { Int32(packed.row($0)) }, counts: (0..<packed.count).map { packed.count($0) })
    }

    public var isEmpty: Bool { rows.isEmpty }

    /// Visits each (row, count).
    public func forEach(_ body: (Int, Int32) -> Void) {
        rows.withUnsafeBufferPointer { r in
            counts.withUnsafeBufferPointer { c in
                for i in 0..<r.count { body(Int(r[i]), c[i]) }
            }
        }
    }

    /// As a dictionary, to be counted in.
    public var dictionary: [Int: Int32] {
        var out: [Int: Int32] = [:]
        out.reserveCapacity(rows.count)
        forEach { out[$0] = $1 }
        return out
    }
}
