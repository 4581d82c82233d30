import Foundation
import SoundtrackContext

/// Everything the engine knows about one user: bins, feature weights, learned places and session.
///
/// The engine mutates a `UserState` in place and records what it changed in ``changes``,
/// so that a store can persist exactly that in one transaction.
public struct UserState: Sendable {
    /// The user's id.
    public let user: String
    /// The user's bins, in creation order.
    public var bins: [Bin]
    /// Per-slot priority weights (``FeatureLayout/dimension`` entries).
    public var weights: [Float]
    /// Places learned from coordinates.
    public var places: PlaceBook
    /// What the user's own feature slots (`place.p*`, `tags.t*`) stand for.
    public var vocabulary: FeatureVocabulary
    /// Bins merged into others, by number: the number of the bin each was merged into (which may
    /// itself have been merged since; ``resolve(bin:)`` follows the chain). Picks and sessions name
    /// bins by number, so a pick of a merged bin is feedback for the bin that absorbed it.
    public var mergedInto: [Int: Int]
    /// The listening session: current bin, dislike streak, bins switched away from.
    public var session: SessionState
    /// The most recently picked tracks, oldest first (at most the repeat window).
    public var recentTracks: [String] {
        get { recent }
        set {
            recent = newValue
            recentKeys = newValue.map(TrackKey.init)
            recentBloom = Self.bloom(recentKeys)
        }
    }
    /// How many picks the user has had; part of each pick's random seed.
    public var pickCounter: Int64
    /// The number the next new bin gets.
    public var nextBinNumber: Int
    /// What the engine changed since the store last cleared it.
    public var changes = Changes()

    private var recent: [String]
    /// The keys of ``recentTracks``, in the same order.
    private(set) var recentKeys: [TrackKey]
    /// One bit per recent key (`key % 64`): a song whose bit is clear is not recent.
    private var recentBloom: UInt64
    /// The scoring rows of the bins, brought up to date before each use (see ``ScoringMatrix``).
    var scoring = ScoringMatrix()
    /// The bins' vectors laid out for merge costs, with every pair's distance, brought up to date
    /// before each use (see ``BinVectors``).
    var pairs = BinVectors()
    /// Changes whenever the user's evidence about tracks changes (feedback, a merge): the
    /// ranker's per-user cache (``RankingCache``) is rebuilt when it differs.
    var evidenceVersion: UInt64 = 0
    /// What the ranker derives from the user's evidence and the community, kept between picks.
    var rankingCache = RankingCache()

    /// Drops the scoring rows and the merge costs' layout (they are computed again before the next
    /// use): for a copy that is only written to a store, so that it does not share them with the live state.
    public mutating func dropScoring() {
        scoring = ScoringMatrix()
        pairs = BinVectors()
    }

    /// Creates a user state. `nextBinNumber` is raised above every number in use, of a bin or of
    /// a bin merged away (``mergedInto``): a number is never given twice, even to a state stored
    /// without its counter.
    public init(
        user: String, bins: [Bin], weights: [Float], places: PlaceBook, session: SessionState,
        recentTracks: [String], pickCounter: Int64, nextBinNumber: Int,
        vocabulary: FeatureVocabulary = FeatureVocabulary(), mergedInto: [Int: Int] = [:]
    ) {
        self.user = user
        self.bins = bins
        self.weights = weights
        self.places = places
        self.vocabulary = vocabulary
        self.vocabulary.placeNames = places.names
        self.mergedInto = mergedInto
        self.session = session
        self.recent = recentTracks
        self.recentKeys = recentTracks.map(TrackKey.init)
        self.recentBloom = Self.bloom(recentKeys)
        self.pickCounter = pickCounter
        let used = max(bins.lazy.map(\.number).max() ?? 0, mergedInto.keys.max() ?? 0, mergedInto.values.max() ?? 0)
        self.nextBinNumber = max(nextBinNumber, used + 1)
    }

    /// The position of a bin in ``bins`` by its number.
    public func binIndex(number: Int) -> Int? {
        bins.firstIndex { $0.number == number }
    }

    /// The number of the bin that holds what bin `number` held: itself while it exists, else the
    /// bin it was merged into (following merges of merges); `nil` for a number never used.
    public func resolve(bin number: Int) -> Int? {
        var n = number
        var hops = 0
        while binIndex(number: n) == nil {
            guard let next = mergedInto[n], hops < 1000 else { return nil }
            n = next
            hops += 1
        }
        return n
    }

