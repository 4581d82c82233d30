import Foundation
import SoundtrackContext

/// The configuration file (`soundtrack.json`) and the secrets from the environment.
///
/// The file is JSON read by the project's strict parser: unknown keys and wrong types are errors that
/// name the key path and what was expected. Secrets never live in the file (a key that looks like one is
/// rejected); they come from environment variables the executable passes in (see ``Secrets``).
///
/// ```swift
/// let config = try SoundtrackConfiguration.parse(data, environment: ProcessInfo.processInfo.environment)
/// config.weather.order          // ["openweather", "open-meteo"]
/// ```
public struct SoundtrackConfiguration: Sendable, Equatable {
    /// `database.path`: the SQLite file (the `--db` option and `SOUNDTRACK_DB` take precedence).
    public var databasePath: String?
    /// `database.email_key_file`: the key of the users' email hashes (the `--email-key-file` option and
    /// `SOUNDTRACK_EMAIL_KEY_FILE` take precedence; without any, the file beside the database).
    public var emailKeyFile: String?
    /// `models_dir`: a directory of model files (the `--models` option takes precedence).
    public var modelsDir: String?
    /// `server`: what `soundtrack serve` uses unless its options say otherwise.
    public var server = Server()
    /// `http`: timeouts and retries of every provider.
    public var http = RetryPolicy()
    /// `providers.weather`.
    public var weather = WeatherSection()
    /// `providers.google_calendar`.
    public var googleCalendar = GoogleCalendarSection()
    /// `providers.spotify`.
    public var spotify = SpotifySection()
    /// `calendar`: imported and fetched calendar events.
    public var calendar = CalendarSection()
    /// Secrets, from the environment.
    public var secrets = Secrets()

    /// The defaults (every provider at its public base URL, no secrets).
    public init() {}

    /// The `server` section.
    public struct Server: Sendable, Equatable {
        /// `server.host`: the address to bind.
        public var host: String?
        /// `server.port` (0: any free port).
        public var port: Int?
        /// `server.max_body_bytes`: the largest request body.
        public var maxBodyBytes: Int?
        /// `server.max_batch_events`: the most events in one feedback batch.
        public var maxBatchEvents: Int?
        /// `server.rate`: requests per second of each user key.
        public var rate: Double?
        /// `server.burst`: requests at once of each user key.
        public var burst: Double?
        /// `server.idle_timeout_s`: how long a connection may wait for a complete request part.
        public var idleTimeout: Double?
        /// `server.body_timeout_s`: the most time a request body may take to arrive.
        public var bodyTimeout: Double?
        /// `server.shutdown_delay_s`: after SIGTERM, how long `/readyz` answers 503 before the listener closes.
        public var shutdownDelay: Double?
        /// `server.drain_timeout_s`: after the listener closes, the most time requests in flight get.
        public var drainTimeout: Double?
        /// The defaults.
        public init() {}
    }

    /// The `providers.weather` section.
    public struct WeatherSection: Sendable, Equatable {
        /// The fallback chain, first choice first: `openweather`, `open-meteo`.
        public var order = ["openweather", "open-meteo"]
        /// Seconds an answer is reused for the same cell.
        public var cacheTTL: Double = 600
        /// The cache's cell size in degrees.
        public var cellDegrees: Double = 0.1
        /// `providers.weather.openweather.base_url`.
        public var openWeatherBaseURL = URL(string: "https://api.openweathermap.org")!
        /// `providers.weather.open_meteo.base_url`.
        public var openMeteoBaseURL = URL(string: "https://api.open-meteo.com")!
        /// The defaults.
        public init() {}
    }

    /// The `providers.google_calendar` section.
    public struct GoogleCalendarSection: Sendable, Equatable {
        /// `providers.google_calendar.base_url`.
        public var baseURL = URL(string: "https://www.googleapis.com")!
        /// `providers.google_calendar.token_url`: the OAuth token endpoint.
        public var tokenURL = URL(string: "https://oauth2.googleapis.com/token")!
        /// `providers.google_calendar.calendar_id`.
        public var calendarID = "primary"
        /// `providers.google_calendar.client_id` (not a secret).
        public var clientID: String?
        /// The Soundtrack user whose calendar the Google tokens open: Google Calendar fills only that
        /// user's snapshots (without it, Google Calendar is not used).
        public var user: String?
        /// The defaults.
        public init() {}
    }

