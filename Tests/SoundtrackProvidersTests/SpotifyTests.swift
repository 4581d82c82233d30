import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackTestSupport
import Testing

@testable import SoundtrackProviders

@Suite struct SpotifyTests {
    static func client(
        _ stub: StubServer, _ time: TestTime, http custom: ProviderHTTPClient? = nil, userToken: String? = "BQD-user-token-old", expiresIn: Double? = nil
    ) -> SpotifyClient {
        let http = custom ?? testClient(time)
        let tokenURL = stub.baseURL.appendingPathComponent("api/token")
        let app = OAuthTokens(
            grant: .clientCredentials, tokenURL: tokenURL, clientID: "spotify-client-id", clientSecret: "spotify-client-secret", authentication: .basicHeader, client: http)
        let user = OAuthTokens(
            accessToken: userToken, expiresAt: expiresIn.map { time.now().addingTimeInterval($0) }, grant: .refreshToken("AQD-refresh-secret"),
            tokenURL: tokenURL, clientID: "spotify-client-id", clientSecret: "spotify-client-secret", authentication: .basicHeader, client: http)
        return SpotifyClient(baseURL: stub.baseURL, appTokens: app, userTokens: user)
    }

    @Test func clientCredentialsThenSearchMapsTracksWithoutAudioFeatures() async throws {
        try await withStub { stub in
            stub.enqueue("POST", "/api/token", .fixture("spotify-token.json"))
            stub.enqueue("GET", "/v1/search", .fixture("spotify-search.json"))
            let (logger, capture) = capturingLogger()
            let time = TestTime()
            let spotify = Self.client(stub, time, http: testClient(time, logger: logger))
            let tracks = try await spotify.searchTracks("weightless", limit: 2)
            #expect(tracks.count == 2)
            #expect(
                tracks[0]
                    == Track(
                        id: "spotify:track:6kkwzB6hXLIONkEk9JciA6", title: "Weightless", artist: "Marconi Union", album: "Weightless",
                        year: 2011, durationMs: 480000, popularity: 61))
            #expect(tracks[1].artist == "Daft Punk, Romanthony" && tracks[1].year == 2001)
            #expect(tracks.allSatisfy { $0.audio.isEmpty && $0.genres.isEmpty })
            let token = try #require(stub.requests(to: "/api/token").first)
            #expect(token.body == "grant_type=client_credentials")
            #expect(token.header("Authorization") == "Basic " + Data("spotify-client-id:spotify-client-secret".utf8).base64EncodedString())
            let search = try #require(stub.requests(to: "/v1/search").first)
            #expect(search.header("Authorization") == "Bearer BQD-app-token-from-client-credentials")
            #expect(search.query["q"] == "weightless" && search.query["type"] == "track")
            #expect(!stub.requests.contains { $0.path.contains("audio-features") || $0.path.contains("recommendations") })
            for secret in ["spotify-client-secret", "BQD-app-token-from-client-credentials", Data("spotify-client-id:spotify-client-secret".utf8).base64EncodedString()] {
                #expect(!capture.all.contains { $0.contains(secret) }, "\(secret) was logged")
            }
        }
    }

    @Test func libraryKeepsOnlyThePlaylistsTheUserCreated() async throws {
        try await withStub { stub in
            stub.enqueue("GET", "/v1/me", .fixture("spotify-me.json"))
            stub.enqueue("GET", "/v1/me/tracks", .fixture("spotify-saved-1.json"), .fixture("spotify-saved-2.json"))
            stub.enqueue("GET", "/v1/me/top/tracks", .fixture("spotify-top.json"))
            stub.enqueue("GET", "/v1/me/playlists", .fixture("spotify-playlists.json"))
            stub.enqueue("GET", "/v1/playlists/own-focus-list/tracks", .fixture("spotify-playlist-tracks.json"))
            let lib = try await Self.client(stub, TestTime()).library()
            #expect(lib.userID == "ana-1042")
            #expect(lib.saved.map(\.track.title) == ["One More Time", "Clocks", "Weightless"])
            #expect(lib.saved[0].addedAt?.rfc3339 == "2025-11-02T08:15:00Z")
            #expect(lib.top.map(\.title) == ["Get Lucky"])
            #expect(lib.playlists.map(\.playlist.id) == ["own-focus-list"])
            #expect(lib.playlists[0].tracks.map(\.id) == ["spotify:track:6kkwzB6hXLIONkEk9JciA6", "spotify:track:1xGtGuLVt3vyN8OqB4ot9W"])  // no episode
            #expect(Set(lib.skippedPlaylists.map(\.id)) == ["37i9dQZF1DXcBWIGoYBM5M", "friend-party-list"])
            #expect(!stub.requests.contains { $0.path.contains("friend-party-list") || $0.path.contains("37i9dQZF1DXcBWIGoYBM5M") })
            let pages = stub.requests(to: "/v1/me/tracks")
            #expect(pages.map { $0.query["offset"] } == ["0", "2"])
            #expect(stub.requests.allSatisfy { $0.path == "/api/token" || $0.header("Authorization") == "Bearer BQD-user-token-old" })
        }
    }

    @Test func userTokenIsRefreshedBeforeItsHourRunsOut() async throws {
        try await withStub { stub in
            stub.enqueue("POST", "/api/token", .fixture("spotify-user-token.json"))
            stub.enqueue("GET", "/v1/me", .fixture("spotify-me.json"))
            let time = TestTime()
            let spotify = Self.client(stub, time, expiresIn: 3600)
            _ = try await spotify.currentUserID()
            #expect(stub.requests(to: "/api/token").isEmpty)
            time.advance(3550)  // 50 s left: inside the one-minute margin
            _ = try await spotify.currentUserID()
            let token = try #require(stub.requests(to: "/api/token").first)
            #expect(token.body == "grant_type=refresh_token&refresh_token=AQD-refresh-secret")
            #expect(stub.requests(to: "/v1/me").map { $0.header("Authorization") } == ["Bearer BQD-user-token-old", "Bearer BQD-user-token-refreshed"])
        }
    }

    @Test func a401RefreshesTheUserTokenOnce() async throws {
        try await withStub { stub in
            stub.enqueue("GET", "/v1/me/top/tracks", .status(401, body: #"{"error":{"status":401,"message":"The access token expired"}}"#), .fixture("spotify-top.json"))
            stub.enqueue("POST", "/api/token", .fixture("spotify-user-token.json"))
            let top = try await Self.client(stub, TestTime()).topTracks()
            #expect(top.map(\.id) == ["spotify:track:69kOkLUCkxIZYexIgSG8rq"])
            #expect(stub.requests(to: "/v1/me/top/tracks").map { $0.header("Authorization") } == ["Bearer BQD-user-token-old", "Bearer BQD-user-token-refreshed"])
        }
    }

    @Test func rateLimitAndMalformedPagesSurfaceAsErrors() async throws {
        try await withStub { stub in
            stub.enqueue("GET", "/v1/me/tracks", .status(429, headers: [("Retry-After", "2")]), .fixture("malformed.json"))
            let time = TestTime()
            do {
                _ = try await Self.client(stub, time).savedTracks()
                Issue.record("expected malformed")
            } catch {
                guard case .malformed? = error as? ProviderError else { Issue.record("expected .malformed, got \(error)"); return }
            }
            #expect(time.sleeps == [2])
        }
    }

    @Test func ownPlaylistFilterComparesOwnerIDs() {
        let lists = [
            SpotifyClient.Playlist(id: "a", name: "Mine", ownerID: "me"),
            SpotifyClient.Playlist(id: "b", name: "Followed", ownerID: "spotify"),
            SpotifyClient.Playlist(id: "c", name: "Also mine", ownerID: "me")
        ]
        #expect(SpotifyClient.ownPlaylists(lists, userID: "me").map(\.id) == ["a", "c"])
    }
}
