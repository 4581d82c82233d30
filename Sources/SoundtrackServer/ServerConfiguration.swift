import Foundation
import SoundtrackProviders

/// Everything `soundtrack serve` can be told: where to listen, limits, and the clock.
///
/// The executable fills it from the command line and the environment; tests build one in code.
///
/// ```swift
/// var config = ServerConfiguration()
/// config.port = 0                        // an ephemeral port
/// config.userRate = .init(perSecond: 5, burst: 5)
/// ```
public struct ServerConfiguration: Sendable {
    /// The address to bind (loopback by default; put a TLS proxy in front on the internet).
    public var host: String = "127.0.0.1"
    /// The TCP port (0: an ephemeral port).
    public var port: Int = 8080
    /// The largest request body accepted, in bytes (larger: 413 `payload_too_large`).
    public var maxBodyBytes: Int = 1 << 20
    /// The most feedback events in one `POST /v1/feedback` batch.
    public var maxBatchEvents: Int = 1000
    /// The rate limit of each user key.
    public var userRate = RateLimit(perSecond: 50, burst: 100)
    /// The rate limit of each admin key.
    public var adminRate = RateLimit(perSecond: 2000, burst: 4000)
    /// How long an API key lookup is cached (seconds): a key revoked by the CLI stops working within this time.
    public var keyCacheSeconds: Double = 5
    /// The most write operations committed in one transaction (group commit).
    public var maxWriteBatch: Int = 2048
    /// Clocks: wall time for records, and a monotonic one (seconds) for rate limits and latencies.
    public var clock: ServerClock = .system
    /// Fills the weather and calendar sections a snapshot lacks before each pick (`serve --enrich`);
    /// the pick then carries the `enriched` list. `nil`: snapshots are used as sent.
    public var enricher: SnapshotEnricher?

    /// A configuration with the defaults.
    public init() {}
}

/// A token bucket: `perSecond` tokens refill per second, up to `burst`.
public struct RateLimit: Sendable, Equatable {
    /// Sustained requests per second.
    public var perSecond: Double
    /// Requests allowed at once after a quiet period.
    public var burst: Double

    /// Creates a limit.
    public init(perSecond: Double, burst: Double) {
        self.perSecond = perSecond
        self.burst = burst
    }
}

/// The server's time sources, injected so tests control them.
public struct ServerClock: Sendable {
    /// Wall-clock time (key creation, user creation).
    public var now: @Sendable () -> Date
    /// Monotonic seconds (rate limits, key cache expiry).
    public var monotonic: @Sendable () -> Double

    /// Creates a clock from two functions.
    public init(now: @escaping @Sendable () -> Date, monotonic: @escaping @Sendable () -> Double) {
        self.now = now
        self.monotonic = monotonic
    }

    /// The system's clocks.
    public static var system: ServerClock {
        let origin = ContinuousClock.now
        return ServerClock(now: { Date() }, monotonic: {
            let d = ContinuousClock.now - origin
            return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
        })
    }
}
