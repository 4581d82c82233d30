import SoundtrackContext
import Synchronization

/// What a ``CatalogIndex`` is computed from, a value a row: the ids, the raw popularity and audio
/// features, and the genres numbered in order of first appearance (normalised, each once a row).
/// Everything else of the index (profiles, the BLAS matrix, postings, the id hashes) follows from
/// these by the same code, whether they come from tracks or from the index's stored form.
struct IndexColumns: Sendable {
    var ids: [String]
    /// The FNV-1a hash of each id (``StableHash/fnv1a(_:seed:)``).
    var hashes: [UInt64]
    var popularity: [Int?]
    /// Each row's normalised sound (``AudioProfile/init(_:)`` of its audio features).
    var profiles: [AudioProfile]
    /// Normalised genre names; a genre's number is its position.
    var genreNames: [String]
    /// Row `r`'s genre numbers, sorted, are `genreFlat[genreStart[r]..<genreStart[r + 1]]`.
    var genreStart: [Int32]
    var genreFlat: [Int32]
}

extension IndexColumns {
    /// The columns of `tracks`, genres numbered as the tracks first name them.
    init(tracks: [Track]) {
        ids = tracks.map(\.id)
        hashes = ids.map { StableHash.fnv1a($0) }
        popularity = tracks.map(\.popularity)
        profiles = tracks.map { AudioProfile($0.audio) }
        var names: [String] = [], numbers: [String: Int32] = [:]
        var start: [Int32] = [0], flat: [Int32] = []
        start.reserveCapacity(tracks.count + 1)
        for t in tracks {
            var gs: [Int32] = []
            for g in t.genres {
                let key = CatalogIndex.normalise(g)
                if key.isEmpty { continue }
                let number: Int32
                if let existing = numbers[key] {
                    number = existing
                } else {
                    number = Int32(names.count)
                    numbers[key] = number
                    names.append(key)
                }
                if !gs.contains(number) { gs.append(number) }
            }
            flat += gs.sorted()
            start.append(Int32(flat.count))
        }
        genreNames = names
        genreStart = start
        genreFlat = flat
    }
}

/// An index's tracks: as given, or made on first use from the columns of a stored index and each
/// row's genres as the catalog spelled them.
final class TrackTable: Sendable {
    private let given: [Track]?
    private let columns: IndexColumns?
    /// Row `r`'s genres as spelled are strings `rowStart[r]..<rowStart[r + 1]` of `spelled`.
    private let rawGenres: (spelled: StringTable, rowStart: [Int32])
    /// Row `r`'s audio features are `values[8r ..< 8r + 8]`, dimension `d` present when bit `d`
    /// of `present[r]` is set (``AudioProfile/names`` order).
    private let rawAudio: (values: [Double], present: [UInt8])
    private let made = Mutex<[Track]?>(nil)

    init(_ tracks: [Track]) {
        given = tracks
        columns = nil
        rawGenres = (StringTable([]), [])
        rawAudio = ([], [])
    }

    init(columns: IndexColumns, rawGenres: (spelled: StringTable, rowStart: [Int32]), rawAudio: (values: [Double], present: [UInt8])) {
        given = nil
        self.columns = columns
        self.rawGenres = rawGenres
        self.rawAudio = rawAudio
    }

    var tracks: [Track] {
        if let given { return given }
        return made.withLock { made in
            if let made { return made }
            let c = columns!
            let (spelled, rowStart) = rawGenres
            let (values, present) = rawAudio
            let tracks = c.ids.indices.map { r in
                let bits = present[r], base = 8 * r
                func v(_ d: Int) -> Double? { bits & (1 << UInt8(d)) != 0 ? values[base + d] : nil }
                let audio = AudioFeatures(
                    tempo: v(0), energy: v(1), valence: v(2), danceability: v(3), acousticness: v(4), instrumentalness: v(5),
                    speechiness: v(6), loudness: v(7))
                return Track(
                    id: c.ids[r], title: "", artist: "", genres: (Int(rowStart[r])..<Int(rowStart[r + 1])).map { spelled[$0] },
                    popularity: c.popularity[r], audio: audio)
            }
            made = tracks
            return tracks
        }
    }
}
