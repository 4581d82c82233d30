import Foundation
import SoundtrackApp
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackTestSupport
import Testing

@testable import SoundtrackProviders
@testable import SoundtrackStore

@Suite struct ImportAndEnrichTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    static let march = ICSTests.date("2026-03-01T00:00:00+01:00")
    static let april = ICSTests.date("2026-04-15T00:00:00+02:00")

    static func store(users: [String] = ["u-1"]) throws -> Store {
        let s = try Store.inMemory()
        for u in users { try s.addUser(NewUser(id: u), at: Date(timeIntervalSince1970: 0)) }
        return s
    }

    @Test func icsImportStoresCategoriesAndTimesButNoTitlesByDefault() throws {
        let store = try Self.store()
        let r = try ProviderImports.importICS(Fixtures.text("calendar.ics"), user: "u-1", store: store, timeZone: Self.berlin, from: Self.march, to: Self.april, now: Date())
        #expect(r.stored == 11 && r.events == 3 && r.rejected.count == 1)
        let day = try store.calendarEvents(user: "u-1", from: ICSTests.date("2026-03-14T00:00:00+01:00"), to: ICSTests.date("2026-03-15T00:00:00+01:00"))
        #expect(day.map(\.category) == [.rest, .study])
        #expect(day.allSatisfy { $0.title == nil })
        #expect(day[0].allDay && day[0].start.rfc3339 == "2026-03-14T00:00:00+01:00")
        #expect(day[1].start.rfc3339 == "2026-03-14T06:30:00Z")
        // Importing the same file again changes nothing.
        _ = try ProviderImports.importICS(Fixtures.text("calendar.ics"), user: "u-1", store: store, timeZone: Self.berlin, from: Self.march, to: Self.april, now: Date())
        #expect(try store.calendarEventCount(user: "u-1") == 11)
        let gym = try store.calendarEvents(user: "u-1", from: ICSTests.date("2026-03-30T00:00:00+02:00"), to: ICSTests.date("2026-03-31T00:00:00+02:00"))
        #expect(gym.map(\.category) == [.workout] && gym[0].start.rfc3339 == "2026-03-30T18:00:00+02:00")
    }

    @Test func titlesAreKeptOnlyWhenTheUserKeepsRawSnapshots() throws {
        let store = try Self.store()
        try store.updateSettings(user: "u-1") { $0.keepRawSnapshots = true }
        _ = try ProviderImports.importICS(Fixtures.text("calendar.ics"), user: "u-1", store: store, timeZone: Self.berlin, from: Self.march, to: Self.april, now: Date())
        let day = try store.calendarEvents(user: "u-1", from: ICSTests.date("2026-03-14T00:00:00+01:00"), to: ICSTests.date("2026-03-15T00:00:00+01:00"))
        #expect(day.map(\.title) == ["Public holiday", "Study group, algorithms ; graphs and a long title that is folded over two lines"])
    }

    @Test func forgetDeletesCalendarEventsAndLibraryRows() async throws {
        let store = try Self.store(users: ["u-1", "u-2"])
        for u in ["u-1", "u-2"] {
            _ = try ProviderImports.importICS(Fixtures.text("calendar.ics"), user: u, store: store, timeZone: Self.berlin, from: Self.march, to: Self.april, now: Date())
            try store.importLibrary(
                user: u, tracks: [Track(id: "spotify:track:x", title: "X", artist: "Y")], entries: [LibraryEntry(trackID: "spotify:track:x", list: .saved, rank: 0)], at: Date())
        }
        #expect(try store.rowCounts(user: "u-1")["calendar_events"] == 11)
        #expect(try store.rowCounts(user: "u-1")["library_tracks"] == 1)
        #expect(try store.forget(user: "u-1"))
        #expect(try store.rowCounts(user: "u-1").values.allSatisfy { $0 == 0 })
        #expect(try store.rowCounts(user: "u-2")["calendar_events"] == 11)
        #expect(try store.rowCounts(user: "u-2")["library_tracks"] == 1)
        #expect(try store.check().isEmpty)
    }

    @Test func spotifyLibraryImportKeepsCatalogAudioFeatures() async throws {
        try await withStub { stub in
            stub.enqueue("GET", "/v1/me", .fixture("spotify-me.json"))
            stub.enqueue("GET", "/v1/me/tracks", .fixture("spotify-saved-1.json"), .fixture("spotify-saved-2.json"))
            stub.enqueue("GET", "/v1/me/top/tracks", .fixture("spotify-top.json"))
            stub.enqueue("GET", "/v1/me/playlists", .fixture("spotify-playlists.json"))
            stub.enqueue("GET", "/v1/playlists/own-focus-list/tracks", .fixture("spotify-playlist-tracks.json"))
            let store = try Self.store()
            let known = Track(
                id: "spotify:track:0BCPKOYdS2jbQ8iyB56Zns", title: "Clocks (old title)", artist: "Coldplay", genres: ["rock", "britpop"],
                audio: AudioFeatures(tempo: 131, energy: 0.75, valence: 0.26, danceability: 0.58))
            try store.upsertTracks([known])
            let r = try await ProviderImports.importSpotifyLibrary(SpotifyTests.client(stub, TestTime()), user: "u-1", store: store, now: Date())
            #expect(r.spotifyUser == "ana-1042" && r.tracks == 5 && r.saved == 3 && r.top == 1 && r.playlistTracks == 2)
            #expect(r.ownPlaylists == 1 && r.skippedPlaylists == 2)
            let clocks = try #require(try store.tracks(ids: [known.id])[known.id])
            #expect(clocks.title == "Clocks" && clocks.year == 2002 && clocks.popularity == 83)
            #expect(clocks.audio == known.audio && clocks.genres == ["rock", "britpop"])
            let lib = try store.library(user: "u-1")
            #expect(
                lib.filter { $0.list == .saved }.map(\.trackID) == [
                    "spotify:track:0DiWol3AO6WpXZgp0goxAV", "spotify:track:0BCPKOYdS2jbQ8iyB56Zns", "spotify:track:6kkwzB6hXLIONkEk9JciA6"
                ])
            #expect(lib.filter { $0.list == .top }.count == 1 && lib.filter { $0.list == .playlist }.count == 2)
            #expect(lib[0].addedAt == ICSTests.date("2025-11-02T08:15:00Z"))
        }
    }

    @Test func enricherFillsMissingSectionsAndReportsSources() async throws {
        try await withStub { stub in
            stub.enqueue("GET", "/data/2.5/weather", .status(500))
            stub.enqueue("GET", "/v1/forecast", .fixture("openmeteo-forecast.json"))
            let store = try Self.store()
            _ = try ProviderImports.importICS(Fixtures.text("calendar.ics"), user: "u-1", store: store, timeZone: Self.berlin, from: Self.march, to: Self.april, now: Date())
            var config = SoundtrackConfiguration()
            config.weather.openWeatherBaseURL = stub.baseURL
            config.weather.openMeteoBaseURL = stub.baseURL
            config.http = RetryPolicy(maxAttempts: 1, timeout: 10)
            config.secrets.openWeatherKey = "k-123"
            let time = TestTime()
            let providers = ProviderSet(configuration: config, logger: .init(label: "t"), sleep: time.sleep, now: time.now)
            let enricher = ProviderImports.enricher(providers, store: store, lookaheadHours: 2)
            let snap = Snapshot(user: "u-1", at: Timestamp(rfc3339: "2026-03-14T07:00:00+01:00")!, location: Location(lat: 42.03, lon: -93.65))
            let (out, report) = await enricher.enrich(snap)
            #expect(out.weather?.tempC == 4.1)
            #expect(out.calendar?.events.map(\.category) == [.rest, .study])
            #expect(
                report == [
                    EnrichmentEntry(section: "weather", source: "openweather", status: .failed, reason: "http_error"),
                    EnrichmentEntry(section: "weather", source: "open-meteo", status: .filled),
                    EnrichmentEntry(section: "calendar", source: "stored-events", status: .filled)
                ])
            // Sections the phone sent are never replaced, and nothing is asked for them.
            let before = stub.requests.count
            var full = snap
            full.weather = Weather(tempC: 20)
            full.calendar = CalendarInfo(events: [])
            let (same, none) = await enricher.enrich(full)
            #expect(same == full && none.isEmpty && stub.requests.count == before)
            // Without coordinates the weather is skipped, not failed.
            let (_, skipped) = await enricher.enrich(Snapshot(user: "u-1", at: snap.at, calendar: CalendarInfo()))
            #expect(skipped == [EnrichmentEntry(section: "weather", source: "none", status: .skipped, reason: "no_coordinates")])
            let pick = EnrichmentEntry.annotate(.object([("pick_id", .string("p-1"))]), with: report)
            #expect(pick.serialized().contains(#""enriched":[{"section":"weather","source":"openweather","status":"failed","reason":"http_error"}"#))
        }
    }
}

