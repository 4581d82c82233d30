import Foundation
import SoundtrackContext
import Synchronization

/// A learned context cluster of one user: where it sits in feature space and the songs it holds.
///
/// `centroid`, `spread` and `observed` all have ``FeatureLayout/dimension`` entries.
/// `observed[i]` is the running frequency with which slot `i` was present in the
/// contexts that formed the bin: a bin never learned from weather has `observed` 0 on
/// the weather slots, and those slots then carry no weight when it is scored.
public struct Bin: Sendable, Equatable {
    /// A process-wide source of vector stamps: every new or changed set of vectors gets a new one.
    private static let stamps = Atomic<UInt64>(0)
    static func nextStamp() -> UInt64 { stamps.add(1, ordering: .relaxed).newValue }

    /// Identifies the current value of ``centroid``, ``spread`` and ``observed``: a copy of a bin
    /// keeps it, any change to one of the three vectors replaces it with a new one. The scoring
    /// matrix keeps each bin's rows with the stamp they were computed from, so it recomputes only
    /// the rows of bins whose vectors changed.
    public private(set) var stamp: UInt64

    /// The bin's number within its user; its public id is `b-<number>`.
    public var number: Int
    /// A readable label derived from the centroid (`study · library · morning`).
    public var label: String
    /// The mean feature vector of the contexts the bin was formed from.
    public var centroid: [Float] { didSet { stamp = Bin.nextStamp() } }
    /// Per-slot spread (an exponentially weighted standard deviation) around the centroid.
    public var spread: [Float] { didSet { stamp = Bin.nextStamp() } }
    /// Per-slot presence frequency in [0, 1].
    public var observed: [Float] { didSet { stamp = Bin.nextStamp() } }
    /// How many snapshots the bin has served (creation counts as one; a merge adds the other's).
    public var observations: Int
    /// The songs of the bin with their like and dislike counts; a track appears at most once.
    public var songs: [BinSong] {
        didSet {
            rateOrder = nil
            rateRows = nil
        }
    }
    /// The indices of ``songs`` by like rate `(likes+1)/(likes+dislikes+2)`, best first and earlier
    /// songs first on ties: what a pick's alternatives list. Derived, computed on first use after
    /// the songs change (``Recommender/prepare(_:)``), not part of equality.
    var rateOrder: [Int32]?
    /// The catalog rows of ``songs`` in ``rateOrder`` (−1 for a track the catalog lacks): the
    /// bin's part of a pick's candidates, read without a lookup of each song's id. Derived like
    /// ``rateOrder`` (``Recommender/songRowsByRate(binIndex:state:index:)``), not part of equality.
    var rateRows: [Int32]?
    /// The name of the cold-start prior the bin was seeded from, if any.
    public var prior: String?
    /// The time of the snapshot that created the bin.
    public var createdAt: Date
    /// The time of the last snapshot the bin served or feedback that changed it.
    public var updatedAt: Date
    /// The mean time (seconds since 1970) of the snapshots the bin served: when in the user's
    /// history the bin lives (bins of the same period merge more readily).
    public var meanTime: Double
    /// How often the user's session moved between this bin and another one, by the other bin's
    /// number: contexts that alternate within a session merge more readily.
    public var transitions: [Int: Int]

    /// The public id, `b-<number>`.
    public var id: String { Bin.id(number) }

    /// The public id of bin `number`: `b-<number>`.
    public static func id(_ number: Int) -> String { "b-" + String(number) }

    /// Creates a bin.
    public init(
        number: Int, label: String, centroid: [Float], spread: [Float], observed: [Float],
        observations: Int, songs: [BinSong], prior: String?, createdAt: Date, updatedAt: Date,
        meanTime: Double? = nil, transitions: [Int: Int] = [:]
    ) {
        self.number = number
        self.label = label
        self.centroid = centroid
        self.spread = spread
        self.observed = observed
        self.observations = observations
        self.songs = songs
        self.prior = prior
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.meanTime = meanTime ?? createdAt.timeIntervalSince1970
        self.transitions = transitions
        self.stamp = Bin.nextStamp()
        self.rateOrder = nil
        self.rateRows = nil
    }

