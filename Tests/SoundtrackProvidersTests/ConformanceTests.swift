import Foundation
import SoundtrackContext
import SoundtrackTestSupport
import Testing

@testable import SoundtrackProviders

/// Every provider against the same failures: the shared client's behaviour holds for each of them.
enum ProviderKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case openWeather, openMeteo, googleCalendar, spotify

    var testDescription: String { rawValue }

    /// The route the provider calls and a documented answer for it.
    var route: (method: String, path: String, fixture: String) {
        switch self {
        case .openWeather: return ("GET", "/data/2.5/weather", "openweather-current.json")
        case .openMeteo: return ("GET", "/v1/forecast", "openmeteo-forecast.json")
        case .googleCalendar: return ("GET", "/calendar/v3/calendars/primary/events", "google-events-page2.json")
        case .spotify: return ("GET", "/v1/me/top/tracks", "spotify-top.json")
        }
    }

    /// Calls the provider once; returns how many things it read (readings, events, tracks).
    func call(_ stub: StubServer, _ client: ProviderHTTPClient) async throws -> Int {
        switch self {
        case .openWeather:
            _ = try await OpenWeatherClient(baseURL: stub.baseURL, apiKey: "k", client: client).current(lat: 42, lon: -93)
            return 1
        case .openMeteo:
            _ = try await OpenMeteoClient(baseURL: stub.baseURL, client: client).current(lat: 42, lon: -93)
            return 1
        case .googleCalendar:
            let tokens = OAuthTokens(accessToken: "t", grant: .none, tokenURL: nil, clientID: nil, clientSecret: nil, authentication: .formBody, client: client)
            return try await GoogleCalendarClient(baseURL: stub.baseURL, tokens: tokens).events(from: Date(timeIntervalSince1970: 0), to: Date()).count
        case .spotify:
            let tokens = OAuthTokens(accessToken: "t", grant: .none, tokenURL: nil, clientID: nil, clientSecret: nil, authentication: .basicHeader, client: client)
            return try await SpotifyClient(baseURL: stub.baseURL, appTokens: nil, userTokens: tokens).topTracks().count
        }
    }
}

@Suite struct ConformanceTests {
    @Test(arguments: ProviderKind.allCases)
    func serverErrorThenSuccess(_ kind: ProviderKind) async throws {
        try await withStub { stub in
            let r = kind.route
            stub.enqueue(r.method, r.path, .status(500), .fixture(r.fixture))
            let time = TestTime()
            let n = try await kind.call(stub, testClient(time))
            #expect(n == 1)
            #expect(stub.requests.count == 2 && time.sleeps == [0.5])
        }
    }

    @Test(arguments: ProviderKind.allCases)
    func retryAfterThenSuccess(_ kind: ProviderKind) async throws {
        try await withStub { stub in
            let r = kind.route
            stub.enqueue(r.method, r.path, .status(429, headers: [("Retry-After", "3")]), .fixture(r.fixture))
            let time = TestTime()
            let n = try await kind.call(stub, testClient(time))
            #expect(n == 1)
            #expect(stub.requests.count == 2 && time.sleeps == [3])
        }
    }

    @Test(arguments: ProviderKind.allCases)
    func timeout(_ kind: ProviderKind) async throws {
        try await withStub { stub in
            let r = kind.route
            var slow = StubServer.Canned.fixture(r.fixture)
            slow.delay = 10
            stub.enqueue(r.method, r.path, slow)
            do {
                _ = try await kind.call(stub, testClient(TestTime(), timeout: 0.3, attempts: 1))
                Issue.record("expected a timeout")
            } catch {
                guard case .timeout? = error as? ProviderError else { Issue.record("expected .timeout, got \(error)"); return }
            }
        }
    }

    @Test(arguments: ProviderKind.allCases)
    func malformedJSON(_ kind: ProviderKind) async throws {
        try await withStub { stub in
            let r = kind.route
            stub.enqueue(r.method, r.path, .fixture("malformed.json"))
            do {
                _ = try await kind.call(stub, testClient(TestTime()))
                Issue.record("expected malformed")
            } catch {
                guard case .malformed? = error as? ProviderError else { Issue.record("expected .malformed, got \(error)"); return }
            }
            #expect(stub.requests.count == 1)
        }
    }

    @Test(arguments: ProviderKind.allCases)
    func aLongRetryAfterFailsAtOnceAsRateLimited(_ kind: ProviderKind) async throws {
        try await withStub { stub in
            let r = kind.route
            stub.enqueue(r.method, r.path, .status(429, headers: [("Retry-After", "120")]))
            let time = TestTime()
            do {
                _ = try await kind.call(stub, testClient(time))
                Issue.record("expected rate limited")
            } catch {
                guard case .rateLimited(120, _)? = error as? ProviderError else { Issue.record("expected .rateLimited, got \(error)"); return }
            }
            #expect(stub.requests.count == 1 && time.sleeps.isEmpty)
        }
    }
}
