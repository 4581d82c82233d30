import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

/// Spotify's listening-history exports as feedback events.
///
/// Two formats are read, told apart per record:
/// - the account-data export (`StreamingHistory*.json`): `endTime` (`2024-01-31 18:04`, UTC),
///   `artistName`, `trackName`, `msPlayed`;
/// - the extended history (`Streaming_History_Audio_*.json`, `endsong_*.json`): `ts` (RFC 3339,
///   UTC), `ms_played`, `master_metadata_track_name`, `master_metadata_album_artist_name`,
///   `spotify_track_uri`, `reason_start`, `reason_end`, `skipped`, `shuffle`, `platform`, … Rows whose
///   track fields are `null` (podcast episodes, audiobooks) are skipped and counted.
///
/// Each play becomes an event: `skip` when it played less than 30 s, ended with the forward
/// button (`reason_end` `fwdbtn`) or is marked `skipped`; `complete` when it played to the end
/// (`reason_end` `trackdone`) or, in the account-data format that has no end reason, played
/// 30 s or more. Other plays of the extended format (stopped, logged out, …) say nothing either
/// way and are counted as neutral. The event's snapshot holds what the history knows: the time
/// (UTC) and the platform as the tag `platform`. Event ids are a hash of user, time and track,
/// so importing the same export twice changes nothing.
public enum SpotifyHistory {
    /// Plays shorter than this are skips.
    public static let shortPlayMs = 30_000

    /// One play of a track.
    public struct Play: Sendable, Equatable {
        /// The file it came from.
        public var file: String
        /// Its 0-based index in the file's array.
        public var record: Int
        /// When it ended (UTC).
        public var at: Timestamp
        /// The track id: the Spotify URI, else a stable id from title and artist.
        public var trackId: String
        public var title: String
        public var artist: String
        public var msPlayed: Int
        /// `skip`, `complete`, or `nil` for a neutral play.
        public var signal: Signal?
        /// The platform, normalised (`android`, `ios`, `windows`, `macos`, `linux`, `web`, …).
        public var platform: String?
    }

    /// What a file held.
    public struct FileReport: Sendable, Equatable {
        /// The plays of tracks, in file order.
        public var plays: [Play] = []
        /// Records rejected (missing or malformed fields).
        public var errors: [LineError] = []
        /// Podcast episodes and other rows without track fields, skipped.
        public var podcasts = 0
    }

    /// Reads one export file (a JSON array of records).
    /// - Throws: ``LineError`` (record 0, empty field) when the file is not a JSON array.
    public static func read(_ data: Data, file: String) throws -> FileReport {
        let root: JSONValue
        do {
            root = try JSONParser.parse(data)
        } catch {
            throw LineError(line: 0, file: file, field: "", message: "expected a JSON array of plays, got malformed JSON (\(error.description))")
        }
        guard case let .array(records) = root else {
            throw LineError(line: 0, file: file, field: "", message: "expected a JSON array of plays, got another JSON value")
        }
        var report = FileReport()
        for (i, r) in records.enumerated() {
            do {
                if let play = try play(r, file: file, record: i) {
                    report.plays.append(play)
                } else {
                    report.podcasts += 1
                }
            } catch let e as LineError {
                report.errors.append(e)
            }
        }
        return report
    }

    /// One record: a play, or `nil` for a podcast row.
    static func play(_ r: JSONValue, file: String, record: Int) throws -> Play? {
        func fail(_ field: String, _ message: String) -> LineError {
            LineError(line: record, file: file, field: field, message: message)
        }
        guard case .object = r else { throw fail("", "expected an object, got another JSON value") }
        func string(_ key: String, nullable: Bool) throws -> String? {
            switch r[key] {
            case nil: throw fail(key, "expected a string, got nothing (missing field)")
            case .null?: if nullable { return nil } else { throw fail(key, "expected a string, got null") }
            case let .string(s)?: return s
            case let v?: throw fail(key, "expected a string, got \(v.serialized().prefix(40))")
            }
        }
        func optionalString(_ key: String) throws -> String? {
            switch r[key] {
            case nil, .null?: return nil
            case let .string(s)?: return s
            case let v?: throw fail(key, "expected a string or null, got \(v.serialized().prefix(40))")
            }
        }
        func milliseconds(_ key: String) throws -> Int {
            guard let v = r[key] else { throw fail(key, "expected a number of milliseconds, got nothing (missing field)") }
            guard case let .number(x) = v, x >= 0, x < 1e12, x == x.rounded() else {
                throw fail(key, "expected a number of milliseconds ≥ 0, got \(v.serialized().prefix(40))")
            }
            return Int(x)
        }
        if r["ts"] != nil {
            let tsText = try string("ts", nullable: false)!
            guard let ts = Timestamp(rfc3339: tsText) else {
                throw fail("ts", "expected an RFC 3339 timestamp such as 2024-01-31T18:04:12Z, got '\(tsText)'")
            }
            let ms = try milliseconds("ms_played")
            let title = try string("master_metadata_track_name", nullable: true)
            let artist = try string("master_metadata_album_artist_name", nullable: true)
            let uri = try optionalString("spotify_track_uri")
            let reasonEnd = try optionalString("reason_end")
            var skipped = false
            switch r["skipped"] {
            case nil, .null?: break
            case let .bool(b)?: skipped = b
            case let v?: throw fail("skipped", "expected true, false or null, got \(v.serialized().prefix(40))")
            }
            switch r["shuffle"] {
            case nil, .null?, .bool(_)?: break
            case let v?: throw fail("shuffle", "expected true, false or null, got \(v.serialized().prefix(40))")
            }
            let platform = try optionalString("platform")
            guard let title, let artist, !title.isEmpty else { return nil }
            let signal: Signal?
            if ms < shortPlayMs || reasonEnd == "fwdbtn" || skipped {
                signal = .skip
            } else if reasonEnd == "trackdone" {
                signal = .complete
            } else {
                signal = nil
            }
            let id = (uri?.isEmpty == false ? uri! : stableTrackId(title: title, artist: artist))
            return Play(
                file: file, record: record, at: Timestamp(date: ts.date, offsetSeconds: 0), trackId: id, title: title,
                artist: artist, msPlayed: ms, signal: signal, platform: platform.map(normalizedPlatform))
        }
        if r["endTime"] != nil {
            let text = try string("endTime", nullable: false)!
            guard let at = accountDataTime(text) else {
                throw fail("endTime", "expected a time such as 2024-01-31 18:04 (UTC), got '\(text)'")
            }
            guard let artist = try string("artistName", nullable: false), let title = try string("trackName", nullable: false) else {
                return nil
            }
            let ms = try milliseconds("msPlayed")
            return Play(
                file: file, record: record, at: at, trackId: stableTrackId(title: title, artist: artist), title: title,
                artist: artist, msPlayed: ms, signal: ms < shortPlayMs ? .skip : .complete, platform: nil)
        }
        throw fail("ts", "expected `ts` (extended streaming history) or `endTime` (account data), got nothing (missing field)")
    }

