import Foundation
import SoundtrackContext

/// The answer to a snapshot: a track, the bin it came from, five alternative bins and why.
public struct Pick: Sendable, Equatable {
    /// A bin as a pick describes it.
    public struct BinSummary: Sendable, Equatable {
        public var id: String
        public var label: String
        public var score: Float
        /// True when the bin was made for this snapshot.
        public var created: Bool
    }
    /// A track as a pick describes it.
    public struct TrackSummary: Sendable, Equatable {
        public var id: String
        public var title: String
        public var artist: String
    }
    /// Another bin the user could switch to, with some of its tracks.
    public struct Alternative: Sendable, Equatable {
        public var bin: BinSummary
        public var tracks: [String]
    }

    /// The pick's id, for feedback that refers to it.
    public var pickId: String
    public var user: String
    public var at: Timestamp
    public var bin: BinSummary
    public var track: TrackSummary
    /// The best tracks in score order (exploration never reorders them); longer than one with
    /// `--top K`. ``track`` is the first, except on an exploration draw (``EngineConfig/exploration``),
    /// when it is one of the next best.
    public var ranked: [TrackSummary]
    public var alternatives: [Alternative]
    /// The features that weighed most in the choice of bin.
    public var why: [Explanation]
    /// Where the track came from: `bin` (a song of the bin), `taste` (the user's own liked track of
    /// another context), `community` (people with the same taste, or the context's popularity),
    /// `catalog` (a track that sounds like the bin) or `onboarding` (the song the user chose when onboarding).
    public var source: String
    /// The ranker's signals that put the track first, largest contribution `w_k f_k` first (at most
    /// three, positive only).
    public var signals: [Signal]
    /// The version of the blend that ranked the tracks (``RankerModel/version``): 0 for the models'
    /// own, `n` for the database's learned blend `n` (`soundtrack models history`).
    public var blend: Int
    /// Whether the person's `location_services` setting is off: the pick was made without the
    /// snapshot's coordinates, accuracy and speed (`"location": "off"` in its JSON).
    public var locationOff = false
    /// The playback volume the pick suggests, 0…1 (``Recommender/suggestedVolume(binIndex:x:continuing:state:)``);
    /// `nil` (no `volume` in its JSON) when the person's `volume_control` setting is off.
    public var volume: Float?

    /// One signal's part in a track's score.
    public struct Signal: Sendable, Equatable {
        /// The signal's name (``RankerModel/signals``).
        public var name: String
        /// Its contribution `w · f` to the score.
        public var contribution: Float
        /// Creates a row.
        public init(name: String, contribution: Float) {
            self.name = name
            self.contribution = contribution
        }
    }

    /// Creates a pick.
    public init(
        pickId: String, user: String, at: Timestamp, bin: BinSummary, track: TrackSummary, ranked: [TrackSummary],
        alternatives: [Alternative], why: [Explanation], source: String, signals: [Signal] = [], blend: Int = 0
    ) {
        self.pickId = pickId
        self.user = user
        self.at = at
        self.bin = bin
        self.track = track
        self.ranked = ranked
        self.alternatives = alternatives
        self.why = why
        self.source = source
        self.signals = signals
        self.blend = blend
    }

    /// The pick as JSON (docs/formats.md): the tree form of what ``PickEncoder`` writes as bytes.
    public func json(includeRanked: Bool = false) -> JSONValue {
        func binJSON(_ b: BinSummary, created: Bool) -> JSONValue {
            var pairs: [(String, JSONValue)] = [
                ("id", .string(b.id)), ("label", .string(b.label)), ("score", .number(Self.round(b.score)))
            ]
            if created { pairs.append(("created", .bool(b.created))) }
            return .object(pairs)
        }
        func trackJSON(_ t: TrackSummary) -> JSONValue {
            .object([("id", .string(t.id)), ("title", .string(t.title)), ("artist", .string(t.artist))])
        }
        var pairs: [(String, JSONValue)] = [
            ("pick_id", .string(pickId)),
            ("user", .string(user)),
            ("at", .string(at.rfc3339)),
            ("bin", binJSON(bin, created: true)),
            ("track", trackJSON(track))
        ]
        if includeRanked { pairs.append(("ranked", .array(ranked.map(trackJSON)))) }
        pairs.append(
            (
                "alternatives",
                .array(
                    alternatives.map {
                        .object([("bin", binJSON($0.bin, created: false)), ("tracks", .array($0.tracks.map { .string($0) }))])
                    })
            ))
        pairs.append(
            (
                "why",
                .array(
                    why.map {
                        .object([
                            ("feature", .string($0.feature)),
                            ("weight", .number(Self.round($0.weight))),
                            ("similarity", .number(Self.round($0.similarity)))
                        ])
                    })
            ))
        pairs.append(("source", .string(source)))
        pairs.append(
            (
                "track_why",
                .array(
                    signals.map {
                        .object([("signal", .string($0.name)), ("contribution", .number(Self.round($0.contribution)))])
                    })
            ))
        pairs.append(("blend", .number(Double(blend))))
        if let volume { pairs.append(("volume", .number(Self.round(volume)))) }
        if locationOff { pairs.append(("location", .string("off"))) }
        return .object(pairs)
    }

    static func round(_ x: Float) -> Double { (Double(x) * 1000).rounded() / 1000 }
}

/// What the store keeps of a pick, so that feedback naming its `pick_id` has its context.
public struct PickRecord: Sendable, Equatable {
    public var pickId: String
    public var user: String
    public var at: Date
    public var binNumber: Int
    public var trackId: String
    public var features: FeatureVector
    /// The bins in score order for this snapshot (best first), with their scores.
    public var ranking: [RankedBin]

    public init(pickId: String, user: String, at: Date, binNumber: Int, trackId: String, features: FeatureVector, ranking: [RankedBin]) {
        self.pickId = pickId
        self.user = user
        self.at = at
        self.binNumber = binNumber
        self.trackId = trackId
        self.features = features
        self.ranking = ranking
    }
}

/// A bin's number and score for one snapshot.
public struct RankedBin: Sendable, Equatable, Codable {
    public var bin: Int
    public var score: Float
    public init(bin: Int, score: Float) {
        self.bin = bin
        self.score = score
    }
}
