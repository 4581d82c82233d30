import Foundation
import SoundtrackContext
import SoundtrackTestSupport
import Testing

@testable import SoundtrackProviders

@Suite struct WeatherTests {
    static let key = "ow-test-key-3f9a7c"

    @Test func openWeatherSuccessFillsEveryField() async throws {
        try await withStub { stub in
            stub.enqueue("GET", "/data/2.5/weather", .fixture("openweather-current.json"))
            let time = TestTime()
            let client = OpenWeatherClient(baseURL: stub.baseURL, apiKey: Self.key, client: testClient(time))
            let w = try await client.current(lat: 42.0267, lon: -93.6465)
            #expect(w.tempC == 3.5)
            #expect(w.windMps == 5.2)
            #expect(w.cloudPct == 80)
            #expect(w.humidityPct == 91)
            #expect(w.precipMmH == 0.6)
            #expect(w.condition == .rain)
            #expect(w.sunrise?.rfc3339 == "2026-03-14T06:58:00-05:00")
            #expect(w.sunset?.rfc3339 == "2026-03-14T18:49:00-05:00")
            let r = try #require(stub.requests.first)
            #expect(r.query["appid"] == Self.key)
            #expect(r.query["units"] == "metric")
            #expect(r.query["lat"] == "42.0267" && r.query["lon"] == "-93.6465")
            #expect(time.sleeps.isEmpty)
        }
    }

