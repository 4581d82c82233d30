import Foundation
import SoundtrackContext
import SoundtrackEngine

/// The byte forms of a person's columns, as the SQLite store writes and reads them: for a second
/// store (PostgreSQL, `SoundtrackPostgres`) to hold the same bytes in the same columns, and to read
/// them back with the same checks. Each function is the one the SQLite store itself calls.
///
/// ```swift
/// let blob = StoredForm.vector(bin.centroid)            // little-endian Float32s
/// let centroid = StoredForm.floats(blob)
/// let songs = StoredForm.songs(bin.songs)               // the JSON text of `bins.songs`
/// ```
public enum StoredForm {
    /// A float vector (`bins.centroid`, `weights.vector`, `picks.features`…) as little-endian Float32s.
    public static func vector(_ v: [Float]) -> [UInt8] { [UInt8](VectorCoding.encode(v)) }

    /// The floats of a stored vector (a trailing partial value is ignored).
    public static func floats(_ bytes: [UInt8]) -> [Float] { bytes.withUnsafeBytes { VectorCoding.decode($0) } }

    /// A presence mask (`picks.mask`): one bit a slot when every entry is 0 or 1, else Float32s.
    public static func mask(_ mask: [Float]) -> [UInt8] { VectorCoding.encode(mask: mask) }

    /// The mask of `count` slots from its stored bytes; `nil` when their length fits neither form.
    public static func mask(_ bytes: [UInt8], count: Int) -> [Float]? {
        bytes.withUnsafeBytes { VectorCoding.decode(mask: $0, count: count) }
    }

    /// A pick's ranking (`picks.ranking`): for each bin its number (Int32) then its score (Float32).
    public static func ranking(_ ranking: [RankedBin]) -> [UInt8] { VectorCoding.encode(ranking: ranking) }

    /// The ranking of its stored bytes.
    public static func ranking(_ bytes: [UInt8]) -> [RankedBin] { bytes.withUnsafeBytes { VectorCoding.decodeRanking($0) } }

    /// A bin's songs as the JSON text of `bins.songs` (``SongListCoding``), UTF-8.
    public static func songs(_ songs: [BinSong]) -> [UInt8] { SongListCoding.encode(songs) }

    /// A bin's songs from the text of `bins.songs`.
    /// - Parameter bin: the bin's row id, for the error.
    /// - Throws: ``StoreError/corrupt(table:column:row:expected:)`` when the text is not a song list.
    public static func songs(_ text: String, bin: Int64) throws -> [BinSong] { try Store.decodeSongs(text, bin: bin) }

    /// A JSON array of integers (`sessions.avoided`), UTF-8.
    public static func ints(_ v: [Int]) -> [UInt8] { Store.encodeInts(v) }

    /// A JSON array of strings (`sessions.recent_tracks`, `sessions.tracks`, `users.place_names`…), UTF-8.
    public static func strings(_ v: [String]) -> [UInt8] { Store.encodeStrings(v) }

    /// A map of numbers as the flat JSON array `[key, value, …]`, keys ascending (`bins.transitions`,
    /// `users.merged_into`), UTF-8.
    public static func pairs(_ map: [Int: Int]) -> [UInt8] { Store.encodePairs(map) }

    /// The vocabulary and the merges of a person from the text of their `users` columns.
    /// - Throws: ``StoreError/corrupt(table:column:row:expected:)`` for a column that does not read.
    public static func userLists(row: Int64, placeNames: String, tagNames: String, mergedInto: String) throws -> (FeatureVocabulary, [Int: Int]) {
        try Store.decodeUserLists(row: row, placeNames: placeNames, tagNames: tagNames, mergedInto: mergedInto)
    }

    /// A bin's transitions from the text of `bins.transitions`.
    /// - Throws: ``StoreError/corrupt(table:column:row:expected:)`` when it does not read.
    public static func transitions(_ text: String, bin: Int64) throws -> [Int: Int] { try Store.decodeTransitions(text, bin: bin) }

    /// A session's `avoided` bins from their text.
    /// - Throws: ``StoreError/corruptSession(user:column:)``.
    public static func avoided(_ text: String, user: String) throws -> [Int] { try Store.decodeInts(text, user: user) }

    /// A session's track list (`recent_tracks`, `tracks`) from its text.
    /// - Throws: ``StoreError/corruptSession(user:column:)``.
    public static func trackList(_ text: String, user: String, column: String) throws -> [String] {
        try Store.decodeStrings(text, user: user, column: column)
    }

    /// A session's run of one style from its two columns (`nil` when either is NULL).
    public static func styleRun(style: Int64?, since: Double?) -> StyleRun? { Store.styleRun(style: style, since: since) }

    /// The context attributes the community counted an event in (`feedback.context`), as UInt64s.
    public static func attributes(_ attributes: [UInt64]) -> [UInt8] { CommunityCoding.encode(attributes: attributes) }

    /// A pending event from its stored row (`pending_events.event` and its feedback row's bin and
    /// switch), read back as written.
    /// - Throws: ``StoreError/corrupt(table:column:row:expected:)`` for an event that does not read,
    ///   is another person's, or has no feedback row (`bin` nil).
    public static func pendingEvent(seq: Int64, text: [UInt8], bin: Int?, switchedTo: Int?, user: String) throws -> PendingEvent {
        try Store.PendingRow(seq: seq, text: text, bin: bin, switchedTo: switchedTo).decode(user: user)
    }

    /// The time a store writes a user's or key's creation as (`users.created_at`, RFC 3339 in UTC).
    public static func timestamp(_ date: Date) -> String { Timestamp(date: date, offsetSeconds: 0).rfc3339 }
}