    /// Computes ``rateOrder`` if the songs changed since it was last computed.
    mutating func orderSongsByRate() {
        guard rateOrder == nil else { return }
        // Rates compared as fractions: a/b > c/d ⇔ a·d > c·b; a stable insertion sort (bins hold few songs).
        var order = [Int32](repeating: 0, count: songs.count)
        songs.withUnsafeBufferPointer { s in
            order.withUnsafeMutableBufferPointer { o in
                for i in 0..<s.count {
                    let num = s[i].likes + 1, den = s[i].likes + s[i].dislikes + 2
                    var at = i
                    while at > 0 {
                        let j = Int(o[at - 1])
                        let jn = s[j].likes + 1, jd = s[j].likes + s[j].dislikes + 2
                        guard jn * den < num * jd else { break }
                        o[at] = o[at - 1]
                        at -= 1
                    }
                    o[at] = Int32(i)
                }
            }
        }
        rateOrder = order
    }

    /// Replaces the three vectors at once (one new ``stamp``).
    public mutating func setVectors(centroid: [Float], spread: [Float], observed: [Float]) {
        self.centroid = centroid
        self.spread = spread
        self.observed = observed
    }

    /// Changes the three vectors in place (one new ``stamp``); `body` gets the centroid, the spread
    /// and the presence frequencies, each of ``FeatureLayout/dimension`` entries.
    mutating func updateVectors(
        _ body: (UnsafeMutableBufferPointer<Float>, UnsafeMutableBufferPointer<Float>, UnsafeMutableBufferPointer<Float>) -> Void
    ) {
        // Moved out, so that each is uniquely referenced and changed without a copy.
        var c = centroid, s = spread, o = observed
        centroid = []
        spread = []
        observed = []
        c.withUnsafeMutableBufferPointer { c in
            s.withUnsafeMutableBufferPointer { s in
                o.withUnsafeMutableBufferPointer { o in body(c, s, o) }
            }
        }
        setVectors(centroid: c, spread: s, observed: o)
    }

    /// Bins are equal when everything but the ``stamp`` is.
    public static func == (a: Bin, b: Bin) -> Bool {
        a.number == b.number && a.label == b.label && a.centroid == b.centroid && a.spread == b.spread
            && a.observed == b.observed && a.observations == b.observations && a.songs == b.songs
            && a.prior == b.prior && a.createdAt == b.createdAt && a.updatedAt == b.updatedAt
            && a.meanTime == b.meanTime && a.transitions == b.transitions
    }

    /// The index of a track in ``songs``, if the bin holds it.
    public func songIndex(_ trackId: String) -> Int? {
        let key = TrackKey(trackId)
        return songs.firstIndex { $0.key == key && $0.trackId == trackId }
    }

    /// Parses a public bin id (`b-12`) into its number.
    public static func number(fromId id: String) -> Int? {
        guard id.hasPrefix("b-") else { return nil }
        return Int(id.dropFirst(2))
    }
}

/// A song's membership in a bin, with the feedback it received there.
public struct BinSong: Sendable, Equatable {
    /// The catalog track id.
    public var trackId: String { didSet { key = TrackKey(trackId) } }
    /// A 64-bit hash of ``trackId``, for comparisons in the pick's inner loops.
    public private(set) var key: TrackKey
    /// Likes and completes in this bin.
    public var likes: Int
    /// Dislikes and skips in this bin.
    public var dislikes: Int
    /// The user's latest `rate` of the track in this bin, 1…5, or 0 when never rated here. Its like
    /// (4, 5) or dislike (1, 2) is one of ``likes`` or ``dislikes``; a new rating replaces it.
    public var rating: Int

    /// Creates a membership.
    public init(trackId: String, likes: Int = 0, dislikes: Int = 0, rating: Int = 0) {
        self.init(trackId: trackId, key: TrackKey(trackId), likes: likes, dislikes: dislikes, rating: rating)
    }

    /// Creates a membership whose track key is already known (it must be `TrackKey(trackId)`).
    public init(trackId: String, key: TrackKey, likes: Int = 0, dislikes: Int = 0, rating: Int = 0) {
        assert(key == TrackKey(trackId))
        self.trackId = trackId
        self.key = key
        self.likes = likes
        self.dislikes = dislikes
        self.rating = rating
    }
}

/// A track id's stable 64-bit hash (FNV-1a): the engine compares tracks by key in its inner loops
/// (recent tracks, a bin's songs) and by id only when two keys are equal.
public struct TrackKey: Sendable, Hashable {
    /// The hash.
    public let value: UInt64

    /// The key of a track id.
    public init(_ trackId: String) { value = StableHash.fnv1a(trackId) }

    /// The key of a track id whose FNV-1a hash (``StableHash/fnv1a(_:seed:)``) is already known.
    public init(hash: UInt64) { value = hash }
}
