import Synchronization

/// Token buckets by key id: each request takes a token; tokens refill at the limit's rate.
public final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var last: Double
    }

    private let clock: ServerClock
    private let buckets = Mutex<[String: Bucket]>([:])

    /// Creates a limiter on a clock.
    public init(clock: ServerClock) {
        self.clock = clock
    }

    /// Takes a token for `key`.
    /// - Returns: `nil` when the request may go ahead, else the seconds until a token is available.
    public func take(key: String, limit: RateLimit) -> Double? {
        let now = clock.monotonic()
        return buckets.withLock { b in
            var bucket = b[key] ?? Bucket(tokens: limit.burst, last: now)
            bucket.tokens = min(limit.burst, bucket.tokens + max(0, now - bucket.last) * limit.perSecond)
            bucket.last = now
            defer { b[key] = bucket }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return nil
            }
            return limit.perSecond > 0 ? (1 - bucket.tokens) / limit.perSecond : 60
        }
    }
}
