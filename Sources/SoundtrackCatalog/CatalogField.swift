import SoundtrackContext

/// The columns of the catalog format (docs/formats.md), with their validation rules.
///
/// CSV and JSON Lines catalogs share these names; both readers validate values through
/// the same functions so that a value is accepted or rejected the same way in either format.
enum CatalogField: Int, CaseIterable, Sendable {
    case trackID, title, artist, album, year, genres, durationMs, popularity
    case tempo, energy, valence, danceability, acousticness, instrumentalness, speechiness, loudness

    /// The column (or JSON key) name.
    var column: String {
        switch self {
        case .trackID: "track_id"
        case .title: "title"
        case .artist: "artist"
        case .album: "album"
        case .year: "year"
        case .genres: "genres"
        case .durationMs: "duration_ms"
        case .popularity: "popularity"
        case .tempo: "tempo"
        case .energy: "energy"
        case .valence: "valence"
        case .danceability: "danceability"
        case .acousticness: "acousticness"
        case .instrumentalness: "instrumentalness"
        case .speechiness: "speechiness"
        case .loudness: "loudness"
        }
    }

    /// Columns a catalog must have.
    static let required: [CatalogField] = [.trackID, .title, .artist]

    static let byColumn: [String: CatalogField] = {
        var d: [String: CatalogField] = [:]
        for f in allCases { d[f.column] = f }
        return d
    }()

    /// The kind of value a column holds.
    enum Kind { case text, genres, integer(ClosedRange<Int>), number(ClosedRange<Double>) }

    var kind: Kind {
        switch self {
        case .trackID, .title, .artist, .album: .text
        case .genres: .genres
        case .year: .integer(1000...2100)
        case .durationMs: .integer(1...Int.max)
        case .popularity: .integer(0...100)
        case .tempo: .number(0...300)
        case .energy, .valence, .danceability, .acousticness, .instrumentalness, .speechiness: .number(0...1)
        case .loudness: .number(-60...5)
        }
    }

    /// "an integer in 1000...2100", "a number in 0...1"… for error messages.
    var expectation: String {
        switch kind {
        case .text: "a string"
        case .genres: "a ';'-separated string or an array of strings"
        case let .integer(r): r.upperBound == Int.max ? "a positive integer" : "an integer in \(r.lowerBound)...\(r.upperBound)"
        case let .number(r): "a number in \(Self.render(r.lowerBound))...\(Self.render(r.upperBound))"
        }
    }

    /// Validates a numeric value of this field; `got` renders the value for the error.
    func validate(_ value: Double, got: @autoclosure () -> String) throws(InputError) -> Double {
        guard value.isFinite else { throw InputError(path: column, expected: "a finite number", got: got()) }
        switch kind {
        case let .integer(r):
            guard value.rounded() == value, value >= Double(r.lowerBound), value <= Double(r.upperBound) else {
                throw InputError(path: column, expected: expectation, got: got())
            }
        case let .number(r):
            guard r.contains(value) else { throw InputError(path: column, expected: expectation, got: got()) }
        case .text, .genres:
            break
        }
        return value
    }

    /// Renders a number the way people write it: `2019`, `0.5`, `-60`.
    static func render(_ v: Double) -> String {
        if v.rounded() == v, abs(v) < 1e15 { return String(Int64(v)) }
        return String(v)
    }

    /// Quotes a text value for an error message, shortened to 60 characters.
    static func quote(_ s: String) -> String {
        let short = s.count > 60 ? String(s.prefix(57)) + "…" : s
        return "'\(short)'"
    }

    /// Splits a `;`-separated genre list: parts trimmed, empty parts and repeats dropped.
    static func splitGenres(_ s: String) -> [String] {
        var copy = s
        return copy.withUTF8 { splitGenres(UnsafeRawBufferPointer($0)) }
    }

    /// Splits the UTF-8 bytes of a `;`-separated genre list (the bytes must be valid UTF-8).
    static func splitGenres(_ bytes: UnsafeRawBufferPointer) -> [String] {
        var out: [String] = []
        var start = 0
        let n = bytes.count
        for i in 0...n where i == n || bytes[i] == 0x3B {
            let part = trimmedASCII(UnsafeRawBufferPointer(rebasing: bytes[start..<i]))
            start = i + 1
            if part.isEmpty { continue }
            let g = String(decoding: part, as: UTF8.self)
            if !out.contains(g) { out.append(g) }
        }
        return out
    }

    /// Trims whitespace from both ends.
    static func trim(_ s: String) -> String {
        var copy = s
        var t = copy.withUTF8 { b in
            let r = trimmedASCII(UnsafeRawBufferPointer(b))
            return r.count == b.count ? s : String(decoding: r, as: UTF8.self)
        }
        // Rare: other Unicode whitespace (a no-break space…) at either end.
        while let b = t.utf8.first, b >= 0x80, let c = t.first, c.isWhitespace { t.removeFirst() }
        while let b = t.utf8.last, b >= 0x80, let c = t.last, c.isWhitespace { t.removeLast() }
        return t
    }

    /// The bytes without leading and trailing ASCII spaces, tabs, CRs and LFs.
    static func trimmedASCII(_ raw: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        func space(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A }
        var lo = 0, hi = raw.count
        while lo < hi, space(raw[lo]) { lo += 1 }
        while hi > lo, space(raw[hi - 1]) { hi -= 1 }
        return UnsafeRawBufferPointer(rebasing: raw[lo..<hi])
    }
}

/// Accumulates the fields of one record into a ``Track``.
struct TrackDraft {
    var id = ""
    var title = ""
    var artist = ""
    var album: String?
    var year: Int?
    var genres: [String] = []
    var durationMs: Int?
    var popularity: Int?
    var audio = AudioFeatures()

    mutating func setText(_ field: CatalogField, _ value: String) {
        switch field {
        case .trackID: id = CatalogField.trim(value)
        case .title: title = value
        case .artist: artist = value
        case .album: album = value.isEmpty ? nil : value
        case .genres: genres = CatalogField.splitGenres(value)
        default: break
        }
    }

    mutating func setNumber(_ field: CatalogField, _ v: Double) {
        switch field {
        case .year: year = Int(v)
        case .durationMs: durationMs = Int(exactly: v) ?? Int.max
        case .popularity: popularity = Int(v)
        default: audio.set(field, v)
        }
    }

    func build() throws(InputError) -> Track {
        guard !id.isEmpty else {
            throw InputError(path: CatalogField.trackID.column, expected: "a non-empty id", got: "an empty value")
        }
        return Track(
            id: id, title: title, artist: artist, album: album, year: year, genres: genres,
            durationMs: durationMs, popularity: popularity, audio: audio)
    }
}

extension AudioFeatures {
    /// Sets the audio feature a catalog field names; other fields leave the features unchanged.
    mutating func set(_ field: CatalogField, _ v: Double) {
        switch field {
        case .tempo: tempo = v
        case .energy: energy = v
        case .valence: valence = v
        case .danceability: danceability = v
        case .acousticness: acousticness = v
        case .instrumentalness: instrumentalness = v
        case .speechiness: speechiness = v
        case .loudness: loudness = v
        default: break
        }
    }
}
