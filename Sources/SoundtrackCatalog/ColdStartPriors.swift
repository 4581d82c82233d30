import Foundation
import SoundtrackContext

/// One cold-start context: the feature values that identify it, and the sound and genres a
/// new bin in that context starts from.
public struct ContextPrior: Sendable, Equatable {
    /// A unique name (`workout`, `study`…; `default` is the fallback).
    public var name: String
    /// One line for people.
    public var description: String
    /// The identifying slot values; only the named slots are present in the mask.
    public var signature: FeatureVector
    /// The target sound.
    public var profile: AudioProfile
    /// Target genres (names as in the catalog).
    public var genres: [String]
    /// Where the numbers come from.
    public var source: String
    /// The playback volume (0…1) a pick in this context suggests before the person's own volumes
    /// teach one (`nil`: the `default` context's, else ½; docs/scoring.md, "Volume").
    public var volume: Float?

    /// Creates a prior.
    public init(
        name: String, description: String = "", signature: FeatureVector = FeatureVector(),
        profile: AudioProfile, genres: [String] = [], source: String = "", volume: Float? = nil
    ) {
        self.name = name
        self.description = description
        self.signature = signature
        self.profile = profile
        self.genres = genres
        self.source = source
        self.volume = volume
    }
}

/// The cold-start priors of `Models/priors.v1.json`: which sound suits which context before
/// any feedback exists. docs/priors.md explains every context and where its numbers come from.
///
/// ```swift
/// let priors = BundledModels.priors()
/// let ranked = priors.match(features)                  // best first
/// let seeds = priors.seedTracks(for: ranked[0].prior, index: index, k: 12)
/// ```
public struct ColdStartPriors: Sendable, Equatable {
    /// The `schema` member of a priors file.
    public static let schema = "soundtrack.priors"
    /// The file version this build reads.
    public static let supportedVersion = 1
    /// The name of the fallback context, required in every file.
    public static let defaultName = "default"

    /// The version of the file the priors came from.
    public var schemaVersion: Int
    /// The contexts, in file order.
    public var contexts: [ContextPrior]

    /// Priors from values; `contexts` must include one named ``defaultName``.
    public init(schemaVersion: Int = ColdStartPriors.supportedVersion, contexts: [ContextPrior]) {
        precondition(contexts.contains { $0.name == Self.defaultName }, "priors need a '\(Self.defaultName)' context")
        self.schemaVersion = schemaVersion
        self.contexts = contexts
    }

    /// Loads and validates a priors file.
    /// - Throws: ``InputError`` naming the JSON path of the first problem (also for an unreadable file).
    public static func load(from url: URL) throws(InputError) -> ColdStartPriors {
        try decode(JSONObjectReader.parse(contentsOf: url))
    }

    /// Parses and validates the bytes of a priors file.
    /// - Throws: ``InputError`` naming the JSON path of the first problem, for example
    ///   `contexts[3].signature.motion.runing: expected a feature slot name, got 'motion.runing'`.
    public static func decode(_ data: Data) throws(InputError) -> ColdStartPriors {
        try decode(JSONParser.parse(data))
    }

    /// Validates a parsed priors document.
    public static func decode(_ json: JSONValue) throws(InputError) -> ColdStartPriors {
        let doc = try JSONObjectReader(json, path: "")
        try doc.rejectUnknown(["schema", "version", "contexts"])
        try doc.checkHeader(schema: schema, version: supportedVersion)
        let items = try doc.requiredArray("contexts")
        var contexts: [ContextPrior] = []
        for (i, item) in items.enumerated() {
            let prior = try decodeContext(item, path: "contexts[\(i)]")
            if contexts.contains(where: { $0.name == prior.name }) {
                throw InputError(path: "contexts[\(i)].name", expected: "a name not used before", got: JSONObjectReader.quote(prior.name))
            }
            contexts.append(prior)
        }
        guard contexts.contains(where: { $0.name == defaultName }) else {
            throw InputError(path: "contexts", expected: "a context named '\(defaultName)'", got: "none")
        }
        return ColdStartPriors(schemaVersion: supportedVersion, contexts: contexts)
    }

