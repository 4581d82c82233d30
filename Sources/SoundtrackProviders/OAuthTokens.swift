import Foundation
import SoundtrackContext

/// Access tokens of an OAuth 2 provider, refreshed before they expire and after a 401.
///
/// Grants: a fixed token (no refresh), client credentials (`grant_type=client_credentials`), or a
/// user's refresh token (`grant_type=refresh_token`). Client credentials go in a Basic
/// `Authorization` header (Spotify) or in the form body (Google), as ``ClientAuthentication`` says.
/// Tokens are refreshed `refreshMargin` seconds before `expires_in` runs out.
public actor OAuthTokens {
    /// How the client id and secret are sent to the token endpoint.
    public enum ClientAuthentication: Sendable { case basicHeader, formBody }

    /// How new access tokens are obtained.
    public enum Grant: Sendable {
        /// No refresh possible: the token is used until it is rejected.
        case none
        /// `grant_type=client_credentials` (app-only access).
        case clientCredentials
        /// `grant_type=refresh_token` with the user's refresh token.
        case refreshToken(String)
    }

    private var accessToken: String?
    private var expiresAt: Date?
    private var grant: Grant
    private let tokenURL: URL?
    private let clientID: String?
    private let clientSecret: String?
    private let authentication: ClientAuthentication
    private let client: ProviderHTTPClient
    /// Seconds before expiry at which a token is refreshed.
    public let refreshMargin: Double
    /// How many times a new token was fetched.
    public private(set) var refreshCount = 0

    /// Creates a token source.
    ///
    /// - Parameters:
    ///   - accessToken: a token to start with (may be `nil`: one is fetched on first use).
    ///   - expiresAt: when `accessToken` expires, if known.
    ///   - grant: how to get a new one.
    ///   - tokenURL: the token endpoint (required for a grant other than `.none`).
    public init(
        accessToken: String? = nil, expiresAt: Date? = nil, grant: Grant, tokenURL: URL?, clientID: String?, clientSecret: String?,
        authentication: ClientAuthentication, client: ProviderHTTPClient, refreshMargin: Double = 60
    ) {
        self.accessToken = accessToken
        self.expiresAt = expiresAt
        self.grant = grant
        self.tokenURL = tokenURL
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.authentication = authentication
        self.client = client
        self.refreshMargin = refreshMargin
    }

    /// Whether a new token can be fetched.
    public var canRefresh: Bool {
        if case .none = grant { return false }
        return tokenURL != nil
    }

    /// A valid access token: the current one, or a fresh one when it is missing or about to expire.
    public func token() async throws(ProviderError) -> String {
        if let t = accessToken, expiresAt.map({ $0.timeIntervalSince(client.now()) > refreshMargin }) ?? true { return t }
        return try await refresh()
    }

    /// Fetches a new token now (after a 401, or when the current one expires).
    @discardableResult
    public func refresh() async throws(ProviderError) -> String {
        guard let tokenURL, canRefresh else {
            if let t = accessToken, expiresAt == nil { return t }
            throw .notConfigured("no token endpoint or refresh token to renew the access token")
        }
        var form: [(String, String)]
        switch grant {
        case .none: form = []
        case .clientCredentials: form = [("grant_type", "client_credentials")]
        case let .refreshToken(r): form = [("grant_type", "refresh_token"), ("refresh_token", r)]
        }
        var headers = ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"]
        switch authentication {
        case .basicHeader:
            let pair = "\(clientID ?? ""):\(clientSecret ?? "")"
            headers["Authorization"] = "Basic " + Data(pair.utf8).base64EncodedString()
        case .formBody:
            if let clientID { form.append(("client_id", clientID)) }
            if let clientSecret { form.append(("client_secret", clientSecret)) }
        }
        let body = form.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .queryValueAllowed) ?? "")" }.joined(separator: "&")
        let json = try await client.json(HTTPRequest(method: "POST", url: tokenURL, headers: headers, body: Data(body.utf8)))
        guard case let .string(token)? = json["access_token"], !token.isEmpty else {
            throw .malformed(InputError(path: "access_token", expected: "a non-empty string", got: json["access_token"]?.typeDescription ?? "nothing"))
        }
        accessToken = token
        if case let .number(s)? = json["expires_in"] { expiresAt = client.now().addingTimeInterval(s) } else { expiresAt = nil }
        if case let .string(r)? = json["refresh_token"], !r.isEmpty, case .refreshToken = grant { grant = .refreshToken(r) }
        refreshCount += 1
        client.logger.info("provider token refreshed", metadata: ["endpoint": "\(Redaction.url(tokenURL))"])
        return token
    }

    /// Sends a request with `Authorization: Bearer <token>`; on 401, refreshes once and resends.
    nonisolated public func authorizedJSON(_ request: HTTPRequest) async throws(ProviderError) -> JSONValue {
        var r = request
        r.headers["Authorization"] = "Bearer " + (try await token())
        var response = try await client.send(r)
        if response.status == 401, await canRefresh {
            client.logger.info("provider answered 401: refreshing the token", metadata: ["url": "\(Redaction.url(request.url))"])
            r.headers["Authorization"] = "Bearer " + (try await refresh())
            response = try await client.send(r)
        }
        return try ProviderHTTPClient.decodeJSON(response, url: request.url)
    }
}
