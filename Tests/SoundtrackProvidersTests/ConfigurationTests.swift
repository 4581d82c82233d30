import Foundation
import SoundtrackContext
import Testing

@testable import SoundtrackProviders

@Suite struct ConfigurationTests {
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func error(_ json: String) -> InputError? {
        do {
            _ = try SoundtrackConfiguration.parse(Data(json.utf8), environment: [:])
            return nil
        } catch {
            return error
        }
    }

    @Test func theCommittedExampleIsValid() throws {
        let data = try Data(contentsOf: Self.repoRoot.appendingPathComponent("soundtrack.example.json"))
        let c = try SoundtrackConfiguration.parse(data, environment: ["SOUNDTRACK_OPENWEATHER_KEY": "k"])
        #expect(c.server.port == 8080)
        #expect(c.weather.order == ["openweather", "open-meteo"])
        #expect(c.secrets.openWeatherKey == "k")
        #expect(c.calendar.timeZone == "Europe/Berlin")
    }

    @Test func readsEverySectionAndDefaultsTheRest() throws {
        let c = try SoundtrackConfiguration.parse(
            Data(
                """
                {"database":{"path":"/var/lib/soundtrack.sqlite","email_key_file":"/etc/soundtrack/email.key"},"server":{"port":9090,"rate":5},
                 "http":{"timeout_s":2,"max_attempts":4},
                 "providers":{"weather":{"order":["open-meteo"],"open_meteo":{"base_url":"http://127.0.0.1:9999"}},
                              "spotify":{"client_id":"abc"}}}
                """.utf8), environment: ["SOUNDTRACK_SPOTIFY_CLIENT_SECRET": "s3cret", "SOUNDTRACK_OPENWEATHER_KEY": ""])
        #expect(c.databasePath == "/var/lib/soundtrack.sqlite")
        #expect(c.emailKeyFile == "/etc/soundtrack/email.key")
        #expect(c.redactedJSON()["database"]?["email_key_file"] == .string("/etc/soundtrack/email.key"))
        #expect(c.server.port == 9090 && c.server.rate == 5 && c.server.host == nil)
        #expect(c.http.timeout == 2 && c.http.maxAttempts == 4 && c.http.baseDelay == 0.5)
        #expect(c.weather.order == ["open-meteo"])
        #expect(c.weather.openMeteoBaseURL.absoluteString == "http://127.0.0.1:9999")
        #expect(c.weather.openWeatherBaseURL.absoluteString == "https://api.openweathermap.org")
        #expect(c.spotify.clientID == "abc" && c.secrets.spotifyClientSecret == "s3cret")
        #expect(c.secrets.openWeatherKey == nil)  // empty counts as unset
    }

    @Test func errorsNameTheKeyPathAndWhatWasExpected() {
        #expect(Self.error(#"{"server":{"port":70000}}"#)?.description == "server.port: expected an integer in 0...65535, got 70000")
        #expect(
            Self.error(#"{"server":{"prot":80}}"#)?.description
                == "server.prot: expected one of the fields host, port, max_body_bytes, max_batch_events, rate, burst, idle_timeout_s, body_timeout_s, shutdown_delay_s, drain_timeout_s, got \"prot\""
        )
        #expect(Self.error(#"{"http":{"timeout_s":"ten"}}"#)?.description == "http.timeout_s: expected a number > 0, got a string")
        #expect(
            Self.error(#"{"providers":{"weather":{"order":["openweather","darksky"]}}}"#)?.description
                == "providers.weather.order[1]: expected openweather or open-meteo, got \"darksky\"")
        #expect(Self.error(#"{"providers":{"spotify":{"api_base_url":"ftp://x"}}}"#)?.path == "providers.spotify.api_base_url")
        #expect(Self.error(#"{"calendar":{"time_zone":"Mars/Olympus"}}"#)?.path == "calendar.time_zone")
        #expect(Self.error(#"{"version":2}"#)?.path == "version")
        #expect(Self.error(#"[]"#)?.description == "input: expected an object, got an array")
        #expect(Self.error(#"{"server": }"#) != nil)
    }

    @Test("A base URL with a query (where a key could hide) is refused without printing the query")
    func urlQueriesAreNotEchoed() {
        let e = Self.error(#"{"providers":{"weather":{"openweather":{"base_url":"https://api.example/data?appid=SECRET-123"}}}}"#)
        #expect(e?.path == "providers.weather.openweather.base_url")
        #expect(e?.description.contains("SECRET-123") == false)
        #expect(e?.got == #""https://api.example/data" with a query (not shown)"#)
    }

    @Test func secretsInTheFileAreRejectedWithoutEchoingThem() {
        let e = Self.error(#"{"providers":{"weather":{"openweather":{"api_key":"leaked-key-123"}}}}"#)
        #expect(e?.path == "providers.weather.openweather.api_key")
        #expect(e?.expected.contains("SOUNDTRACK_OPENWEATHER_KEY") == true)
        #expect(e?.description.contains("leaked-key-123") == false)
        #expect(Self.error(#"{"providers":{"spotify":{"client_secret":"x"}}}"#)?.expected.contains("SOUNDTRACK_SPOTIFY_CLIENT_SECRET") == true)
    }

    @Test func effectiveConfigurationRedactsSecrets() throws {
        var env: [String: String] = [:]
        for (i, v) in SoundtrackConfiguration.Secrets.variables.enumerated() { env[v.name] = "secret-value-\(i)-xyz" }
        let c = try SoundtrackConfiguration.parse(Data("{}".utf8), environment: env)
        #expect(c.secrets.values.count == SoundtrackConfiguration.Secrets.variables.count)
        let text = c.redactedJSON().serialized()
        #expect(!text.contains("secret-value-"))
        #expect(text.contains("\"api_key\":\"set (redacted)\""))
        // The printed configuration reads back as a valid file once the secrets are removed.
        #expect(text.contains("\"timeout_s\":10"))
    }

    @Test func redactionHidesKeysInURLsAndHeaders() {
        let u = URL(string: "https://api.example.org/data?lat=1&appid=abc123&units=metric&access_token=tok")!
        #expect(Redaction.url(u) == "https://api.example.org/data?lat=REDACTED&appid=REDACTED&units=metric&access_token=REDACTED")
        let meteo = URL(string: "https://api.example.org/v1/forecast?latitude=48.1391&longitude=13.3932&current=temperature_2m")!
        #expect(Redaction.url(meteo) == "https://api.example.org/v1/forecast?latitude=REDACTED&longitude=REDACTED&current=temperature_2m")
        #expect(Redaction.headers(["Authorization": "Bearer abc", "Accept": "application/json"]) == ["Authorization": "Bearer REDACTED", "Accept": "application/json"])
    }
}
