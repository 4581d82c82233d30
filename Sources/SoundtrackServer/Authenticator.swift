import CSupport
import Foundation
import SoundtrackStore
import Synchronization

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

/// Checks `Authorization: Bearer <key>` against the stored hashes, with a cache so a hot key
/// costs one dictionary lookup, and applies each key's rate limit.
///
/// A cached lookup is trusted for `keyCacheSeconds` after it was last validated. Rather than
/// looking each key up again when that time is up, every half of it one query reads all keys'
/// revocation states in the background: revoked and deleted keys leave the cache, and every key
/// still cached counts as validated when that query started. So a revoked key stops working
/// within `keyCacheSeconds`, and a key in use is looked up once.
public final class Authenticator: Sendable {
    private struct Entry {
        /// `nil`: no such key, or a revoked one.
        var principal: Principal?
        /// When this key was looked up (monotonic seconds).
        var lookedUp: Double
    }

    private struct Cache {
        var entries: [String: Entry] = [:]
        /// When the last revalidation of all keys started: keys cached at its end are valid from then.
        var revalidated = -Double.infinity
        /// When the next revalidation is due.
        var nextRevalidation = -Double.infinity
        var revalidating = false
        /// Counts ``Authenticator/forgetKeys(of:)``: a lookup that started before one is not cached.
        var forgets = 0
    }

    private let store: Store
    private let ttl: Double
    private let clock: ServerClock
    private let cache = Mutex(Cache())
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
        let (cached, revalidate, forgets): (Principal??, Bool, Int) = cache.withLock { c in
            var revalidate = false
            if ttl > 0, now >= c.nextRevalidation, !c.revalidating, !c.entries.isEmpty {
                c.revalidating = true
                revalidate = true
            }
            guard let e = c.entries[header] else { return (nil, revalidate, c.forgets) }
            // Unknown keys are not revalidated in bulk: they are looked up again when their time is up.
            let validated = e.principal == nil ? e.lookedUp : max(e.lookedUp, c.revalidated)
            return (now - validated < ttl ? .some(e.principal) : nil, revalidate, c.forgets)
        }
        if revalidate {
            // A thread of its own, not the cooperative pool: the query blocks (it reads every key)
            // and the pool's few threads are the ones answering requests.
            Thread.detachNewThread {
                _ = soundtrack_name_thread("st-keys")
                self.revalidate()
            }
        }
        let principal: Principal?
        if let cached {
            principal = cached
        } else {
            let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw APIError.unauthorized }
            let key = parts[1].trimmingCharacters(in: .whitespaces)
            guard APIKeys.isWellFormed(key) else { throw APIError.unauthorized }
            let record = try store.key(hash: APIKeys.hash(key))
            principal = record.flatMap { r in r.revokedAt == nil ? Principal(keyId: r.id, role: r.role, user: r.user) : nil }
            if ttl > 0 {
                cache.withLock { c in
                    // A user forgotten since the lookup began may have taken this key with it.
                    guard c.forgets == forgets else { return }
                    if c.entries.count > 100_000 { c.entries.removeAll(keepingCapacity: true) }
                    c.entries[header] = Entry(principal: principal, lookedUp: now)
                }
            }
        }
        guard let principal else { throw APIError.unauthorized }
        let limit = principal.role == .admin ? adminRate : userRate
        if let wait = limiter.take(key: principal.keyId, limit: limit) {
            throw APIError.rateLimited(retryAfter: max(1, Int(wait.rounded(.up))))
        }
        return principal
    }

    /// Drops every cached key of `user`, whose keys a forget has just deleted, so that none works
    /// once the forget is answered (``SoundtrackAPI`` calls it before its 204): the next request with
    /// such a key looks it up and finds nothing. Lookups still running are not cached.
    public func forgetKeys(of user: String) {
        cache.withLock { c in
            c.forgets &+= 1
            let gone = c.entries.compactMap { header, entry in entry.principal?.user == user ? header : nil }
            for header in gone { c.entries[header] = nil }
        }
    }

    /// When the last finished revalidation started (monotonic seconds), or `nil` before the first.
    public var lastRevalidation: Double? {
        cache.withLock { $0.revalidated.isFinite ? $0.revalidated : nil }
    }

    /// Revalidates every cached key with one query: revoked and deleted keys leave the cache, and
    /// the others count as validated when the query started. Runs by itself, in the background,
    /// every half `keyCacheSeconds` while requests come in.
    public func revalidate() {
        let start = clock.monotonic()
        let revoked: [String: Bool]?
        do {
            revoked = try store.keyRevocations()
        } catch {
            revoked = nil  // the entries then expire one by one and are looked up again
        }
        cache.withLock { c in
            c.revalidating = false
            c.nextRevalidation = start + ttl / 2
            guard let revoked else { return }
            // One pass that only reads, then the (usually no) removals: the dictionary is not rebuilt
            // while requests wait for the lock.
            var gone: [String] = []
            for (header, entry) in c.entries {
                if let p = entry.principal, revoked[p.keyId] != false { gone.append(header) }
            }
            for header in gone { c.entries[header] = nil }
            c.revalidated = start
        }
    }
}
