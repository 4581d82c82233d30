import Foundation
import SoundtrackContext

/// A learned context cluster of one user: where it sits in feature space and the songs it holds.
///
/// `centroid`, `spread` and `observed` all have ``FeatureLayout/dimension`` entries.
/// `observed[i]` is the running frequency with which slot `i` was present in the
/// contexts that formed the bin: a bin never learned from weather has `observed` 0 on
/// the weather slots, and those slots then carry no weight when it is scored.
public struct Bin: Sendable, Equatable {
    /// The bin's number within its user; its public id is `b-<number>`.
    public var number: Int
    /// A readable label derived from the centroid (`study · library · morning`).
    public var label: String
    /// The mean feature vector of the contexts the bin was formed from.
    public var centroid: [Float]
    /// Per-slot spread (an exponentially weighted standard deviation) around the centroid.
    public var spread: [Float]
    /// Per-slot presence frequency in [0, 1].
    public var observed: [Float]
    /// How many contexts have pulled the centroid (creation counts as one).
    public var observations: Int
    /// The songs of the bin with their like and dislike counts; a track appears at most once.
    public var songs: [BinSong]
    /// The name of the cold-start prior the bin was seeded from, if any.
    public var prior: String?
    /// The time of the snapshot that created the bin.
    public var createdAt: Date
    /// The time of the last feedback that changed the bin.
    public var updatedAt: Date

    /// The public id, `b-<number>`.
    public var id: String { "b-\(number)" }

    /// Creates a bin.
    public init(
        number: Int, label: String, centroid: [Float], spread: [Float], observed: [Float],
        observations: Int, songs: [BinSong], prior: String?, createdAt: Date, updatedAt: Date
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
    }

    /// The index of a track in ``songs``, if the bin holds it.
    public func songIndex(_ trackId: String) -> Int? {
        songs.firstIndex { $0.trackId == trackId }
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
    public var trackId: String
    /// Likes and completes in this bin.
    public var likes: Int
    /// Dislikes and skips in this bin.
    public var dislikes: Int

    /// Creates a membership.
    public init(trackId: String, likes: Int = 0, dislikes: Int = 0) {
        self.trackId = trackId
        self.likes = likes
        self.dislikes = dislikes
    }
}