    private static func decodeContext(_ value: JSONValue, path: String) throws(InputError) -> ContextPrior {
        let o = try JSONObjectReader(value, path: path)
        try o.rejectUnknown(["name", "description", "signature", "profile", "genres", "source", "volume"])
        let name = try o.requiredString("name", maxLength: nil)
        let description = try o.requiredString("description", maxLength: nil, allowEmpty: true)

        let sig = try o.requiredObject("signature")
        var signature = FeatureVector()
        for (key, v) in sig.pairs {
            guard let slot = FeatureLayout.index(of: key) else {
                throw InputError(path: sig.path(of: key), expected: "a feature slot name", got: JSONObjectReader.quote(key))
            }
            signature.set(slot, Float(try JSONObjectReader.number(v, in: -1...1, path: sig.path(of: key))))
        }

        let prof = try o.requiredObject("profile")
        try prof.rejectUnknown(AudioProfile.names)
        var features = AudioFeatures()
        for (key, v) in prof.pairs {
            let field = CatalogField.byColumn[key]!
            guard case let .number(range) = field.kind else { continue }
            features.set(field, try JSONObjectReader.number(v, in: range, path: prof.path(of: key)))
        }
        let profile = AudioProfile(features)
        if profile.isEmpty {
            throw InputError(path: prof.path, expected: "at least one of \(AudioProfile.names.joined(separator: ", "))", got: "none")
        }

        var genres: [String] = []
        for (j, g) in try o.requiredArray("genres").enumerated() {
            guard case let .string(s) = g, !CatalogField.trim(s).isEmpty else {
                throw InputError(path: o.path(of: "genres") + "[\(j)]", expected: "a non-empty string", got: JSONObjectReader.describe(g))
            }
            genres.append(CatalogField.trim(s))
        }
        let source = try o.requiredString("source", maxLength: nil)
        let volume = try o.number("volume", .closed(0, 1)).map(Float.init)
        return ContextPrior(
            name: name, description: description, signature: signature, profile: profile, genres: genres, source: source, volume: volume)
    }

    /// The prior with a name, or `nil`.
    public func prior(named name: String) -> ContextPrior? { contexts.first { $0.name == name } }

    /// The fallback prior (named ``defaultName``).
    public var fallback: ContextPrior { prior(named: Self.defaultName)! }

    /// The share of a signature's weight that must be present in a snapshot, outside the time
    /// slots (always present, so never evidence of a context by themselves), for the prior to match.
    public static let minimumCoverage: Float = 0.5

    /// Ranks the priors by how well a feature vector matches their signatures, best first.
    /// Among equal scores ``defaultName`` comes first, then file order: a context that matches
    /// no signature positively (all scores 0 or less) ranks `default` first.
    ///
    /// Missing is not evidence: with `S` the signature's slots, `O = S ∩ present(x)` and weights
    /// `w` (all 1 when `nil`), a prior is eligible only when its slots outside the time group that
    /// the snapshot has carry at least ``minimumCoverage`` of their weight,
    ///
    ///     coverage = Σ_{O \ time} w s² / Σ_{S \ time} w s²   (1 for a signature of time slots alone),
    ///
    /// and an eligible prior scores the cosine over the shared slots only,
    ///
    ///     score = Σ_O w s x / ( √(Σ_O w s²) · √(Σ_O w x²) ),
    ///
    /// so a slot the snapshot lacks neither raises nor lowers a score: an evening with no weather
    /// section cannot match "rainy evening" (its weather slots are most of its signature), however
    /// well the time fits. A signature value of 0 ("should be zero", e.g. `time.weekend: 0`) adds
    /// nothing to the numerator but lowers the score when the snapshot's value is not 0. Scores lie
    /// in [−1, 1]; an ineligible prior and a prior without a signature (`default`) score 0.
    /// - Parameters:
    ///   - features: the snapshot's features.
    ///   - weights: per-slot weights (``FeatureLayout/dimension`` of them), e.g. ``DefaultWeights``.
    public func match(_ features: FeatureVector, weights: [Float]? = nil) -> [(prior: ContextPrior, score: Float)] {
        let dim = FeatureLayout.dimension
        precondition(weights == nil || weights!.count == dim, "weights must have FeatureLayout.dimension entries")
        var ranked: [(prior: ContextPrior, score: Float, order: Int)] = []
        for (order, prior) in contexts.enumerated() {
            ranked.append((prior, Self.score(prior, features, weights: weights), prior.name == Self.defaultName ? -1 : order))
        }
        ranked.sort { $0.score > $1.score || ($0.score == $1.score && $0.order < $1.order) }
        return ranked.map { (prior: $0.prior, score: $0.score) }
    }