    /// The `providers.spotify` section.
    public struct SpotifySection: Sendable, Equatable {
        /// `providers.spotify.api_base_url`.
        public var apiBaseURL = URL(string: "https://api.spotify.com")!
        /// `providers.spotify.accounts_base_url` (the token endpoint is `/api/token` under it).
        public var accountsBaseURL = URL(string: "https://accounts.spotify.com")!
        /// `providers.spotify.client_id` (not a secret).
        public var clientID: String?
        /// The defaults.
        public init() {}
    }

    /// The `calendar` section.
    public struct CalendarSection: Sendable, Equatable {
        /// The zone of floating times and all-day dates in ICS files (an Olson name), UTC by default.
        public var timeZone: String?
        /// How far ahead of a snapshot's time events are put into its calendar section, in hours.
        public var lookaheadHours: Double = 12
        /// How many days of recurring events an ICS import expands, from the import's time.
        public var importDays: Int = 90
        /// The defaults.
        public init() {}
    }

    /// Secrets: only from environment variables, never from the file.
    public struct Secrets: Sendable, Equatable {
        /// `SOUNDTRACK_OPENWEATHER_KEY`.
        public var openWeatherKey: String?
        /// `SOUNDTRACK_GOOGLE_ACCESS_TOKEN`.
        public var googleAccessToken: String?
        /// `SOUNDTRACK_GOOGLE_REFRESH_TOKEN`.
        public var googleRefreshToken: String?
        /// `SOUNDTRACK_GOOGLE_CLIENT_SECRET`.
        public var googleClientSecret: String?
        /// `SOUNDTRACK_SPOTIFY_CLIENT_SECRET`.
        public var spotifyClientSecret: String?
        /// `SOUNDTRACK_SPOTIFY_REFRESH_TOKEN`.
        public var spotifyRefreshToken: String?
        /// `SOUNDTRACK_SPOTIFY_ACCESS_TOKEN`.
        public var spotifyAccessToken: String?
        /// The defaults.
        public init() {}

        /// The environment variables read, and the property each fills.
        public static let variables: [(name: String, keyPath: WritableKeyPath<Secrets, String?> & Sendable)] = [
            ("SOUNDTRACK_OPENWEATHER_KEY", \.openWeatherKey),
            ("SOUNDTRACK_GOOGLE_ACCESS_TOKEN", \.googleAccessToken),
            ("SOUNDTRACK_GOOGLE_REFRESH_TOKEN", \.googleRefreshToken),
            ("SOUNDTRACK_GOOGLE_CLIENT_SECRET", \.googleClientSecret),
            ("SOUNDTRACK_SPOTIFY_CLIENT_SECRET", \.spotifyClientSecret),
            ("SOUNDTRACK_SPOTIFY_REFRESH_TOKEN", \.spotifyRefreshToken),
            ("SOUNDTRACK_SPOTIFY_ACCESS_TOKEN", \.spotifyAccessToken)
        ]

        /// Reads the secrets from an environment (empty values count as unset).
        public init(environment: [String: String]) {
            for (name, kp) in Self.variables {
                if let v = environment[name], !v.isEmpty { self[keyPath: kp] = v }
            }
        }

        /// Every secret value that is set (for checks that none was logged).
        public var values: [String] { Self.variables.compactMap { self[keyPath: $0.keyPath] } }
    }

    /// Parses a configuration file and reads the secrets from `environment`.
    /// - Throws: ``InputError`` naming the key path and what was expected there.
    public static func parse(_ data: Data, environment: [String: String]) throws(InputError) -> SoundtrackConfiguration {
        let json = try JSONParser.parse(data)
        var c = try SoundtrackConfiguration(json: json)
        c.secrets = Secrets(environment: environment)
        return c
    }

