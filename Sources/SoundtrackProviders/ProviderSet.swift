import Foundation
import Logging
import SoundtrackContext

/// The providers a configuration describes, built once: the weather chain (with its cache), Google
/// Calendar and Spotify, each `nil` (or left out of the chain) when its secrets are missing.
///
/// Open-Meteo needs no key and is always in the weather chain when `providers.weather.order` names it.
public struct ProviderSet: Sendable {
    /// The weather chain and its cache.
    public var weather: WeatherService
    /// Google Calendar, when a Google access or refresh token and `providers.google_calendar.user` are set.
    public var googleCalendar: GoogleCalendarClient?
    /// The Soundtrack user the Google tokens belong to (`providers.google_calendar.user`).
    public var googleCalendarUser: String?
    /// The Spotify Web API, when a client secret or a user token is set.
    public var spotify: SpotifyClient?
    /// The zone of floating and all-day calendar times.
    public var timeZone: TimeZone

    /// Builds the providers.
    /// - Parameters:
    ///   - configuration: the file and the secrets.
    ///   - logger: where requests are logged (secrets redacted).
    ///   - transport: the wire (URLSession by default).
    ///   - sleep: waits before retries.
    ///   - now: the clock of caches and tokens.
    public init(
        configuration c: SoundtrackConfiguration, logger: Logger, transport: any HTTPTransport = URLSessionTransport(),
        sleep: @escaping @Sendable (Double) async throws -> Void = { try await Task.sleep(nanoseconds: UInt64(max(0, $0) * 1e9)) },
        now: @escaping WallClock = { Date() }
    ) {
        let client = ProviderHTTPClient(transport: transport, policy: c.http, logger: logger, sleep: sleep, now: now)
        var chain: [any WeatherProvider] = []
        for name in c.weather.order {
            switch name {
            case "openweather":
                if let key = c.secrets.openWeatherKey { chain.append(OpenWeatherClient(baseURL: c.weather.openWeatherBaseURL, apiKey: key, client: client)) }
            case "open-meteo":
                chain.append(OpenMeteoClient(baseURL: c.weather.openMeteoBaseURL, client: client))
            default:
                break
            }
        }
        weather = WeatherService(providers: chain, ttl: c.weather.cacheTTL, cellDegrees: c.weather.cellDegrees, now: now)
        timeZone = c.calendar.timeZone.flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC")!
        let s = c.secrets
        googleCalendarUser = c.googleCalendar.user
        if s.googleAccessToken != nil || s.googleRefreshToken != nil, c.googleCalendar.user != nil {
            let tokens = OAuthTokens(
                accessToken: s.googleAccessToken, grant: s.googleRefreshToken.map { .refreshToken($0) } ?? .none,
                tokenURL: c.googleCalendar.tokenURL, clientID: c.googleCalendar.clientID, clientSecret: s.googleClientSecret,
                authentication: .formBody, client: client)
            googleCalendar = GoogleCalendarClient(baseURL: c.googleCalendar.baseURL, calendarID: c.googleCalendar.calendarID, tokens: tokens, defaultTimeZone: timeZone)
        }
        let tokenURL = HTTPRequest.url(base: c.spotify.accountsBaseURL, path: "/api/token")
        let app =
            (c.spotify.clientID != nil && s.spotifyClientSecret != nil)
            ? OAuthTokens(
                grant: .clientCredentials, tokenURL: tokenURL, clientID: c.spotify.clientID, clientSecret: s.spotifyClientSecret, authentication: .basicHeader, client: client)
            : nil
        let user =
            (s.spotifyAccessToken != nil || s.spotifyRefreshToken != nil)
            ? OAuthTokens(
                accessToken: s.spotifyAccessToken, grant: s.spotifyRefreshToken.map { .refreshToken($0) } ?? .none, tokenURL: tokenURL,
                clientID: c.spotify.clientID, clientSecret: s.spotifyClientSecret, authentication: .basicHeader, client: client)
            : nil
        if app != nil || user != nil { spotify = SpotifyClient(baseURL: c.spotify.apiBaseURL, appTokens: app, userTokens: user) }
    }
}
