import Foundation
import SoundtrackContext

/// Why a provider call failed. Messages never contain secrets (keys and tokens are redacted).
public enum ProviderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The provider is not configured (no key, no token, no base URL).
    case notConfigured(String)
    /// The provider answered with an HTTP error status after all retries.
    case http(status: Int, url: String)
    /// The provider answered 401 and no (further) token refresh was possible.
    case unauthorized(url: String)
    /// The provider answered 429 and asked to wait longer than allowed (or retries ran out).
    case rateLimited(retryAfterSeconds: Double?, url: String)
    /// The request timed out (after all retries).
    case timeout(url: String)
    /// The connection failed (after all retries).
    case network(String)
    /// The answer was not the JSON (or ICS) expected: the path of the field at fault.
    case malformed(InputError)

    /// A short machine-readable reason (`timeout`, `rate_limited`, …), used in the pick's `enriched` list.
    public var code: String {
        switch self {
        case .notConfigured: return "not_configured"
        case .http: return "http_error"
        case .unauthorized: return "unauthorized"
        case .rateLimited: return "rate_limited"
        case .timeout: return "timeout"
        case .network: return "network"
        case .malformed: return "malformed"
        }
    }

    public var description: String {
        switch self {
        case let .notConfigured(what): return "not configured: \(what)"
        case let .http(status, url): return "HTTP \(status) from \(url)"
        case let .unauthorized(url): return "unauthorized (401) from \(url)"
        case let .rateLimited(after, url):
            return "rate limited (429) by \(url)" + (after.map { ", retry after \(JSONValue.numberText($0)) s" } ?? "")
        case let .timeout(url): return "timed out: \(url)"
        case let .network(message): return "network error: \(message)"
        case let .malformed(e): return "malformed response: \(e.description)"
        }
    }
}
