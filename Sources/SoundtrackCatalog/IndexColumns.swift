import Synchronization

/// What a ``CatalogIndex`` is computed from, a value a row: the ids, the raw popularity and audio
/// features, and the genres numbered in order of first appearance (normalised, each once a row).
/// Everything else of the index (profiles, the BLAS matrix, postings, the id hashes) follows from
/// these by the same code, whether they come from tracks or from the index's stored form.
struct IndexColumns: Sendable {
    var ids: [String]
    var popularity: [Int?]
    var audio: [AudioFeatures]
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
        popularity = tracks.map(\.popularity)
        audio = tracks.map(\.audio)
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
    private let made = Mutex<[Track]?>(nil)

    init(_ tracks: [Track]) {
        given = tracks
        columns = nil
        rawGenres = (StringTable([]), [])
    }

    init(columns: IndexColumns, rawGenres: (spelled: StringTable, rowStart: [Int32])) {
        given = nil
        self.columns = columns
        self.rawGenres = rawGenres
    }

    var tracks: [Track] {
        if let given { return given }
        return made.withLock { made in
            if let made { return made }
            let c = columns!
            let (spelled, rowStart) = rawGenres
            let tracks = c.ids.indices.map { r in
                Track(
                    id: c.ids[r], title: "", artist: "", genres: (Int(rowStart[r])..<Int(rowStart[r + 1])).map { spelled[$0] },
                    popularity: c.popularity[r], audio: c.audio[r])
            }
            made = tracks
            return tracks
        }
    }
}