    /// `2024-01-31 18:04` (UTC) as a timestamp.
    static func accountDataTime(_ s: String) -> Timestamp? {
        let b = Array(s.utf8)
        guard b.count == 16, b[10] == UInt8(ascii: " ") else { return nil }
        var t = b
        t[10] = UInt8(ascii: "T")
        return Timestamp(rfc3339: String(decoding: t, as: UTF8.self) + ":00Z")
    }

    /// A stable track id for a track without a Spotify URI: `spotify-history:` and a hash of title and artist.
    public static func stableTrackId(title: String, artist: String) -> String {
        let key = title.lowercased() + "\u{1F}" + artist.lowercased()
        return "spotify-history:" + StableHash.hex(StableHash.fnv1a(key)) + StableHash.hex(StableHash.fnv1a(key, seed: 0x9E37_79B9_7F4A_7C15))
    }

    /// The event id of a play: a hash of user, time and track (the same export always gives the same ids).
    public static func eventId(user: String, at: Timestamp, trackId: String) -> String {
        let key = user + "\u{1F}" + at.rfc3339 + "\u{1F}" + trackId
        return "sp-" + StableHash.hex(StableHash.fnv1a(key)) + StableHash.hex(StableHash.fnv1a(key, seed: 0x9E37_79B9_7F4A_7C15))
    }

    /// A platform string reduced to its family (`Android OS 9 API 28 (…)` → `android`).
    public static func normalizedPlatform(_ p: String) -> String {
        let l = p.lowercased()
        for (needle, name) in [
            ("android", "android"), ("ios", "ios"), ("iphone", "ios"), ("ipad", "ios"), ("web_player", "web"),
            ("webplayer", "web"), ("windows", "windows"), ("os x", "macos"), ("osx", "macos"), ("macos", "macos"),
            ("linux", "linux"), ("cast", "cast"), ("sonos", "speaker"), ("partner", "partner"), ("playstation", "console"),
            ("xbox", "console")
        ] where l.contains(needle) {
            return name
        }
        let word = l.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        return word.isEmpty ? "other" : String(word.prefix(32))
    }

    /// The feedback events of plays (neutral plays left out), in time order (stable), as replay items
    /// whose line is the record index; and the tracks they name.
    public static func events(user: String, plays: [Play]) -> (items: [ReplayRunner.Item], tracks: [Track]) {
        let ordered = plays.enumerated().sorted { ($0.element.at.date, $0.offset) < ($1.element.at.date, $1.offset) }.map(\.element)
        var items: [ReplayRunner.Item] = []
        var tracks: [Track] = []
        var seen = Set<String>()
        for p in ordered {
            guard let signal = p.signal else { continue }
            let snapshot = Snapshot(user: user, at: p.at, tags: p.platform.map { ["platform": $0] })
            let event = FeedbackEvent(
                id: eventId(user: user, at: p.at, trackId: p.trackId), user: user, at: p.at, track: p.trackId,
                signal: signal, playedMs: p.msPlayed, snapshot: snapshot)
            items.append(ReplayRunner.Item(line: p.record, file: p.file, event: .success(event)))
            if seen.insert(p.trackId).inserted { tracks.append(Track(id: p.trackId, title: p.title, artist: p.artist)) }
        }
        return (items, tracks)
    }
}
