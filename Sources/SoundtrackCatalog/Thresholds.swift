import Foundation
import SoundtrackContext

/// The engine's tuning constants, from `Models/thresholds.v2.json` (docs/scoring.md says how
/// each is used).
public struct Thresholds: Sendable, Equatable, Codable {
    /// The `schema` member of a thresholds file.
    public static let schema = "soundtrack.thresholds"
    /// The file version this build reads.
    public static let supportedVersion = 2

    /// A context whose best bin's similarity is below this gets a new bin (0…1).
    public var createBinBelow: Float
    /// The distance scale `κ` of a bin's similarity `exp(−d / κ)` (0.001…10).
    public var distanceScale: Float
    /// A bin counts a slot seen in at least this share of its snapshots (0…1).
    public var presenceThreshold: Float
    /// How much closer the session's current bin counts, in distance units (0…10).
    public var stickiness: Float
    /// The decay time of the stickiness (1…10080 minutes).
    public var stickinessMinutes: Double
    /// How much farther a bin idle for long counts, in distance units (0…10).
    public var recency: Float
    /// The rise time of the recency term (0.01…8760 hours).
    public var recencyHours: Double
    /// The floor of the rate at which a served snapshot moves its bin (0…1).
    public var serveRate: Float
    /// The most bins a user keeps (1…1000).
    public var binCap: Int
    /// When above 0 the cap grows as this times the square root of the snapshots served (0…100).
    public var binCapGrowth: Float
    /// Bins closer than this weighted distance merge; 0: never (0…10).
    public var mergeBelowDistance: Float
    /// How strongly switches between two bins favour merging them (0…100).
    public var mergeTransitionWeight: Float
    /// How strongly bins of distant periods resist merging, per day (0…100).
    public var mergeTimeWeightPerDay: Float
    /// Bins of at most this many snapshots can be folded when idle (0…1000).
    public var foldMaxObservations: Int
    /// The idle time after which such bins are folded (0.01…3650 days).
    public var foldAfterDays: Double
    /// The exponent of the separation factor on the weights; 0 turns it off (0…4).
    public var separationExponent: Float
    /// A track is not picked again within this many picks (0…1000).
    public var repeatWindow: Int
    /// Dislikes in a row that switch to another bin (1…100).
    public var dislikeStreakSwitch: Int
    /// How far a like pulls a bin's centroid toward the context (0…1).
    public var learningRate: Float
    /// Step size of the per-user weight updates (0…1).
    public var weightLearningRate: Float
    /// Catalog tracks that seed a new bin (0…1000).
    public var seedTracksPerNewBin: Int
    /// A gap longer than this ends a listening session (1…10080 minutes).
    public var sessionTimeoutMinutes: Int
    /// How many of a liked track's nearest catalog tracks a like adds to the bin's songs (0…32;
    /// optional in the file, 1 when absent).
    public var likeNeighbours: Int = Self.defaultLikeNeighbours

    /// ``likeNeighbours`` of a file that does not set it.
    public static let defaultLikeNeighbours = 1
    /// Minutes of one style in a row without a like after which picks move away from it (0: never;
    /// 0…1440; optional in the file, 30 when absent).
    public var rutMinutes: Double = Self.defaultRutMinutes
    /// ``rutMinutes`` of a file that does not set it.
    public static let defaultRutMinutes: Double = 30

    enum CodingKeys: String, CodingKey, CaseIterable {
        case createBinBelow = "create_bin_below", distanceScale = "distance_scale", presenceThreshold = "presence_threshold"
        case stickiness, stickinessMinutes = "stickiness_minutes", recency, recencyHours = "recency_hours"
        case serveRate = "serve_rate", binCap = "bin_cap", mergeBelowDistance = "merge_below_distance", binCapGrowth = "bin_cap_growth", mergeTransitionWeight =
            "merge_transition_weight"
        case mergeTimeWeightPerDay = "merge_time_weight_per_day", foldMaxObservations = "fold_max_observations"
        case foldAfterDays = "fold_after_days", separationExponent = "separation_exponent"
        case repeatWindow = "repeat_window"
        case dislikeStreakSwitch = "dislike_streak_switch", learningRate = "learning_rate"
        case weightLearningRate = "weight_learning_rate", seedTracksPerNewBin = "seed_tracks_per_new_bin"
        case sessionTimeoutMinutes = "session_timeout_minutes"
        case likeNeighbours = "like_neighbours", rutMinutes = "rut_minutes"
    }

