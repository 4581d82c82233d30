import Foundation
import SoundtrackCatalog
import SoundtrackContext

/// One style played without a break in a listening session, and since when (docs/scoring.md,
/// "No rut"): after ``EngineConfig/rutMinutes`` of it without a like, the next picks move away.
public struct StyleRun: Sendable, Equatable, Codable {
    /// The style (``TrackStyle/of(row:index:)``).
    public var style: UInt64
    /// The time of the first pick of the run.
    public var since: Date

    /// A run from its style and start.
    public init(style: UInt64, since: Date) {
        self.style = style
        self.since = since
    }
}

/// A track's style: a region of its sound, else the family of its first genre.
///
/// The region is the energy in thirds (below ⅓, below ⅔, above) and the valence in halves (below ½,
/// above): six regions a listener hears apart (calm and dark, driving and bright, …). A track
/// without energy and valence has the family of its first genre, the last word of the genre's name
/// ("dance pop" and "post-teen pop" are pop, "album rock" is rock); a track with neither has no style.
public enum TrackStyle {
    /// The style of a catalog row, as a stable hash (`nil`: none).
    public static func of(row: Int, index: CatalogIndex) -> UInt64? {
        let p = index.profiles[row]
        let energy = 1, valence = 2
        if p.mask[energy] > 0 || p.mask[valence] > 0 {
            let e = p.mask[energy] > 0 ? min(2, Int(p.values[energy] * 3)) : 3
            let v = p.mask[valence] > 0 ? min(1, Int(p.values[valence] * 2)) : 2
            return StableHash.fnv1a("sound:\(e)-\(v)")
        }
        guard let first = index.genreNumbers(ofRow: row).first else { return nil }
        let name = index.genreName(number: first)
        let family = name.split(separator: " ").last.map(String.init) ?? name
        return StableHash.fnv1a("genre:" + family.lowercased())
    }
}

extension Recommender {
    /// The style a pick at `at` moves away from: the session's run's, when it has lasted
    /// ``EngineConfig/rutMinutes`` or more since a like (`nil`: none, or the guard is off).
    func rutStyle(at: Date, state: UserState) -> UInt64? {
        guard config.rutMinutes > 0, let run = state.session.styleRun else { return nil }
        return at.timeIntervalSince(run.since) >= config.rutMinutes * 60 ? run.style : nil
    }

    /// Keeps the session's run after a pick of catalog row `row` at `at`: the same style continues
    /// it, another starts a new one, a track without style ends it.
    func continueRun(row: Int?, at: Date, state: inout UserState) {
        guard config.rutMinutes > 0 else { return }
        guard let row, let style = TrackStyle.of(row: row, index: catalog.index()) else {
            state.session.styleRun = nil
            return
        }
        if state.session.styleRun?.style != style { state.session.styleRun = StyleRun(style: style, since: at) }
    }

    /// Puts the candidates of `style` after the others, each part in its order (`order` holds
    /// indices into `rows`): what a pick in a rut ranks.
    static func movingAway(from style: UInt64, order: [Int], rows: [Int], index: CatalogIndex) -> [Int] {
        var others: [Int] = [], same: [Int] = []
        for k in order {
            if TrackStyle.of(row: rows[k], index: index) == style { same.append(k) } else { others.append(k) }
        }
        return others + same
    }
}