    @Test func snowCountsAsPrecipitationAndUnknownGroupsAreOther() throws {
        let w = try OpenWeatherClient.weather(from: try JSONParser.parse(Fixtures.data("openweather-snow.json")))
        #expect(w.precipMmH == 1.2 && w.condition == .snow && w.tempC == -2)
        #expect(w.sunrise?.offsetSeconds == 3600)
        let smoke = try OpenWeatherClient.weather(from: try JSONParser.parse(#"{"main":{"temp":20},"weather":[{"main":"Smoke"}]}"#))
        #expect(smoke.condition == .other && smoke.precipMmH == 0 && smoke.sunrise == nil)
    }

    @Test func serverErrorIsRetriedWithBackoffThenSucceeds() async throws {
        try await withStub { stub in
            stub.enqueue("GET", "/data/2.5/weather", .status(500, body: "oops"), .status(503), .fixture("openweather-current.json"))
            let time = TestTime()
            let client = OpenWeatherClient(baseURL: stub.baseURL, apiKey: Self.key, client: testClient(time))
            let w = try await client.current(lat: 42, lon: -93)
            #expect(w.tempC == 3.5)
            #expect(stub.requests.count == 3)
            #expect(time.sleeps == [0.5, 1.0])
        }
    }

    @Test func serverErrorsPastTheLastAttemptFail() async throws {
        try await withStub { stub in
            stub.enqueue("GET", "/data/2.5/weather", .status(502))
            let time = TestTime()
            let client = OpenWeatherClient(baseURL: stub.baseURL, apiKey: Self.key, client: testClient(time, attempts: 2))
            await #expect(throws: ProviderError.self) { try await client.current(lat: 42, lon: -93) }
            do {
                _ = try await client.current(lat: 42, lon: -93)
            } catch {
                guard case .http(502, _)? = error as? ProviderError else { Issue.record("expected HTTP 502, got \(error)"); return }
            }
        }
    }

    @Test func tooManyRequestsHonoursRetryAfter() async throws {
        try await withStub { stub in
            stub.enqueue("GET", "/data/2.5/weather", .status(429, headers: [("Retry-After", "7")]), .fixture("openweather-current.json"))
            let time = TestTime()
            let client = OpenWeatherClient(baseURL: stub.baseURL, apiKey: Self.key, client: testClient(time))
            let w = try await client.current(lat: 42, lon: -93)
            #expect(w.condition == .rain)
            #expect(time.sleeps == [7])
            #expect(stub.requests.count == 2)
        }
    }

    @Test func retryAfterAsAnHTTPDateIsMeasuredFromTheClock() async throws {
        try await withStub { stub in
            let time = TestTime()
            let f = DateFormatter()
            f.locale = Locale(identifier: "en_US_POSIX")
            f.timeZone = TimeZone(identifier: "GMT")
            f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let date = f.string(from: time.now().addingTimeInterval(12))
            stub.enqueue("GET", "/data/2.5/weather", .status(429, headers: [("Retry-After", date)]), .fixture("openweather-current.json"))
            let client = OpenWeatherClient(baseURL: stub.baseURL, apiKey: Self.key, client: testClient(time))
            _ = try await client.current(lat: 42, lon: -93)
            #expect(time.sleeps == [12])
        }
    }

    @Test func timeoutFailsFastAsTimeout() async throws {
        try await withStub { stub in
            var slow = StubServer.Canned.fixture("openweather-current.json")
            slow.delay = 10
            stub.enqueue("GET", "/data/2.5/weather", slow)
            let time = TestTime()
            let client = OpenWeatherClient(baseURL: stub.baseURL, apiKey: Self.key, client: testClient(time, timeout: 0.3, attempts: 2))
            // Timed on a thread of its own: on the cooperative pool, tests blocked beside this one
            // could hold up the client's steps for seconds.
            let (outcome, took) = await withTaskExecutorPreference(ThreadExecutor.shared) {
                let started = Date()
                let outcome: Result<Void, any Error>
                do {
                    _ = try await client.current(lat: 42, lon: -93)
                    outcome = .success(())
                } catch {
                    outcome = .failure(error)
                }
                return (outcome, Date().timeIntervalSince(started))
            }
            switch outcome {
            case .success: Issue.record("expected a timeout")
            case .failure(let error):
                guard case .timeout? = error as? ProviderError else { Issue.record("expected .timeout, got \(error)"); return }
            }
            #expect(took < 9)  // gave up before the server's 10 s answer (two 0.3 s attempts)
            #expect(time.sleeps == [0.5])  // one retry after the first timeout
        }
    }

    @Test func malformedJSONIsReportedWithoutRetry() async throws {
        try await withStub { stub in
            stub.enqueue("GET", "/data/2.5/weather", .fixture("malformed.json"))
            let time = TestTime()
            let client = OpenWeatherClient(baseURL: stub.baseURL, apiKey: Self.key, client: testClient(time))
            do {
                _ = try await client.current(lat: 42, lon: -93)
                Issue.record("expected malformed")
            } catch {
                guard case .malformed? = error as? ProviderError else { Issue.record("expected .malformed, got \(error)"); return }
            }
            #expect(stub.requests.count == 1)
        }
    }

    @Test func unauthorizedKeyIsNotRetried() async throws {
        try await withStub { stub in
            stub.enqueue("GET", "/data/2.5/weather", .status(401, body: #"{"cod":401,"message":"Invalid API key."}"#))
            let client = OpenWeatherClient(baseURL: stub.baseURL, apiKey: Self.key, client: testClient(TestTime()))
            do {
                _ = try await client.current(lat: 42, lon: -93)
                Issue.record("expected unauthorized")
            } catch {
                guard case .unauthorized? = error as? ProviderError else { Issue.record("expected .unauthorized, got \(error)"); return }
            }
            #expect(stub.requests.count == 1)
        }
    }

    @Test func openMeteoMapsCurrentWeatherAndWMOCodes() async throws {
        try await withStub { stub in
            stub.enqueue("GET", "/v1/forecast", .fixture("openmeteo-forecast.json"))
            let client = OpenMeteoClient(baseURL: stub.baseURL, client: testClient(TestTime()))
            let w = try await client.current(lat: 42.03, lon: -93.65)
            #expect(w.tempC == 4.1 && w.humidityPct == 88 && w.precipMmH == 0.4 && w.cloudPct == 75 && w.windMps == 4.8)
            #expect(w.condition == .rain)
            #expect(w.sunrise?.rfc3339 == "2026-03-14T06:58:00-05:00")
            let r = try #require(stub.requests.first)
            #expect(r.query["latitude"] == "42.03" && r.query["wind_speed_unit"] == "ms" && r.query["timeformat"] == "unixtime")
            #expect(r.query["current"]?.contains("weather_code") == true)
        }
        #expect(WeatherMapping.condition(wmoCode: 0) == .clear)
        #expect(WeatherMapping.condition(wmoCode: 3) == .clouds)
        #expect(WeatherMapping.condition(wmoCode: 45) == .fog)
        #expect(WeatherMapping.condition(wmoCode: 55) == .drizzle)
        #expect(WeatherMapping.condition(wmoCode: 81) == .rain)
        #expect(WeatherMapping.condition(wmoCode: 86) == .snow)
        #expect(WeatherMapping.condition(wmoCode: 96) == .thunderstorm)
    }

    @Test func cacheServesTheSameCellForTenMinutes() async throws {
        try await withStub { stub in
            stub.enqueue("GET", "/data/2.5/weather", .fixture("openweather-current.json"))
            let time = TestTime()
            let ow = OpenWeatherClient(baseURL: stub.baseURL, apiKey: Self.key, client: testClient(time))
            let service = WeatherService(providers: [ow], now: time.now)
            let a = await service.current(lat: 42.0267, lon: -93.6465)
            #expect(a.report == [EnrichmentEntry(section: "weather", source: "openweather", status: .filled)])
            time.advance(300)
            let b = await service.current(lat: 42.0499, lon: -93.6001)  // same 0.1° cell
            #expect(b.weather == a.weather)
            #expect(b.report == [EnrichmentEntry(section: "weather", source: "openweather", status: .cached)])
            #expect(stub.requests.count == 1)
            _ = await service.current(lat: 42.1267, lon: -93.6465)  // the next cell north
            #expect(stub.requests.count == 2)
            time.advance(301)  // 601 s after the first answer
            _ = await service.current(lat: 42.0267, lon: -93.6465)
            #expect(stub.requests.count == 3)
        }
    }

    @Test func fallbackChainReportsTheFailureAndTheSourceThatFilled() async throws {
        try await withStub { stub in
            stub.enqueue("GET", "/data/2.5/weather", .status(429, headers: [("Retry-After", "3600")]))
            stub.enqueue("GET", "/v1/forecast", .fixture("openmeteo-forecast.json"))
            let time = TestTime()
            let client = testClient(time)
            let service = WeatherService(
                providers: [OpenWeatherClient(baseURL: stub.baseURL, apiKey: Self.key, client: client), OpenMeteoClient(baseURL: stub.baseURL, client: client)],
                now: time.now)
            let out = await service.current(lat: 42, lon: -93)
            #expect(out.weather?.tempC == 4.1)
            #expect(
                out.report == [
                    EnrichmentEntry(section: "weather", source: "openweather", status: .failed, reason: "rate_limited"),
                    EnrichmentEntry(section: "weather", source: "open-meteo", status: .filled)
                ])
            #expect(time.sleeps.isEmpty)  // a Retry-After of an hour is not waited for
        }
    }

    @Test func everySourceFailingLeavesWeatherMissingWithoutThrowing() async throws {
        try await withStub { stub in
            stub.enqueue("GET", "/data/2.5/weather", .fixture("malformed.json"))
            stub.enqueue("GET", "/v1/forecast", .status(500))
            let time = TestTime()
            let client = testClient(time, attempts: 2)
            let service = WeatherService(
                providers: [OpenWeatherClient(baseURL: stub.baseURL, apiKey: Self.key, client: client), OpenMeteoClient(baseURL: stub.baseURL, client: client)],
                now: time.now)
            let out = await service.current(lat: 42, lon: -93)
            #expect(out.weather == nil)
            #expect(out.report.map(\.reason) == ["malformed", "http_error"])
        }
    }

    @Test func secretsAndCoordinatesNeverAppearInLogs() async throws {
        try await withStub { stub in
            stub.enqueue("GET", "/data/2.5/weather", .status(500), .status(429, headers: [("Retry-After", "1")]), .fixture("openweather-current.json"))
            stub.enqueue("GET", "/v1/forecast", .status(500), .status(503))
            let (logger, capture) = capturingLogger()
            let time = TestTime()
            let client = OpenWeatherClient(baseURL: stub.baseURL, apiKey: Self.key, client: testClient(time, logger: logger))
            _ = try await client.current(lat: 48.1391, lon: 13.3932)
            _ = try? await OpenMeteoClient(baseURL: stub.baseURL, client: testClient(time, logger: logger)).current(lat: 48.1391, lon: 13.3932)
            let lines = capture.all
            #expect(lines.count >= 7)
            #expect(lines.contains { $0.contains("appid=REDACTED") && $0.contains("lat=REDACTED") })
            #expect(lines.contains { $0.contains("latitude=REDACTED") })
            #expect(!lines.contains { $0.contains(Self.key) })
            #expect(!lines.contains { $0.contains("48.13") || $0.contains("13.39") }, "\(lines)")
        }
    }
}