    /// The configuration of a parsed file (secrets unset).
    public init(json: JSONValue) throws(InputError) {
        let root = try JSONObjectReader(json, path: "")
        try root.rejectUnknown(["version", "database", "models_dir", "server", "http", "providers", "calendar"])
        if let v = try root.number("version", .atLeast(0)) {
            guard v == 1 else { throw InputError(path: "version", expected: "1", got: JSONValue.numberText(v)) }
        }
        if let db = try root.object("database") {
            try db.rejectUnknown(["path", "email_key_file"])
            databasePath = try db.string("path", nonEmpty: true)
            emailKeyFile = try db.string("email_key_file", nonEmpty: true)
        }
        modelsDir = try root.string("models_dir", nonEmpty: true)
        if let s = try root.object("server") {
            try s.rejectUnknown([
                "host", "port", "max_body_bytes", "max_batch_events", "rate", "burst", "idle_timeout_s", "body_timeout_s",
                "shutdown_delay_s", "drain_timeout_s"
            ])
            server.host = try s.string("host", nonEmpty: true)
            server.port = try s.optionalInteger("port", in: 0...65535)
            server.maxBodyBytes = try s.optionalInteger("max_body_bytes", in: 1024...(1 << 30))
            server.maxBatchEvents = try s.optionalInteger("max_batch_events", in: 1...100_000)
            server.rate = try s.number("rate", .above(0))
            server.burst = try s.number("burst", .above(0))
            server.idleTimeout = try s.number("idle_timeout_s", .closed(0.001, 86_400))
            server.bodyTimeout = try s.number("body_timeout_s", .closed(0.001, 86_400))
            server.shutdownDelay = try s.number("shutdown_delay_s", .closed(0, 86_400))
            server.drainTimeout = try s.number("drain_timeout_s", .closed(0.001, 86_400))
        }
        if let h = try root.object("http") {
            try h.rejectUnknown(["timeout_s", "max_attempts", "backoff_s", "max_backoff_s", "max_retry_after_s"])
            http = RetryPolicy(
                maxAttempts: try h.optionalInteger("max_attempts", in: 1...10) ?? http.maxAttempts,
                baseDelay: try h.number("backoff_s", .atLeast(0)) ?? http.baseDelay,
                maxDelay: try h.number("max_backoff_s", .atLeast(0)) ?? http.maxDelay,
                timeout: try h.number("timeout_s", .above(0)) ?? http.timeout,
                maxRetryAfter: try h.number("max_retry_after_s", .atLeast(0)) ?? http.maxRetryAfter)
        }
        if let p = try root.object("providers") {
            try p.rejectUnknown(["weather", "google_calendar", "spotify"])
            if let w = try p.object("weather") {
                try w.rejectUnknown(["order", "cache_ttl_s", "cell_deg", "openweather", "open_meteo"])
                if let order = try w.strings("order") {
                    for (i, name) in order.enumerated() where !["openweather", "open-meteo"].contains(name) {
                        throw InputError(path: "providers.weather.order[\(i)]", expected: "openweather or open-meteo", got: JSONValue.string(name).serialized())
                    }
                    weather.order = order
                }
                weather.cacheTTL = try w.number("cache_ttl_s", .atLeast(0)) ?? weather.cacheTTL
                weather.cellDegrees = try w.number("cell_deg", .above(0)) ?? weather.cellDegrees
                if let o = try w.object("openweather") {
                    try o.rejectSecrets(["api_key": "SOUNDTRACK_OPENWEATHER_KEY", "appid": "SOUNDTRACK_OPENWEATHER_KEY"])
                    try o.rejectUnknown(["base_url"])
                    weather.openWeatherBaseURL = try o.url("base_url") ?? weather.openWeatherBaseURL
                }
                if let o = try w.object("open_meteo") {
                    try o.rejectUnknown(["base_url"])
                    weather.openMeteoBaseURL = try o.url("base_url") ?? weather.openMeteoBaseURL
                }
            }
            if let g = try p.object("google_calendar") {
                try g.rejectSecrets([
                    "client_secret": "SOUNDTRACK_GOOGLE_CLIENT_SECRET", "refresh_token": "SOUNDTRACK_GOOGLE_REFRESH_TOKEN",
                    "access_token": "SOUNDTRACK_GOOGLE_ACCESS_TOKEN"
                ])
                try g.rejectUnknown(["base_url", "token_url", "calendar_id", "client_id", "user"])
                googleCalendar.baseURL = try g.url("base_url") ?? googleCalendar.baseURL
                googleCalendar.tokenURL = try g.url("token_url") ?? googleCalendar.tokenURL
                googleCalendar.calendarID = try g.string("calendar_id", nonEmpty: true) ?? googleCalendar.calendarID
                googleCalendar.clientID = try g.string("client_id", nonEmpty: true)
                googleCalendar.user = try g.string("user", nonEmpty: true)
            }
            if let s = try p.object("spotify") {
                try s.rejectSecrets([
                    "client_secret": "SOUNDTRACK_SPOTIFY_CLIENT_SECRET", "refresh_token": "SOUNDTRACK_SPOTIFY_REFRESH_TOKEN",
                    "access_token": "SOUNDTRACK_SPOTIFY_ACCESS_TOKEN"
                ])
                try s.rejectUnknown(["api_base_url", "accounts_base_url", "client_id"])
                spotify.apiBaseURL = try s.url("api_base_url") ?? spotify.apiBaseURL
                spotify.accountsBaseURL = try s.url("accounts_base_url") ?? spotify.accountsBaseURL
                spotify.clientID = try s.string("client_id", nonEmpty: true)
            }
        }
        if let c = try root.object("calendar") {
            try c.rejectUnknown(["time_zone", "lookahead_h", "import_days"])
            if let tz = try c.string("time_zone", nonEmpty: true) {
                guard TimeZone(identifier: tz) != nil else {
                    throw InputError(path: "calendar.time_zone", expected: "an Olson time-zone name such as Europe/Berlin", got: JSONValue.string(tz).serialized())
                }
                calendar.timeZone = tz
            }
            calendar.lookaheadHours = try c.number("lookahead_h", .above(0)) ?? calendar.lookaheadHours
            calendar.importDays = try c.optionalInteger("import_days", in: 1...3660) ?? calendar.importDays
        }
    }

