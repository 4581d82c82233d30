import Foundation
import SoundtrackContext

/// A source of current weather by coordinates.
public protocol WeatherProvider: Sendable {
    /// A short name for reports (`openweather`, `open-meteo`).
    var name: String { get }
    /// The current weather at a point, as the snapshot's `weather` section.
    func current(lat: Double, lon: Double) async throws(ProviderError) -> Weather
}

/// OpenWeather's current weather: `GET /data/2.5/weather?lat=…&lon=…&appid=…&units=metric`.
///
/// Maps `main.temp` → `temp_c`, `wind.speed` → `wind_mps`, `clouds.all` → `cloud_pct`,
/// `main.humidity` → `humidity_pct`, `rain.1h` + `snow.1h` → `precip_mm_h` (0 when neither is given),
/// `weather[0].main` lower-cased → `condition` (unknown groups → `other`), `sys.sunrise`/`sys.sunset`
/// (Unix seconds) in the response's `timezone` offset.
public struct OpenWeatherClient: WeatherProvider {
    public let name = "openweather"
    /// The API's base URL (`https://api.openweathermap.org`).
    public var baseURL: URL
    /// The API key (sent as `appid`, never logged).
    public var apiKey: String
    /// The HTTP client.
    public var client: ProviderHTTPClient

    /// Creates a client.
    public init(baseURL: URL, apiKey: String, client: ProviderHTTPClient) {
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.client = client
    }

    public func current(lat: Double, lon: Double) async throws(ProviderError) -> Weather {
        let url = HTTPRequest.url(
            base: baseURL, path: "/data/2.5/weather",
            query: [
                ("lat", JSONValue.numberText(lat)), ("lon", JSONValue.numberText(lon)), ("appid", apiKey), ("units", "metric")
            ])
        let json = try await client.json(HTTPRequest(url: url, headers: ["Accept": "application/json"]))
        return try Self.weather(from: json)
    }

    /// The snapshot's weather section from an OpenWeather current-weather document.
    public static func weather(from json: JSONValue) throws(ProviderError) -> Weather {
        guard case .object = json else { throw .malformed(InputError(path: "", expected: "an object", got: json.typeDescription)) }
        guard let temp = json["main"]?["temp"]?.doubleValue else {
            throw .malformed(InputError(path: "main.temp", expected: "a number", got: json["main"]?["temp"]?.typeDescription ?? "nothing"))
        }
        var w = Weather()
        w.tempC = WeatherMapping.clamp(temp, -90, 60)
        w.windMps = json["wind"]?["speed"]?.doubleValue.flatMap { WeatherMapping.clamp($0, 0, 120) }
        w.cloudPct = json["clouds"]?["all"]?.doubleValue.flatMap { WeatherMapping.clamp($0, 0, 100) }
        w.humidityPct = json["main"]?["humidity"]?.doubleValue.flatMap { WeatherMapping.clamp($0, 0, 100) }
        let rain = json["rain"]?["1h"]?.doubleValue ?? 0
        let snow = json["snow"]?["1h"]?.doubleValue ?? 0
        w.precipMmH = WeatherMapping.clamp(rain + snow, 0, 500)
        if case let .array(items)? = json["weather"], case let .string(main)? = items.first?["main"] {
            w.condition = WeatherMapping.condition(openWeatherMain: main)
        }
        let offset = json["timezone"]?.doubleValue.map { Int($0) } ?? 0
        if let rise = json["sys"]?["sunrise"]?.doubleValue, let set = json["sys"]?["sunset"]?.doubleValue, set > rise {
            w.sunrise = Timestamp(date: Date(timeIntervalSince1970: rise), offsetSeconds: offset)
            w.sunset = Timestamp(date: Date(timeIntervalSince1970: set), offsetSeconds: offset)
        }
        return w
    }
}

/// Open-Meteo's forecast API, the fallback weather source (no key):
/// `GET /v1/forecast?latitude=…&longitude=…&current=temperature_2m,relative_humidity_2m,precipitation,cloud_cover,wind_speed_10m,weather_code&daily=sunrise,sunset&timezone=auto&timeformat=unixtime&wind_speed_unit=ms&forecast_days=1`.
///
/// WMO weather codes map to conditions: 0 clear; 1–3 clouds; 45, 48 fog; 51–57 drizzle; 61–67 and 80–82
/// rain; 71–77, 85, 86 snow; 95–99 thunderstorm; others `other`.
public struct OpenMeteoClient: WeatherProvider {
    public let name = "open-meteo"
    /// The API's base URL (`https://api.open-meteo.com`).
    public var baseURL: URL
    /// The HTTP client.
    public var client: ProviderHTTPClient