    /// Loads and validates a thresholds file.
    /// - Throws: ``InputError`` naming the field and its allowed range.
    public static func load(from url: URL) throws(InputError) -> Thresholds {
        try decode(JSONObjectReader.parse(contentsOf: url))
    }

    /// Parses and validates the bytes of a thresholds file; every field is required.
    /// - Throws: ``InputError`` naming the field, e.g. `learning_rate: expected a number in 0...1, got 1.5`.
    public static func decode(_ data: Data) throws(InputError) -> Thresholds {
        try decode(JSONParser.parse(data))
    }

    /// Validates a parsed thresholds document.
    public static func decode(_ json: JSONValue) throws(InputError) -> Thresholds {
        let doc = try JSONObjectReader(json, path: "")
        try doc.rejectUnknown(["schema", "version"] + CodingKeys.allCases.map(\.rawValue))
        try doc.checkHeader(schema: schema, version: supportedVersion)
        func number(_ key: CodingKeys, _ range: ClosedRange<Double>) throws(InputError) -> Double {
            try doc.number(key.rawValue, in: range)
        }
        func integer(_ key: CodingKeys, _ range: ClosedRange<Int>) throws(InputError) -> Int {
            try doc.integer(key.rawValue, in: range)
        }
        let createBinBelow = Float(try number(.createBinBelow, 0...1))
        let distanceScale = Float(try number(.distanceScale, 0.001...10))
        let presenceThreshold = Float(try number(.presenceThreshold, 0...1))
        let stickiness = Float(try number(.stickiness, 0...10))
        let stickinessMinutes = try number(.stickinessMinutes, 1...10080)
        let recency = Float(try number(.recency, 0...10))
        let recencyHours = try number(.recencyHours, 0.01...8760)
        let serveRate = Float(try number(.serveRate, 0...1))
        let binCap = try integer(.binCap, 1...1000)
        let mergeBelowDistance = Float(try number(.mergeBelowDistance, 0...10))
        let binCapGrowth = Float(try number(.binCapGrowth, 0...100))
        let mergeTransitionWeight = Float(try number(.mergeTransitionWeight, 0...100))
        let mergeTimeWeightPerDay = Float(try number(.mergeTimeWeightPerDay, 0...100))
        let foldMaxObservations = try integer(.foldMaxObservations, 0...1000)
        let foldAfterDays = try number(.foldAfterDays, 0.01...3650)
        let separationExponent = Float(try number(.separationExponent, 0...4))
        let repeatWindow = try integer(.repeatWindow, 0...1000)
        let dislikeStreakSwitch = try integer(.dislikeStreakSwitch, 1...100)
        let learningRate = Float(try number(.learningRate, 0...1))
        let weightLearningRate = Float(try number(.weightLearningRate, 0...1))
        let seedTracksPerNewBin = try integer(.seedTracksPerNewBin, 0...1000)
        let sessionTimeoutMinutes = try integer(.sessionTimeoutMinutes, 1...10080)
        let likeNeighbours = try doc.optionalInteger(CodingKeys.likeNeighbours.rawValue, in: 0...32) ?? defaultLikeNeighbours
        let rutMinutes = try doc.number(CodingKeys.rutMinutes.rawValue, .closed(0, 1440)) ?? defaultRutMinutes
        return Thresholds(
            createBinBelow: createBinBelow,
            distanceScale: distanceScale,
            presenceThreshold: presenceThreshold,
            stickiness: stickiness,
            stickinessMinutes: stickinessMinutes,
            recency: recency,
            recencyHours: recencyHours,
            serveRate: serveRate,
            binCap: binCap,
            binCapGrowth: binCapGrowth,
            mergeBelowDistance: mergeBelowDistance,
            mergeTransitionWeight: mergeTransitionWeight,
            mergeTimeWeightPerDay: mergeTimeWeightPerDay,
            foldMaxObservations: foldMaxObservations,
            foldAfterDays: foldAfterDays,
            separationExponent: separationExponent,
            repeatWindow: repeatWindow,
            dislikeStreakSwitch: dislikeStreakSwitch,
            learningRate: learningRate,
            weightLearningRate: weightLearningRate,
            seedTracksPerNewBin: seedTracksPerNewBin,
            sessionTimeoutMinutes: sessionTimeoutMinutes,
            likeNeighbours: likeNeighbours,
            rutMinutes: rutMinutes)
    }
}
