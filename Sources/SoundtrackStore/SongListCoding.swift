import Foundation
import SoundtrackContext
import SoundtrackEngine

/// A bin's songs as the JSON text of its `bins.songs` column (schema v6): one
/// `["<track id>", likes, dislikes]` per song, in the bin's order, with a fourth element, the
/// song's last star rating in the bin (1…5), when it has one (schema v7).
///
/// ```json
/// [["spotify:track:4ly1QBXEwYoDmje9rmEgC4",2,0],["spotify:track:1G9k3c1P9PKnmsqeuUtGxc",0,1,2]]
/// ```
///
/// The songs live in their bin's row so that a changed bin is one row (one page) written, not a
/// row of `bins` and rows of a second B-tree of memberships. The text is JSON so that SQLite can
/// read it too: the view `bin_songs` lists the memberships as rows (`json_each`), and a `CHECK`
/// keeps the column valid JSON.
enum SongListCoding {
    /// The text of a bin's songs (compact JSON: no spaces).
    static func encode(_ songs: [BinSong]) -> [UInt8] {
        var out: [UInt8] = []
        encode(songs, into: &out)
        return out
    }

    /// Writes the text of a bin's songs into `out`, replacing its contents (a writer reuses one
    /// buffer for every bin it writes).
    static func encode(_ songs: [BinSong], into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        // Upper bound: each id escaped in full (6 bytes a byte), quotes, brackets, commas, two counts.
        var bound = 2
        for s in songs { bound += s.trackId.utf8.count * 6 + 48 }
        out.reserveCapacity(bound)
        out.append(UInt8(ascii: "["))
        for (k, s) in songs.enumerated() {
            if k > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "["))
            JSONValue.writeString(s.trackId, into: &out)
            out.append(UInt8(ascii: ","))
            // Counts are never negative; one that were would be written as it is, and refused by
            // the reader and by ``Store/check()``, not hidden.
            JSONValue.writeNumber(Double(s.likes), into: &out)
            out.append(UInt8(ascii: ","))
            JSONValue.writeNumber(Double(s.dislikes), into: &out)
            if s.rating != 0 {
                out.append(UInt8(ascii: ","))
                JSONValue.writeNumber(Double(s.rating), into: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "]"))
    }

    /// What the column must hold, for errors.
    static let expected = "a JSON array of [track id, likes, dislikes(, rating 1…5)] with counts ≥ 0"

    /// The error for a bin whose `songs` cannot be read: loads throw it, ``Store/check()`` lists it.
    static func unreadable(bin: Int64) -> StoreError {
        .corrupt(table: "bins", column: "songs", row: bin, expected: expected)
    }

    /// Calls `song(id, likes, dislikes, rating)` for each song of the text, in order; `id` is the
    /// track id's UTF-8 bytes, valid during the call only; `rating` is 0 when the song has none.
    ///
    /// The compact form that ``encode(_:)`` writes is read straight from the bytes; anything else
    /// (spaces, escapes in an id, a row edited by hand) goes through the general JSON parser.
    /// - Returns: false when the text is not ``expected`` (then `song` may have been called for
    ///   some songs already).
    static func decode(_ raw: UnsafeRawBufferPointer, _ song: (UnsafeRawBufferPointer, Int, Int, Int) -> Void) -> Bool {
        if let done = decodeCompact(raw, song) { return done }
        guard case let .array(items)? = try? JSONParser.parse(bytes: raw) else { return false }
        var parsed: [(String, Int, Int, Int)] = []
        parsed.reserveCapacity(items.count)
        for item in items {
            guard case let .array(fields) = item, fields.count == 3 || fields.count == 4, case let .string(id) = fields[0],
                let likes = count(fields[1]), let dislikes = count(fields[2])
            else { return false }
            var rating = 0
            if fields.count == 4 {
                guard let r = count(fields[3]), (1...5).contains(r) else { return false }
                rating = r
            }
            parsed.append((id, likes, dislikes, rating))
        }
        for (id, likes, dislikes, rating) in parsed {
            var id = id
            id.withUTF8 { song(UnsafeRawBufferPointer($0), likes, dislikes, rating) }
        }
        return true
    }

    /// A count: a whole number from 0 to 2^53.
    private static func count(_ v: JSONValue) -> Int? {
        guard case let .number(x) = v, x >= 0, x <= 9_007_199_254_740_992, x.rounded() == x else { return nil }
        return Int(x)
    }

    /// The compact form: `nil` when the text is not in it (the caller then parses it in general),
    /// else true once every song was handed over. Nothing is handed over unless the whole text is
    /// compact, so that the general parse does not repeat songs.
    private static func decodeCompact(_ raw: UnsafeRawBufferPointer, _ song: (UnsafeRawBufferPointer, Int, Int, Int) -> Void) -> Bool? {
        let n = raw.count
        guard n >= 2, raw[0] == UInt8(ascii: "["), raw[n - 1] == UInt8(ascii: "]") else { return nil }
        if n == 2 { return true }
        // Two passes: check, then hand over.
        for handing in [false, true] {
            var i = 1
            while true {
                guard i + 1 < n, raw[i] == UInt8(ascii: "["), raw[i + 1] == UInt8(ascii: "\"") else { return nil }
                let start = i + 2
                var j = start
                while j < n, raw[j] != UInt8(ascii: "\"") {
                    // Escapes and control characters: the general parser decides.
                    if raw[j] == UInt8(ascii: "\\") || raw[j] < 0x20 { return nil }
                    j += 1
                }
                guard j < n else { return nil }
                let id = UnsafeRawBufferPointer(rebasing: raw[start..<j])
                i = j + 1
                guard let likes = digits(raw, &i, after: UInt8(ascii: ",")),
                    let dislikes = digits(raw, &i, after: UInt8(ascii: ","))
                else { return nil }
                var rating = 0
                if i < n, raw[i] == UInt8(ascii: ",") {
                    guard let r = digits(raw, &i, after: UInt8(ascii: ",")), (1...5).contains(r) else { return nil }
                    rating = r
                }
                guard i < n, raw[i] == UInt8(ascii: "]") else { return nil }
                i += 1
                if handing { song(id, likes, dislikes, rating) }
                guard i < n else { return nil }
                if raw[i] == UInt8(ascii: "]") {
                    guard i == n - 1 else { return nil }
                    break
                }
                guard raw[i] == UInt8(ascii: ",") else { return nil }
                i += 1
            }
        }
        return true
    }

    /// `separator` then 1 to 15 decimal digits without a leading zero (or a single 0).
    private static func digits(_ raw: UnsafeRawBufferPointer, _ i: inout Int, after separator: UInt8) -> Int? {
        guard i < raw.count, raw[i] == separator else { return nil }
        i += 1
        let start = i
        var v = 0
        while i < raw.count, raw[i] >= 0x30, raw[i] <= 0x39, i - start < 15 {
            v = v * 10 + Int(raw[i] - 0x30)
            i += 1
        }
        guard i > start, !(raw[start] == 0x30 && i - start > 1) else { return nil }
        return v
    }
}