    /// The effective configuration as JSON, secrets shown only as `"set (redacted)"` or `null`.
    public func redactedJSON() -> JSONValue {
        func opt(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
        func num(_ x: Double?) -> JSONValue { x.map(JSONValue.number) ?? .null }
        func secret(_ s: String?) -> JSONValue { s == nil ? .null : .string("set (redacted)") }
        return .object([
            ("version", .number(1)),
            ("database", .object([("path", opt(databasePath)), ("email_key_file", opt(emailKeyFile))])),
            ("models_dir", opt(modelsDir)),
            (
                "server",
                .object([
                    ("host", opt(server.host)), ("port", num(server.port.map(Double.init))),
                    ("max_body_bytes", num(server.maxBodyBytes.map(Double.init))), ("max_batch_events", num(server.maxBatchEvents.map(Double.init))),
                    ("rate", num(server.rate)), ("burst", num(server.burst)),
                    ("idle_timeout_s", num(server.idleTimeout)), ("body_timeout_s", num(server.bodyTimeout)),
                    ("shutdown_delay_s", num(server.shutdownDelay)), ("drain_timeout_s", num(server.drainTimeout))
                ])
            ),
            (
                "http",
                .object([
                    ("timeout_s", .number(http.timeout)), ("max_attempts", .number(Double(http.maxAttempts))),
                    ("backoff_s", .number(http.baseDelay)), ("max_backoff_s", .number(http.maxDelay)),
                    ("max_retry_after_s", .number(http.maxRetryAfter))
                ])
            ),
            (
                "providers",
                .object([
                    (
                        "weather",
                        .object([
                            ("order", .array(weather.order.map(JSONValue.string))), ("cache_ttl_s", .number(weather.cacheTTL)),
                            ("cell_deg", .number(weather.cellDegrees)),
                            ("openweather", .object([("base_url", .string(Redaction.url(weather.openWeatherBaseURL))), ("api_key", secret(secrets.openWeatherKey))])),
                            ("open_meteo", .object([("base_url", .string(Redaction.url(weather.openMeteoBaseURL)))]))
                        ])
                    ),
                    (
                        "google_calendar",
                        .object([
                            ("base_url", .string(Redaction.url(googleCalendar.baseURL))), ("token_url", .string(Redaction.url(googleCalendar.tokenURL))),
                            ("calendar_id", .string(googleCalendar.calendarID)), ("client_id", opt(googleCalendar.clientID)),
                            ("user", opt(googleCalendar.user)),
                            ("client_secret", secret(secrets.googleClientSecret)), ("access_token", secret(secrets.googleAccessToken)),
                            ("refresh_token", secret(secrets.googleRefreshToken))
                        ])
                    ),
                    (
                        "spotify",
                        .object([
                            ("api_base_url", .string(Redaction.url(spotify.apiBaseURL))), ("accounts_base_url", .string(Redaction.url(spotify.accountsBaseURL))),
                            ("client_id", opt(spotify.clientID)), ("client_secret", secret(secrets.spotifyClientSecret)),
                            ("access_token", secret(secrets.spotifyAccessToken)), ("refresh_token", secret(secrets.spotifyRefreshToken))
                        ])
                    )
                ])
            ),
            (
                "calendar",
                .object([
                    ("time_zone", opt(calendar.timeZone)), ("lookahead_h", .number(calendar.lookaheadHours)),
                    ("import_days", .number(Double(calendar.importDays)))
                ])
            )
        ])
    }
}
