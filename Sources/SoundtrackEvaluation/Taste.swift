import Foundation
import SoundtrackCatalog

/// The ground-truth context of a simulated snapshot: what the simulated person is doing.
public enum ContextLabel: String, Sendable, Equatable, Hashable, CaseIterable, Comparable {
    case wake, commute, work, study, workout, run, relax, social, errand

    public static func < (a: ContextLabel, b: ContextLabel) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// The audio target every person starts from in this context, before their own perturbation:
    /// energy, valence, danceability, acousticness, tempo (normalised as in ``Taste/features(of:)``).
    public var archetype: [Double] {
        switch self {
        case .wake: return [0.45, 0.70, 0.55, 0.50, 0.40]
        case .commute: return [0.75, 0.65, 0.72, 0.12, 0.50]
        case .work: return [0.40, 0.45, 0.50, 0.55, 0.40]
        case .study: return [0.30, 0.40, 0.45, 0.70, 0.35]
        case .workout: return [0.90, 0.55, 0.68, 0.05, 0.72]
        case .run: return [0.85, 0.62, 0.62, 0.08, 0.80]
        case .relax: return [0.30, 0.35, 0.45, 0.70, 0.30]
        case .social: return [0.80, 0.80, 0.80, 0.08, 0.55]
        case .errand: return [0.60, 0.60, 0.62, 0.30, 0.50]
        }
    }
}

/// A simulated person's hidden taste in one context: an audio target, how much each audio feature
/// matters, and favourite genres.
///
/// The utility of a track is `u = 0.7 · exp(−d² / (2 · 0.18²)) + 0.3 · g`, where
/// `d² = Σ wᵢ (fᵢ − τᵢ)² / Σ wᵢ` over the five audio features `f` (``features(of:)``), `τ` is
/// ``target``, `w` is ``importance``, and `g` is 1 when the track shares a genre with ``genres``.
/// The person likes a track when `u + ε` exceeds their threshold, `ε ~ N(0, 0.07²)`.
public struct Taste: Sendable, Equatable {
    /// Names of the five audio features, in the order of ``target``.
    public static let featureNames = ["energy", "valence", "danceability", "acousticness", "tempo"]

    /// The preferred value of each audio feature, in [0, 1].
    public var target: [Double]
    /// How much each audio feature matters (0.5...1.5).
    public var importance: [Double]
    /// Favourite genres in this context.
    public var genres: [String]

    /// Creates a taste.
    public init(target: [Double], importance: [Double], genres: [String]) {
        self.target = target
        self.importance = importance
        self.genres = genres
    }

    /// The five audio features of a track in [0, 1]; tempo is `(bpm − 60) / 140`, clamped. A missing
    /// feature is 0.5.
    public static func features(of t: Track) -> [Double] {
        let a = t.audio
        let tempo = a.tempo.map { min(1, max(0, ($0 - 60) / 140)) } ?? 0.5
        return [a.energy ?? 0.5, a.valence ?? 0.5, a.danceability ?? 0.5, a.acousticness ?? 0.5, tempo]
    }

    /// The utility of a track in this context, in [0, 1].
    public func utility(_ t: Track) -> Double {
        utility(features: Self.features(of: t), genres: t.genres)
    }

    /// The utility of a track given its features (``features(of:)``) and genres.
    public func utility(features f: [Double], genres trackGenres: [String]) -> Double {
        var d2 = 0.0, wsum = 0.0
        for i in 0..<target.count {
            let d = f[i] - target[i]
            d2 += importance[i] * d * d
            wsum += importance[i]
        }
        d2 /= wsum
        let fit = exp(-d2 / (2 * 0.18 * 0.18))
        let g = trackGenres.contains { genres.contains($0) } ? 1.0 : 0.0
        return 0.7 * fit + 0.3 * g
    }
}
