import Foundation
import SoundtrackContext

/// The engine's tuning constants, from `Models/thresholds.v1.json` (docs/scoring.md says how
/// each is used).
public struct Thresholds: Sendable, Equatable, Codable {
    /// The `schema` member of a thresholds file.
    public static let schema = "soundtrack.thresholds"
    /// The file version this build reads.
    public static let supportedVersion = 1

    /// A context whose best bin scores below this gets a new bin (−1…1).
    public var createBinBelow: Float
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

    /// Creates thresholds from values (not validated; ``decode(_:)-(Data)`` validates files).
    public init(
        createBinBelow: Float, repeatWindow: Int, dislikeStreakSwitch: Int, learningRate: Float,
        weightLearningRate: Float, seedTracksPerNewBin: Int, sessionTimeoutMinutes: Int
    ) {
        self.createBinBelow = createBinBelow
        self.repeatWindow = repeatWindow
        self.dislikeStreakSwitch = dislikeStreakSwitch
        self.learningRate = learningRate
        self.weightLearningRate = weightLearningRate
        self.seedTracksPerNewBin = seedTracksPerNewBin
        self.sessionTimeoutMinutes = sessionTimeoutMinutes
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case createBinBelow = "create_bin_below", repeatWindow = "repeat_window"
        case dislikeStreakSwitch = "dislike_streak_switch", learningRate = "learning_rate"
        case weightLearningRate = "weight_learning_rate", seedTracksPerNewBin = "seed_tracks_per_new_bin"
        case sessionTimeoutMinutes = "session_timeout_minutes"
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
        return Thresholds(
            createBinBelow: Float(try doc.number(CodingKeys.createBinBelow.rawValue, in: -1...1)),
            repeatWindow: try doc.integer(CodingKeys.repeatWindow.rawValue, in: 0...1000),
            dislikeStreakSwitch: try doc.integer(CodingKeys.dislikeStreakSwitch.rawValue, in: 1...100),
            learningRate: Float(try doc.number(CodingKeys.learningRate.rawValue, in: 0...1)),
            weightLearningRate: Float(try doc.number(CodingKeys.weightLearningRate.rawValue, in: 0...1)),
            seedTracksPerNewBin: try doc.integer(CodingKeys.seedTracksPerNewBin.rawValue, in: 0...1000),
            sessionTimeoutMinutes: try doc.integer(CodingKeys.sessionTimeoutMinutes.rawValue, in: 1...10080))
    }
}
