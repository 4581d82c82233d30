import SoundtrackCatalog
import SoundtrackContext

/// The engine's tunable numbers, loaded from `Models/thresholds.v1.json` and `Models/weights.v1.json`.
public struct EngineConfig: Sendable, Equatable {
    /// A snapshot whose best bin scores below this gets a new bin.
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
    /// Spread scale in the precision factor 1 / (1 + (spread / scale)²).
    public var spreadScale: Float = 0.25
    /// Bounds of a learned weight.
    public var weightRange: ClosedRange<Float> = 0.05...5
    /// How many alternative bins a pick offers.
    public var alternatives: Int = 5
    /// How many tracks each alternative lists.
    public var tracksPerAlternative: Int = 3

    /// Creates a configuration.
    public init(
        createBinBelow: Float = 0.45, repeatWindow: Int = 20, dislikeStreakSwitch: Int = 3,
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
    /// The configuration of the model files: `Models/thresholds.v1.json` and `Models/weights.v1.json`.
    public init(thresholds t: Thresholds, weights: [Float]) {
        self.init(
            createBinBelow: Float(t.createBinBelow), repeatWindow: t.repeatWindow, dislikeStreakSwitch: t.dislikeStreakSwitch,
            learningRate: Float(t.learningRate), weightLearningRate: Float(t.weightLearningRate),
            seedTracksPerNewBin: t.seedTracksPerNewBin, sessionTimeoutMinutes: Double(t.sessionTimeoutMinutes),
            defaultWeights: weights)
    }
}