    /// Appends a track to ``recentTracks``, keeping at most `keep`.
    mutating func remember(_ track: String, keep: Int) {
        recent.append(track)
        recentKeys.append(TrackKey(track))
        if recent.count > keep {
            recent.removeFirst(recent.count - keep)
            recentKeys.removeFirst(recentKeys.count - keep)
        }
        recentBloom = Self.bloom(recentKeys)
    }

    private static func bloom(_ keys: [TrackKey]) -> UInt64 {
        keys.reduce(0) { $0 | 1 << ($1.value & 63) }
    }

    /// Whether a track is among the last `window` of ``recentTracks``.
    @inline(__always)
    func isRecent(_ song: borrowing BinSong, window: Int) -> Bool {
        let key = song.key
        guard recentBloom & (1 << (key.value & 63)) != 0 else { return false }
        return recentKeys.withUnsafeBufferPointer { keys in
            var i = max(0, keys.count - window)
            while i < keys.count {
                if keys[i] == key && recent[i] == song.trackId { return true }
                i += 1
            }
            return false
        }
    }

    /// What a pick or a feedback event changed, for the store to write.
    public struct Changes: Sendable, Equatable {
        /// Bins whose vectors, label or counts changed, or that are new, by number.
        public var bins: Set<Int> = []
        /// Bins whose songs changed (a song joined, or its like or dislike count changed), by number:
        /// the store writes a bin's songs with the bin (``Bin/songs``), so it needs no more. Every
        /// change to a bin's songs must be recorded here, also for a bin in ``bins``: the store
        /// writes the song list of a stored bin only when its number is here.
        public var songs: Set<Int> = []
        /// The weights changed.
        public var weights = false
        /// The place book or the vocabulary changed.
        public var places = false
        /// Bins merged into others (and so removed), by number; their merges are in ``UserState/mergedInto``.
        public var removedBins: Set<Int> = []
        /// The pick counter or the next bin number changed (a pick, a new bin).
        public var counters = false
        /// True when nothing changed.
        public var isEmpty: Bool { bins.isEmpty && songs.isEmpty && !weights && !places && !counters && removedBins.isEmpty }

        /// Creates an empty change set.
        public init() {}
    }
}

/// The state of a user's listening session, which ends after a gap longer than the session timeout.
public struct SessionState: Sendable, Equatable, Codable {
    /// The bin the last pick or feedback was about.
    public var currentBin: Int?
    /// Dislikes and skips in a row in the current bin.
    public var dislikeStreak: Int
    /// Bins switched away from in this session (after a dislike streak); not offered again until it ends.
    public var avoided: [Int]
    /// The bin switched to after the last dislike streak, preferred over creating a new bin.
    public var switchedTo: Int?
    /// The time of the last pick or feedback.
    public var lastAt: Date?
    /// The tracks the session's feedback was about, oldest first, each once, at most
    /// ``trackCapacity``: a query the blend learns from a liked event leaves them out of the
    /// tracks it ranks the liked one against, as a pick leaves out what was just played.
    public var tracks: [String]
    /// The most tracks a session remembers.
    public static let trackCapacity = 50
    /// The style the session's picks have kept since a like or a change of style (docs/scoring.md, "No rut").
    public var styleRun: StyleRun?

    /// An empty session.
    public init(
        currentBin: Int? = nil, dislikeStreak: Int = 0, avoided: [Int] = [], switchedTo: Int? = nil, lastAt: Date? = nil, tracks: [String] = [],
        styleRun: StyleRun? = nil
    ) {
        self.currentBin = currentBin
        self.dislikeStreak = dislikeStreak
        self.avoided = avoided
        self.switchedTo = switchedTo
        self.lastAt = lastAt
        self.tracks = tracks
        self.styleRun = styleRun
    }

    /// Remembers a track the session's feedback was about (again: it moves to the end).
    mutating func remember(track: String) {
        tracks.removeAll { $0 == track }
        tracks.append(track)
        if tracks.count > Self.trackCapacity { tracks.removeFirst(tracks.count - Self.trackCapacity) }
    }

    /// Whether a session that was last active at `lastAt` is still going at `time`.
    public func isActive(at time: Date, timeout: TimeInterval) -> Bool {
        guard let lastAt else { return false }
        let gap = time.timeIntervalSince(lastAt)
        return gap <= timeout && gap >= -timeout
    }
}
