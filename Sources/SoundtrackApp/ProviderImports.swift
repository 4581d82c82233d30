import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackProviders
import SoundtrackStore

/// What `import ics`, `import spotify-library` and `pick --enrich` do, between the providers and the store.
public enum ProviderImports {
    /// What an ICS import did.
    public struct ICSReport: Sendable, Equatable {
        /// Occurrences stored (recurring events expanded within the window).
        public var stored: Int
        /// Events in the file.
        public var events: Int
        /// Events that could not be read (line and field), skipped.
        public var rejected: [InputError]
        /// The start of the window recurring events were expanded in.
        public var from: Date
        /// The end of that window.
        public var to: Date
    }

    /// Imports an ICS file's events for a user: occurrences overlapping `[from, to)` replace the user's
    /// ICS events of that window; each is stored with its category (classified from the title) and
    /// times, the title only when the user keeps raw snapshots.
    public static func importICS(_ text: String, user: String, store: Store, timeZone: TimeZone, from: Date, to: Date, now: Date) throws -> ICSReport {
        let calendar = try ICSCalendar.parse(text, defaultTimeZone: timeZone)
        let occurrences = calendar.occurrences(from: from, to: to)
        let events = occurrences.map { o in
            StoredCalendarEvent(
                sourceID: o.uid, start: o.start, end: o.end, allDay: o.allDay,
                category: o.title.map(CalendarClassifier.classify) ?? .other, title: o.title)
        }
        let n = try store.replaceCalendarEvents(user: user, source: .ics, from: from, to: to, events: events, at: now)
        return ICSReport(stored: n, events: calendar.events.count, rejected: calendar.errors, from: from, to: to)
    }

    /// What a Spotify library import did.
    public struct LibraryReport: Sendable, Equatable {
        /// The user's Spotify id.
        public var spotifyUser: String
        /// Distinct tracks upserted into the catalog.
        public var tracks: Int
        /// Saved tracks.
        public var saved: Int
        /// Top tracks.
        public var top: Int
        /// Tracks of the user's own playlists.
        public var playlistTracks: Int
        /// Own playlists read.
        public var ownPlaylists: Int
        /// Followed playlists skipped.
        public var skippedPlaylists: Int
    }

    /// Reads a user's Spotify library and stores it: the tracks into the catalog (features already
    /// there kept), the saved/top/own-playlist lists into `library_tracks`.
    public static func importSpotifyLibrary(_ client: SpotifyClient, user: String, store: Store, now: Date) async throws -> LibraryReport {
        guard try store.userExists(user) else { throw RuleError.unknownUser(user) }
        let lib = try await client.library()
        var tracks: [String: Track] = [:]
        var order: [String] = []
        func add(_ t: Track) {
            if tracks[t.id] == nil { order.append(t.id) }
            tracks[t.id] = t
        }
        var entries: [LibraryEntry] = []
        for (i, s) in lib.saved.enumerated() {
            add(s.track)
            entries.append(LibraryEntry(trackID: s.track.id, list: .saved, rank: i, addedAt: s.addedAt?.date))
        }
        for (i, t) in lib.top.enumerated() {
            add(t)
            entries.append(LibraryEntry(trackID: t.id, list: .top, rank: i))
        }
        var rank = 0, playlistCount = 0
        for p in lib.playlists {
            for t in p.tracks {
                add(t)
                entries.append(LibraryEntry(trackID: t.id, list: .playlist, rank: rank))
                rank += 1
                playlistCount += 1
            }
        }
        try store.importLibrary(user: user, tracks: order.compactMap { tracks[$0] }, entries: entries, at: now)
        return LibraryReport(
            spotifyUser: lib.userID, tracks: order.count, saved: lib.saved.count, top: lib.top.count, playlistTracks: playlistCount,
            ownPlaylists: lib.playlists.count, skippedPlaylists: lib.skippedPlaylists.count)
    }

    /// The enricher of `pick --enrich`: the providers' weather chain and Google Calendar, and the
    /// store's imported events.
    public static func enricher(_ providers: ProviderSet, store: Store, lookaheadHours: Double) -> SnapshotEnricher {
        SnapshotEnricher(
            weather: providers.weather, googleCalendar: providers.googleCalendar, googleCalendarUser: providers.googleCalendarUser,
            storedEvents: { user, from, to in try store.calendarEvents(user: user, from: from, to: to) },
            lookahead: lookaheadHours * 3600)
    }
}
