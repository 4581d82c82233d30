import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import SoundtrackContext
import SoundtrackProviders
import SoundtrackServer
import SoundtrackTestSupport
import Testing

/// `POST /v1/users/{id}/onboard` (issue 42, item 7): a first bin from one song; an admin key
/// creates a new user with it, and an onboarding that fails leaves no user behind; a song outside
/// the catalog is found by the Spotify search, against a stub on loopback.
@Suite struct OnboardTests {
    /// Spotify's client against the stub: client-credentials tokens, then the search.
    static func spotify(_ stub: StubServer) -> SpotifyClient {
        let http = ProviderHTTPClient(
            transport: URLSessionTransport(), policy: RetryPolicy(maxAttempts: 1, baseDelay: 0, maxDelay: 0, timeout: 10),
            logger: Logger(label: "test"), sleep: { _ in })
        let app = OAuthTokens(
            grant: .clientCredentials, tokenURL: stub.baseURL.appendingPathComponent("api/token"), clientID: "spotify-client-id",
            clientSecret: "spotify-client-secret", authentication: .basicHeader, client: http)
        return SpotifyClient(baseURL: stub.baseURL, appTokens: app, userTokens: nil)
    }

    static let token = StubServer.Canned(
        status: 200, headers: [("Content-Type", "application/json")],
        body: Data(#"{"access_token": "BQD-app-token", "token_type": "Bearer", "expires_in": 3600}"#.utf8))
    static let search = StubServer.Canned(
        status: 200, headers: [("Content-Type", "application/json")],
        body: Data(
            #"{"tracks": {"items": [{"id": "6kkwzB6hXLIONkEk9JciA6", "name": "Weightless", "uri": "spotify:track:6kkwzB6hXLIONkEk9JciA6", "artists": [{"name": "Marconi Union"}], "album": {"name": "Weightless", "release_date": "2011-10-11"}, "duration_ms": 480000, "popularity": 61}]}}"#
                .utf8))

    @Test func catalogSongsNewUsersAndWhatIsRefused() async throws {
        let f = try Fixture()
        let track = try f.track
        let admin = f.admin, key = f.keys["u-1"]!
        let snapshot = Doc.snapshot(user: "n-1")
        try await f.api.buildApplication().test(.router) { client in
            // An admin key creates the user with its first bin (201).
            var r = try await client.send(.post, "/v1/users/n-1/onboard", key: admin, body: #"{"song": "\#(track)", "snapshot": \#(snapshot)}"#)
            #expect(r.status == .created, "\(r.text)")
            #expect(r.json["track"]?["id"]?.stringValue == track)
            #expect(r.json["bin"]?["created"] == .bool(true))
            #expect(r.json["pick_id"]?.stringValue?.hasPrefix("p-") == true)
            r = try await client.send(.get, "/v1/users/n-1/bins", key: admin)
            #expect(r.status == .ok && r.text.contains(track), "\(r.text)")
            // A user's own key onboards them (200); without a snapshot, one of now is used.
            r = try await client.send(.post, "/v1/users/u-1/onboard", key: key, body: #"{"song": "\#(track)"}"#)
            #expect(r.status == .ok, "\(r.text)")
            // Another user's path with a user key: 403, nothing created.
            r = try await client.send(.post, "/v1/users/n-2/onboard", key: key, body: #"{"song": "\#(track)"}"#)
            #expect(r.status == .forbidden)
            // A song outside the catalog without Spotify: 400 naming it, and no user left behind.
            r = try await client.send(.post, "/v1/users/n-3/onboard", key: admin, body: #"{"song": "no such song"}"#)
            #expect(r.status == .badRequest && r.errorField == "song", "\(r.text)")
            #expect(try await client.send(.get, "/v1/users/n-3/bins", key: admin).status == .notFound)
            #expect(try !f.service.store.userExists("n-3"))
            // Bad bodies name their field.
            r = try await client.send(.post, "/v1/users/n-4/onboard", key: admin, body: #"{"song": "\#(track)", "snapshot": \#(Doc.snapshot(user: "u-2"))}"#)
            #expect(r.errorField == "snapshot.user", "\(r.text)")
            r = try await client.send(.post, "/v1/users/n-4/onboard", key: admin, body: #"{"snapshot": \#(snapshot)}"#)
            #expect(r.errorField == "song", "\(r.text)")
            r = try await client.send(.post, "/v1/users/n-4/onboard", key: admin, body: #"{"song": "\#(track)", "volume": 3}"#)
            #expect(r.errorField == "volume", "\(r.text)")
            #expect(try !f.service.store.userExists("n-4"))
        }
    }

    @Test func aSongOutsideTheCatalogIsFoundBySpotifysSearch() async throws {
        try await withStub { stub in
            stub.enqueue("POST", "/api/token", Self.token)
            stub.enqueue("GET", "/v1/search", Self.search)
            let f = try Fixture { $0.spotify = Self.spotify(stub) }
            let admin = f.admin
            try await f.api.buildApplication().test(.router) { client in
                let r = try await client.send(.post, "/v1/users/n-5/onboard", key: admin, body: #"{"song": "marconi union weightless"}"#)
                #expect(r.status == .created, "\(r.text)")
                #expect(r.json["track"]?["id"]?.stringValue == "spotify:track:6kkwzB6hXLIONkEk9JciA6")
                #expect(r.json["track"]?["title"]?.stringValue == "Weightless")
            }
            let search = try #require(stub.requests(to: "/v1/search").first)
            #expect(search.query["q"] == "marconi union weightless")
            #expect(search.header("Authorization") == "Bearer BQD-app-token")
            #expect(try f.service.store.tracks(ids: ["spotify:track:6kkwzB6hXLIONkEk9JciA6"]).count == 1)
        }
    }

    @Test func aFailedSearchIsABadGatewayAndLeavesNoUser() async throws {
        try await withStub { stub in
            stub.enqueue("POST", "/api/token", Self.token)
            stub.enqueue("GET", "/v1/search", .status(500))
            let f = try Fixture { $0.spotify = Self.spotify(stub) }
            let admin = f.admin
            try await f.api.buildApplication().test(.router) { client in
                let r = try await client.send(.post, "/v1/users/n-6/onboard", key: admin, body: #"{"song": "marconi union weightless"}"#)
                #expect(r.status == .badGateway, "\(r.text)")
                #expect(r.errorCode == "provider_failed" && r.errorField == "song")
            }
            #expect(try !f.service.store.userExists("n-6"))
        }
    }
}
