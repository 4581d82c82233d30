/// The stored form of a catalog index: what it is computed from, as flat arrays, so that a process
/// reads it back with a few copies instead of decoding every catalog row and hashing every id and
/// genre again (issue 40). The store keeps it beside the catalog (`catalog_index`).
///
/// The form keeps each row's id, popularity, audio features and genres (as the catalog spelled
/// them, and numbered as the index numbers them), and the hash of each id (layout 2); not
/// titles, artists, albums, years or durations. An index read back ranks exactly as the index
/// written: the hashes are those the index computed, and every other derived value is computed
/// from the same columns by the same code (``CatalogIndex/init(columns:tracks:)``); the tracks'
/// audio features are made from the form only when the tracks are asked for.
///
/// ```swift
/// let bytes = CatalogIndex(tracks: tracks).storedForm()
/// let index = try CatalogIndex(storedForm: bytes)
/// ```
extension CatalogIndex {
    /// The first bytes of the form: "STCI" and the form's version.
    static let storedFormMagic: UInt32 = 0x4943_5453
    /// The version of the layout below; a form of another version is not read.
    public static let storedFormVersion: UInt32 = 2

    /// The index in its stored form.
    public func storedForm() -> [UInt8] {
        let tracks = self.tracks
        var w = ByteWriter()
        w.value(Self.storedFormMagic)
        w.value(Self.storedFormVersion)
        w.value(UInt64(count))
        w.strings(tracks.map(\.id))
        w.array(tracks.map { Int64($0.popularity ?? Int(Int64.min)) })
        var audio: [Double] = [], present: [UInt8] = []
        audio.reserveCapacity(8 * count)
        present.reserveCapacity(count)
        for t in tracks {
            let values = Self.audioValues(t.audio)
            var bits: UInt8 = 0
            for (d, v) in values.enumerated() {
                audio.append(v ?? 0)
                if v != nil { bits |= 1 << UInt8(d) }
            }
            present.append(bits)
        }
        w.array(audio)
        w.array(present)
        w.strings(genreNames)
        w.array(genreStart)
        w.array(genreFlat)
        var spelled: [String] = [], rowStart: [Int32] = [0]
        for t in tracks {
            spelled += t.genres
            rowStart.append(Int32(spelled.count))
        }
        w.strings(spelled)
        w.array(rowStart)
        w.array(rowHashes)
        return w.bytes
    }

    /// Reads an index back from ``storedForm()``.
    /// - Throws: ``StoredFormError`` when the bytes are not a form of this version or are cut short.
    public convenience init(storedForm bytes: [UInt8]) throws(StoredFormError) {
        let read = bytes.withUnsafeBytes { raw in Result { () throws(StoredFormError) in try Self.readStoredForm(raw) } }
        let (columns, tracks) = try read.get()
        self.init(columns: columns, tracks: tracks)
    }

    /// Reads an index back from the bytes of ``storedForm()`` where they lie (a database's buffer),
    /// without copying them first.
    /// - Throws: ``StoredFormError`` when the bytes are not a form of this version or are cut short.
    public convenience init(storedForm bytes: UnsafeRawBufferPointer) throws(StoredFormError) {
        let (columns, tracks) = try Self.readStoredForm(bytes)
        self.init(columns: columns, tracks: tracks)
    }

    /// The columns and tracks of a stored form.
    private static func readStoredForm(_ bytes: UnsafeRawBufferPointer) throws(StoredFormError) -> (IndexColumns, TrackTable) {
        var r = ByteReader(bytes)
        guard try r.value(UInt32.self) == Self.storedFormMagic else { throw .notAnIndex }
        let version = try r.value(UInt32.self)
        guard version == Self.storedFormVersion else { throw .version(version) }
        let n = Int(try r.value(UInt64.self))
        let ids = try r.strings()
        let popularity = try r.array(Int64.self).map { $0 == Int64.min ? nil : Int($0) }
        let values = try r.array(Double.self), present = try r.array(UInt8.self)
        let genreNames = try r.strings(), genreStart = try r.array(Int32.self), genreFlat = try r.array(Int32.self)
        let spelled = try r.stringTable(), rowStart = try r.array(Int32.self), hashes = try r.array(UInt64.self)
        guard ids.count == n, popularity.count == n, values.count == 8 * n, present.count == n, genreStart.count == n + 1,
            rowStart.count == n + 1, hashes.count == n, r.isAtEnd, Int(genreStart[n]) == genreFlat.count,
            Int(rowStart[n]) == spelled.count, genreFlat.allSatisfy({ $0 >= 0 && Int($0) < genreNames.count })
        else { throw .truncated }
        let profiles = values.withUnsafeBufferPointer { v in
            (0..<n).map { row in AudioProfile(raw: UnsafeBufferPointer(rebasing: v[(8 * row)..<(8 * row + 8)]), present: present[row]) }
        }
        let columns = IndexColumns(
            ids: ids, hashes: hashes, popularity: popularity, profiles: profiles, genreNames: genreNames, genreStart: genreStart,
            genreFlat: genreFlat)
        return (columns, TrackTable(columns: columns, rawGenres: (spelled, rowStart), rawAudio: (values, present)))
    }

    /// Why a stored form was not read.
    public enum StoredFormError: Error, Equatable, Sendable {
        /// The bytes do not start as a stored index.
        case notAnIndex
        /// A form of another layout version.
        case version(UInt32)
        /// The bytes end early or their tables disagree.
        case truncated
    }

    static func audioValues(_ a: AudioFeatures) -> [Double?] {
        [a.tempo, a.energy, a.valence, a.danceability, a.acousticness, a.instrumentalness, a.speechiness, a.loudness]
    }
}