@Suite struct ProviderSetTests {
    @Test func googleCalendarFillsTheCalendarWhenNoEventsAreStored() async throws {
        try await withStub { stub in
            stub.enqueue("GET", "/calendar/v3/calendars/work%40example.org/events", .fixture("google-events-page2.json"))
            var config = SoundtrackConfiguration()
            config.googleCalendar.baseURL = stub.baseURL
            config.googleCalendar.calendarID = "work@example.org"
            config.googleCalendar.user = "u-1"
            config.weather.order = []
            config.secrets = .init(environment: ["SOUNDTRACK_GOOGLE_ACCESS_TOKEN": "ya29.static"])
            let time = TestTime()
            let providers = ProviderSet(configuration: config, logger: .init(label: "t"), sleep: time.sleep, now: time.now)
            #expect(providers.spotify == nil)
            let store = try ImportAndEnrichTests.store()
            let enricher = ProviderImports.enricher(providers, store: store, lookaheadHours: 12)
            let (out, report) = await enricher.enrich(Snapshot(user: "u-1", at: Timestamp(rfc3339: "2026-03-14T09:00:00+01:00")!))
            #expect(
                report == [
                    EnrichmentEntry(section: "weather", source: "none", status: .skipped, reason: "no_coordinates"),
                    EnrichmentEntry(section: "calendar", source: "stored-events", status: .skipped, reason: "no_events"),
                    EnrichmentEntry(section: "calendar", source: "google-calendar", status: .filled)
                ])
            let event = try #require(out.calendar?.events.first)
            #expect(event.category == .rest && event.title == nil && event.allDay)
            #expect(event.start.rfc3339 == "2026-03-14T00:00:00+01:00")
            #expect(stub.requests.first?.header("Authorization") == "Bearer ya29.static")
            // The tokens open u-1's calendar: another user's snapshot never gets it.
            try store.addUser(NewUser(id: "u-2"), at: Date())
            let (other, otherReport) = await enricher.enrich(Snapshot(user: "u-2", at: Timestamp(rfc3339: "2026-03-14T09:00:00+01:00")!))
            #expect(other.calendar == nil && stub.requests.count == 1)
            #expect(otherReport.last == EnrichmentEntry(section: "calendar", source: "stored-events", status: .skipped, reason: "no_events"))
        }
    }

    @Test func spotifyNeedsAClientSecretOrAUserToken() {
        var config = SoundtrackConfiguration()
        config.spotify.clientID = "id"
        #expect(ProviderSet(configuration: config, logger: .init(label: "t")).spotify == nil)
        config.secrets = .init(environment: ["SOUNDTRACK_SPOTIFY_CLIENT_SECRET": "s"])
        let app = ProviderSet(configuration: config, logger: .init(label: "t")).spotify
        #expect(app != nil && app?.appTokens != nil && app?.userTokens == nil)
        config.secrets = .init(environment: ["SOUNDTRACK_SPOTIFY_REFRESH_TOKEN": "r", "SOUNDTRACK_SPOTIFY_CLIENT_SECRET": "s"])
        #expect(ProviderSet(configuration: config, logger: .init(label: "t")).spotify?.userTokens != nil)
    }
}
