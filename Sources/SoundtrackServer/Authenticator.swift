import Foundation
import Synchronization
import SoundtrackStore

/// Who a request acts as: the key that authenticated it.
public struct Principal: Sendable, Equatable {
    /// The key's public id.
    public var keyId: String
    /// The key's role.
    public var role: APIKeyRecord.Role
    /// The user of a user key.
    public var user: String?

    /// Whether this key may act on `user`: an admin key reaches everyone, a user key only its own user.
    public func may(reach user: String) -> Bool {
        role == .admin || self.user == user
    }

    /// Throws 403 unless the key may act on `user`.
    public func authorize(user: String) throws(APIError) {
        guard may(reach: user) else { throw APIError.forbidden("this key may not act on user '\(user)'") }
    }

    /// Throws 403 unless this is an admin key.
    public func requireAdmin() throws(APIError) {
        guard role == .admin else { throw APIError.forbidden("this route needs an admin key") }
    }
}

/// Checks `Authorization: Bearer <key>` against the stored hashes, with a short-lived cache so a
/// hot key costs one SHA-256 and a dictionary lookup, and applies each key's rate limit.
public final class Authenticator: Sendable {
    private struct Entry {
        var principal: Principal?
        var expires: Double
    }

    private let store: Store
    private let ttl: Double
    private let clock: ServerClock
    private let cache = Mutex<[String: Entry]>([:])
    private let limiter: RateLimiter
    private let userRate: RateLimit
    private let adminRate: RateLimit

    /// Creates an authenticator over the store's `api_keys` table.
    public init(store: Store, configuration: ServerConfiguration) {
        self.store = store
        ttl = configuration.keyCacheSeconds
        clock = configuration.clock
        limiter = RateLimiter(clock: configuration.clock)
        userRate = configuration.userRate
        adminRate = configuration.adminRate
    }

    /// The principal of an `Authorization` header value, after its rate limit.
    /// - Throws: 401 `unauthorized` (no, malformed, unknown or revoked key), 429 `rate_limited`.
    public func authenticate(authorization: String?) throws -> Principal {
        guard let header = authorization, header.utf8.count < 200 else { throw APIError.unauthorized }
        let now = clock.monotonic()
        // A hot key costs one dictionary lookup by its header value; the header is parsed and the
        // key hashed only on a miss. Entries expire after `keyCacheSeconds`, so a revoked key stops
        // working within that time in every process.
        let cached = cache.withLock { $0[header] }
        let principal: Principal?
        if let cached, cached.expires > now {
            principal = cached.principal
        } else {
            let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw APIError.unauthorized }
            let key = parts[1].trimmingCharacters(in: .whitespaces)
            guard APIKeys.isWellFormed(key) else { throw APIError.unauthorized }
            let record = try store.key(hash: APIKeys.hash(key))
            principal = record.flatMap { r in r.revokedAt == nil ? Principal(keyId: r.id, role: r.role, user: r.user) : nil }
            cache.withLock { c in
                if c.count > 100_000 { c.removeAll(keepingCapacity: true) }
                c[header] = Entry(principal: principal, expires: now + ttl)
            }
        }
        guard let principal else { throw APIError.unauthorized }
        let limit = principal.role == .admin ? adminRate : userRate
        if let wait = limiter.take(key: principal.keyId, limit: limit) {
            throw APIError.rateLimited(retryAfter: max(1, Int(wait.rounded(.up))))
        }
        return principal
    }

    /// Forgets cached lookups (after keys change in this process).
    public func invalidate() {
        cache.withLock { $0.removeAll() }
    }
}
