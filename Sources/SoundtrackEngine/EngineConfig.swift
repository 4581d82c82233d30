import SoundtrackCatalog
import SoundtrackContext

/// The engine's tunable numbers, loaded from `Models/thresholds.v2.json` and `Models/weights.v2.json`.
public struct EngineConfig: Sendable, Equatable {
    /// A snapshot whose best bin's similarity (after the session and recency terms) is below
    /// this gets a new bin (0…1).
    public var createBinBelow: Float
    /// No track is picked again within this many picks of the same user.
    public var repeatWindow: Int
    /// Dislikes in a row that switch to the next-best bin.
    public var dislikeStreakSwitch: Int
    /// Rate at which a liked context pulls its bin's centroid (floored by 1/(n+1)).
    public var learningRate: Float
    /// Rate of the multiplicative per-user weight updates.
    public var weightLearningRate: Float
    /// Songs put into a newly created bin.
    public var seedTracksPerNewBin: Int
    /// A gap longer than this (seconds) ends a listening session.
    public var sessionTimeout: Double
    /// Default per-slot priority weights for new users.
    public var defaultWeights: [Float]
    /// Spread a new bin starts with on every present slot.
    public var initialSpread: Float = 0.2
    /// The distance scale `κ` of a bin's similarity `exp(−d / κ)` (docs/scoring.md).
    public var distanceScale: Float = 0.05
    /// A bin counts a slot once it was present in at least this share of its snapshots.
    public var presenceThreshold: Float = 0.3
    /// How much closer (in distance units) the session's current bin counts, at a gap of 0; the
    /// bonus decays as `exp(−gap / stickinessMinutes)`: a context persists.
    public var stickiness: Float = 0.05
    /// The decay time of ``stickiness``, in minutes.
    public var stickinessMinutes: Double = 30
    /// How much farther (in distance units) a bin not served for long counts, rising as
    /// `1 − exp(−idle / recencyHours)`.
    public var recency: Float = 0
    /// The rise time of ``recency``, in hours.
    public var recencyHours: Double = 3
    /// The floor of the rate at which a served snapshot moves its bin (the rate is `1/(n+1)` above it).
    public var serveRate: Float = 0
    /// The most bins a user keeps: past it the two closest bins merge.
    public var binCap: Int = 20
    /// When above 0, the cap grows with the evidence: `min(binCap, max(4, binCapGrowth · √N))` for
    /// a user whose bins served `N` snapshots in all (more data supports more contexts).
    public var binCapGrowth: Float = 0
    /// Two bins whose centroids come closer than this weighted distance merge whatever their
    /// number (0: never).
    public var mergeBelowDistance: Float = 0
    /// How strongly switches between two bins within sessions favour merging them (`adj` in docs/scoring.md).
    public var mergeTransitionWeight: Float = 1
    /// How strongly bins of distant periods resist merging, per day between their mean times.
    public var mergeTimeWeightPerDay: Float = 0.3
    /// Bins with at most this many snapshots that were not served for ``foldAfterDays`` are folded
    /// into their nearest bin.
    public var foldMaxObservations: Int = 3
    /// See ``foldMaxObservations``.
    public var foldAfterDays: Double = 14
    /// The exponent of the separation factor on the weights (0: off): slots whose spread between bins
    /// is large against their spread within bins weigh more (docs/scoring.md).
    public var separationExponent: Float = 0
    /// Bounds of a learned weight.
    public var weightRange: ClosedRange<Float> = 0.05...5
    /// How many tracks a pick ranks at most (the candidates of docs/scoring.md, "Ranking tracks").
    public var candidates: Int = 200
    /// The share of single picks whose track is drawn among the next best instead of the best
    /// (`--explore`); a ranked list (`--top K`) is always in score order. 0 makes picks deterministic.
    public var exploration: Float = 0.15
    /// How many of the best-ranked tracks an exploration draw chooses among (the first excluded).
    public var explorationDepth: Int = 10
    /// How many alternative bins a pick offers.
    public var alternatives: Int = 5
    /// How many tracks each alternative lists.
    public var tracksPerAlternative: Int = 3
    /// How many of a liked track's nearest catalog tracks a like adds to its bin's songs
    /// (docs/scoring.md, "Feedback").
    public var likeNeighbours: Int = Thresholds.defaultLikeNeighbours
    /// Minutes of one style in a row without a like after which picks move away from it (0: never;
    /// docs/scoring.md, "No rut").
    public var rutMinutes: Double = Thresholds.defaultRutMinutes

    /// Creates a configuration.
    public init(
        createBinBelow: Float = 0.55, repeatWindow: Int = 20, dislikeStreakSwitch: Int = 3,
        learningRate: Float = 0.15, weightLearningRate: Float = 0.05, seedTracksPerNewBin: Int = 12,
        sessionTimeoutMinutes: Double = 45, defaultWeights: [Float]? = nil
    ) {
        self.createBinBelow = createBinBelow
        self.repeatWindow = repeatWindow
        self.dislikeStreakSwitch = dislikeStreakSwitch
        self.learningRate = learningRate
        self.weightLearningRate = weightLearningRate
        self.seedTracksPerNewBin = seedTracksPerNewBin
        self.sessionTimeout = sessionTimeoutMinutes * 60
        self.defaultWeights = defaultWeights ?? [Float](repeating: 1, count: FeatureLayout.dimension)
    }
}

extension EngineConfig {
    /// The most bins a user with this state may keep (``binCap``, or less while ``binCapGrowth``
    /// limits it by the snapshots served so far, plus `plus` more).
    public func cap(for state: UserState, plus: Int = 0) -> Int {
        guard binCapGrowth > 0 else { return binCap }
        let served = state.bins.reduce(plus) { $0 + $1.observations }
        return min(binCap, max(4, Int((binCapGrowth * Float(served).squareRoot()).rounded())))
    }

    /// The configuration of the model files: `Models/thresholds.v2.json` and `Models/weights.v2.json`.
    public init(thresholds t: Thresholds, weights: [Float]) {
        self.init(
            createBinBelow: t.createBinBelow, repeatWindow: t.repeatWindow, dislikeStreakSwitch: t.dislikeStreakSwitch,
            learningRate: t.learningRate, weightLearningRate: t.weightLearningRate,
            seedTracksPerNewBin: t.seedTracksPerNewBin, sessionTimeoutMinutes: Double(t.sessionTimeoutMinutes),
            defaultWeights: weights)
        distanceScale = t.distanceScale
        presenceThreshold = t.presenceThreshold
        stickiness = t.stickiness
        stickinessMinutes = t.stickinessMinutes
        recency = t.recency
        recencyHours = t.recencyHours
        serveRate = t.serveRate
        binCap = t.binCap
        mergeBelowDistance = t.mergeBelowDistance
        binCapGrowth = t.binCapGrowth
        mergeTransitionWeight = t.mergeTransitionWeight
        mergeTimeWeightPerDay = t.mergeTimeWeightPerDay
        foldMaxObservations = t.foldMaxObservations
        foldAfterDays = t.foldAfterDays
        separationExponent = t.separationExponent
        likeNeighbours = t.likeNeighbours
        rutMinutes = t.rutMinutes
    }
}
