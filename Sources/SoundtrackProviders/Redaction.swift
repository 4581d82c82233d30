import Foundation

/// Removes secrets and personal data from what is logged: query parameters and headers that carry
/// keys or tokens, and query parameters that carry where a person is or who they are.
public enum Redaction {
    /// Query parameters whose values are secrets (compared case-insensitively).
    public static let secretQueryNames: Set<String> = [
        "appid", "apikey", "api_key", "key", "access_token", "refresh_token", "token", "client_secret", "code", "password"
    ]
    /// Query parameters whose values say where a person is or who they are (coordinates, a place
    /// searched, an address; compared case-insensitively): masked like secrets.
    public static let personalQueryNames: Set<String> = [
        "lat", "lon", "lng", "long", "latitude", "longitude", "q", "query", "email", "address", "location"
    ]
    /// Headers whose values are secrets (compared case-insensitively).
    public static let secretHeaderNames: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"]
    /// What replaces a secret.
    public static let mask = "REDACTED"

    /// The URL with the values of secret and personal query parameters and any user:password
    /// replaced by ``mask``.
    public static func url(_ url: URL) -> String {
        guard var c = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "(unparseable URL)" }
        if c.password != nil { c.password = mask }
        if c.user != nil { c.user = mask }
        c.queryItems = c.queryItems?.map { item in
            let name = item.name.lowercased()
            return secretQueryNames.contains(name) || personalQueryNames.contains(name) ? URLQueryItem(name: item.name, value: mask) : item
        }
        return c.string ?? "(unparseable URL)"
    }

    /// Headers with secret values replaced by ``mask`` (`Authorization: Bearer REDACTED`).
    public static func headers(_ headers: [String: String]) -> [String: String] {
        var out: [String: String] = [:]
        for (k, v) in headers {
            if secretHeaderNames.contains(k.lowercased()) {
                let scheme = v.split(separator: " ", maxSplits: 1).first.map(String.init)
                out[k] = scheme.map { v.contains(" ") ? "\($0) \(mask)" : mask } ?? mask
            } else {
                out[k] = v
            }
        }
        return out
    }
}
