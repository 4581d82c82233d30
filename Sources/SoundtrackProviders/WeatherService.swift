import Foundation
import SoundtrackContext

/// A clock for caches and token expiry: injected so tests control time.
public typealias WallClock = @Sendable () -> Date

/// Current weather through a fallback chain of providers, cached per coarse cell.
///
/// The cell is the coordinates floored to `cellDegrees` (0.1° by default, about 11 km of latitude);
/// an answer is reused for `ttl` seconds (10 minutes by default) by the injected clock. Providers are
/// tried in order; the first answer wins, and every failure is reported, never thrown.
public actor WeatherService {
    /// What happened to one request: the weather (or nil) and one entry per provider tried.
    public struct Outcome: Sendable {
        /// The weather, when a provider (or the cache) answered.
        public var weather: Weather?
        /// The providers tried, in order, and what each did.
        public var report: [EnrichmentEntry]
    }

    struct Cell: Hashable {
        var lat: Int
        var lon: Int
    }

    private let providers: [any WeatherProvider]
    private let now: WallClock
    /// Seconds an answer is reused.
    public let ttl: Double
    /// The cell size in degrees.
    public let cellDegrees: Double
    private var cache: [Cell: (weather: Weather, source: String, at: Date)] = [:]
    /// Above this many cells, expired answers are dropped before a new one is kept.
    let maxCells = 4096

    /// Creates the service.
    /// - Parameters:
    ///   - providers: the chain, first choice first.
    ///   - ttl: seconds an answer is reused for the same cell.
    ///   - cellDegrees: the cell size.
    ///   - now: the clock.
    public init(providers: [any WeatherProvider], ttl: Double = 600, cellDegrees: Double = 0.1, now: @escaping WallClock = { Date() }) {
        self.providers = providers
        self.ttl = ttl
        self.cellDegrees = cellDegrees
        self.now = now
    }

    /// The current weather at a point: from the cache when the cell was asked within ``ttl``, else
    /// from the first provider of the chain that answers.
    public func current(lat: Double, lon: Double) async -> Outcome {
        let cell = Cell(lat: Int((lat / cellDegrees).rounded(.down)), lon: Int((lon / cellDegrees).rounded(.down)))
        let t = now()
        if let hit = cache[cell], t.timeIntervalSince(hit.at) < ttl, t >= hit.at {
            return Outcome(weather: hit.weather, report: [EnrichmentEntry(section: "weather", source: hit.source, status: .cached)])
        }
        var report: [EnrichmentEntry] = []
        for p in providers {
            do {
                let w = try await p.current(lat: lat, lon: lon)
                let at = now()
                if cache.count >= maxCells {
                    // A long-running service sees many cells: drop the expired answers before growing.
                    cache = cache.filter { at.timeIntervalSince($0.value.at) < ttl }
                }
                cache[cell] = (w, p.name, at)
                report.append(EnrichmentEntry(section: "weather", source: p.name, status: .filled))
                return Outcome(weather: w, report: report)
            } catch {
                report.append(EnrichmentEntry(section: "weather", source: p.name, status: .failed, reason: error.code))
            }
        }
        if providers.isEmpty {
            report.append(EnrichmentEntry(section: "weather", source: "none", status: .skipped, reason: "not_configured"))
        }
        return Outcome(weather: nil, report: report)
    }
}