    /// Whether each slot is of the time group (the time slots are never evidence of a context).
    private static let isTimeSlot: [Bool] = FeatureLayout.slots.map { $0.group == .time }

    /// A prior's score in ``match(_:weights:)``.
    private static func score(_ prior: ContextPrior, _ features: FeatureVector, weights: [Float]?) -> Float {
        var dot: Float = 0, ss: Float = 0, xx: Float = 0
        var evidence: Float = 0, needed: Float = 0
        let s = prior.signature
        let dim = FeatureLayout.dimension
        // The vectors are read through pointers below: one of another length stops here, as an
        // out-of-range index did before.
        precondition(
            s.values.count >= dim && s.mask.count >= dim && features.values.count >= dim && features.mask.count >= dim,
            "feature vectors must have FeatureLayout.dimension slots")
        // Through pointers: `FeatureLayout.slots[i]` copied a slot (retaining its name) for every
        // slot of every prior, and a new bin matches every prior.
        s.values.withUnsafeBufferPointer { sv in
            s.mask.withUnsafeBufferPointer { sm in
                features.values.withUnsafeBufferPointer { xv in
                    features.mask.withUnsafeBufferPointer { xm in
                        isTimeSlot.withUnsafeBufferPointer { time in
                            for i in 0..<dim where sm[i] > 0 {
                                let w = weights?[i] ?? 1
                                let timeSlot = time[i]
                                // A zero value still names a slot that must be present to count; weigh it as 1 for coverage.
                                let mass = w * max(sv[i] * sv[i], sv[i] == 0 ? 1 : 0)
                                if !timeSlot { needed += mass }
                                guard xm[i] > 0 else { continue }
                                if !timeSlot { evidence += mass }
                                let x = xv[i]
                                dot += w * sv[i] * x
                                ss += w * sv[i] * sv[i]
                                xx += w * x * x
                            }
                        }
                    }
                }
            }
        }
        let covered = needed == 0 || evidence / needed >= Self.minimumCoverage
        let denominator = (ss * xx).squareRoot()
        return covered && denominator > 0 ? min(max(dot / denominator, -1), 1) : 0
    }

    /// The best-matching prior, or ``fallback`` when no prior scores at least `minimumScore`.
    ///
    /// The first prior of ``match(_:weights:)``'s order (the highest score; among equal scores
    /// `default`, then file order), found in one pass instead of sorting copies of every prior:
    /// a new bin asks for it.
    public func bestMatch(_ features: FeatureVector, weights: [Float]? = nil, minimumScore: Float = 0.3) -> ContextPrior {
        let dim = FeatureLayout.dimension
        precondition(weights == nil || weights!.count == dim, "weights must have FeatureLayout.dimension entries")
        var best: (index: Int, score: Float, order: Int)?
        for i in contexts.indices {
            let score = Self.score(contexts[i], features, weights: weights)
            // A score that is not a number has no place in an order: the sort decides, as before.
            if score.isNaN { return Self.first(of: match(features, weights: weights), minimumScore: minimumScore) ?? fallback }
            let order = contexts[i].name == Self.defaultName ? -1 : i
            if let b = best, !(score > b.score || (score == b.score && order < b.order)) { continue }
            best = (i, score, order)
        }
        guard let best, best.score >= minimumScore else { return fallback }
        return contexts[best.index]
    }

    private static func first(of ranked: [(prior: ContextPrior, score: Float)], minimumScore: Float) -> ContextPrior? {
        guard let best = ranked.first, best.score >= minimumScore else { return nil }
        return best.prior
    }

    /// Popularity weight used by ``seedTracks(for:index:k:excluding:)``: seeds of a new bin
    /// lean slightly toward known tracks.
    public static let seedPopularityWeight: Float = 0.1

    /// Catalog rows to seed a new bin of a context: the tracks nearest to the prior's profile
    /// and genres (``CatalogIndex/similar(to:genres:k:excluding:popularityWeight:)``) with a small
    /// popularity bonus (``seedPopularityWeight``), best first.
    public func seedTracks(for prior: ContextPrior, index: CatalogIndex, k: Int, excluding: Set<Int> = []) -> [Int] {
        index.similar(
            to: prior.profile, genres: Set(prior.genres), k: k, excluding: excluding,
            popularityWeight: Self.seedPopularityWeight
        ).map(\.row)
    }
}