    /// Creates a client.
    public init(baseURL: URL, client: ProviderHTTPClient) {
        self.baseURL = baseURL
        self.client = client
    }

    public func current(lat: Double, lon: Double) async throws(ProviderError) -> Weather {
        let url = HTTPRequest.url(
            base: baseURL, path: "/v1/forecast",
            query: [
                ("latitude", JSONValue.numberText(lat)), ("longitude", JSONValue.numberText(lon)),
                ("current", "temperature_2m,relative_humidity_2m,precipitation,cloud_cover,wind_speed_10m,weather_code"),
                ("daily", "sunrise,sunset"), ("timezone", "auto"), ("timeformat", "unixtime"), ("wind_speed_unit", "ms"),
                ("forecast_days", "1")
            ])
        let json = try await client.json(HTTPRequest(url: url, headers: ["Accept": "application/json"]))
        return try Self.weather(from: json)
    }

    /// The snapshot's weather section from an Open-Meteo forecast document (its `current` block).
    public static func weather(from json: JSONValue) throws(ProviderError) -> Weather {
        guard let current = json["current"], case .object = current else {
            throw .malformed(InputError(path: "current", expected: "an object", got: json["current"]?.typeDescription ?? "nothing"))
        }
        guard let temp = current["temperature_2m"]?.doubleValue else {
            throw .malformed(InputError(path: "current.temperature_2m", expected: "a number", got: current["temperature_2m"]?.typeDescription ?? "nothing"))
        }
        var w = Weather()
        w.tempC = WeatherMapping.clamp(temp, -90, 60)
        w.humidityPct = current["relative_humidity_2m"]?.doubleValue.flatMap { WeatherMapping.clamp($0, 0, 100) }
        w.precipMmH = current["precipitation"]?.doubleValue.flatMap { WeatherMapping.clamp($0, 0, 500) }
        w.cloudPct = current["cloud_cover"]?.doubleValue.flatMap { WeatherMapping.clamp($0, 0, 100) }
        w.windMps = current["wind_speed_10m"]?.doubleValue.flatMap { WeatherMapping.clamp($0, 0, 120) }
        w.condition = current["weather_code"]?.doubleValue.map { WeatherMapping.condition(wmoCode: Int($0)) }
        let offset = json["utc_offset_seconds"]?.doubleValue.map { Int($0) } ?? 0
        if case let .array(rises)? = json["daily"]?["sunrise"], case let .array(sets)? = json["daily"]?["sunset"],
            let rise = rises.first?.doubleValue, let set = sets.first?.doubleValue, set > rise
        {
            w.sunrise = Timestamp(date: Date(timeIntervalSince1970: rise), offsetSeconds: offset)
            w.sunset = Timestamp(date: Date(timeIntervalSince1970: set), offsetSeconds: offset)
        }
        return w
    }
}

enum WeatherMapping {
    /// `x` when it is within the snapshot's validation range, else `nil` (an impossible reading is missing, not clamped).
    static func clamp(_ x: Double, _ lo: Double, _ hi: Double) -> Double? {
        x.isFinite && x >= lo && x <= hi ? x : nil
    }

    static func condition(openWeatherMain main: String) -> WeatherCondition {
        let m = main.lowercased()
        if let c = WeatherCondition(rawValue: m) { return c }
        return m == "sand" ? .dust : .other
    }

    static func condition(wmoCode c: Int) -> WeatherCondition {
        switch c {
        case 0: return .clear
        case 1...3: return .clouds
        case 45, 48: return .fog
        case 51...57: return .drizzle
        case 61...67, 80...82: return .rain
        case 71...77, 85, 86: return .snow
        case 95...99: return .thunderstorm
        default: return .other
        }
    }
}

extension JSONValue {
    /// The number, when this is one.
    var doubleValue: Double? {
        if case let .number(x) = self { return x }
        return nil
    }

    /// The string, when this is one.
    var stringText: String? {
        if case let .string(s) = self { return s }
        return nil
    }
}
