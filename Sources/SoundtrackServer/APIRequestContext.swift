import Hummingbird

/// The context of a request to the API: Hummingbird's own, and the principal of the request's key,
/// which ``AuthenticationMiddleware`` sets on the routes under `/v1` (the others have none).
public struct APIRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Who the request's key is, on an authenticated route.
    public var principal: Principal?

    public init(source: Source) {
        coreContext = .init(source: source)
        principal = nil
    }

    /// The user of the path (`/v1/users/{id}/…`), percent-decoded and checked (``SoundtrackAPI/pathID(_:)``).
    func userID() throws -> String { try SoundtrackAPI.pathID(parameters.require("id")) }

    /// The principal of an authenticated route.
    /// - Throws: 401 when there is none (a route outside ``AuthenticationMiddleware``).
    func requirePrincipal() throws(APIError) -> Principal {
        guard let principal else { throw APIError.unauthorized }
        return principal
    }
}

/// Authenticates every request of the routes it guards by its `Authorization: Bearer <key>`
/// (``Authenticator``: the key's hash, its rate limit) before the handler runs, and hands the
/// handler the key's principal in the context: 401 without a valid key, 429 over its rate.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext
    let authenticator: Authenticator

    func handle(_ request: Request, context: APIRequestContext, next: (Request, APIRequestContext) async throws -> Response) async throws -> Response {
        var context = context
        context.principal = try authenticator.authenticate(authorization: request.headers.value(.authorization))
        return try await next(request, context)
    }
}
