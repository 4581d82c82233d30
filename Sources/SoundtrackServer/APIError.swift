import Foundation
import HTTPTypes
import Hummingbird
import SoundtrackContext

/// An error the API shows its caller: an HTTP status, a stable machine-readable code and a
/// message that names the field at fault, rendered as
/// `{"error": {"code": "bad_request", "message": "…", "field": "location.lat"}}`.
public struct APIError: HTTPResponseError, Sendable, Equatable {
    /// The HTTP status.
    public var status: HTTPResponse.Status
    /// A stable code (`bad_request`, `unauthorized`, `forbidden`, `not_found`, `method_not_allowed`,
    /// `unknown_user`, `unknown_place`, `unknown_quiz`, `too_little_history`, `request_timeout`, `payload_too_large`, `unsupported_media_type`, `rate_limited`, `conflict`,
    /// `out_of_order`, `unavailable`, `internal`).
    public var code: String
    /// A human-readable message; never internals.
    public var message: String
    /// The JSON path of the field at fault, when there is one.
    public var field: String?
    /// Seconds to wait before retrying (`rate_limited`, `unavailable`).
    public var retryAfter: Int?
    /// The methods the path allows (`method_not_allowed`), sent as the `Allow` header.
    public var allow: [String] = []
    /// Whether the response closes the connection (`Connection: close`): after a request whose
    /// body was not read to its end.
    public var close = false

    /// Creates an error.
    public init(_ status: HTTPResponse.Status, code: String, message: String, field: String? = nil, retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.retryAfter = retryAfter
    }

    /// The response to any error a handler throws: the service's one table from errors to statuses.
    ///
    /// | error | status | code |
    /// | --- | --- | --- |
    /// | ``APIError`` | its own | its own |
    /// | ``InputError`` (malformed or invalid input) | 400 | `bad_request` |
    /// | ``RuleError/unknownUser(_:)`` | 404 | `unknown_user` |
    /// | ``RuleError/unknownSession(_:)`` | 404 | `unknown_session` |
    /// | ``RuleError/alreadyMember(_:session:)``, ``RuleError/sessionMoved(session:)`` | 409 | `conflict` |
    /// | ``RuleError/noTrackYet(session:)``, ``RuleError/nothingToPlay`` | 400 | `bad_request` |
    /// | ``RuleError/userExists(_:)``, ``RuleError/keyExists(_:)``, ``RuleError/eventIdTaken(_:)`` | 409 | `conflict` |
    /// | ``RuleError/unknownPlace(_:user:)`` | 404 | `unknown_place` |
    /// | ``RuleError/unknownQuiz(_:user:)`` | 404 | `unknown_quiz` |
    /// | ``RuleError/userExists(_:)``, ``RuleError/keyExists(_:)``, ``RuleError/eventIdTaken(_:)``, ``RuleError/quizAnswered(_:)`` | 409 | `conflict` |
    /// | ``RuleError/tooLittleHistory(user:likedSongs:bins:)`` | 409 | `too_little_history` |
    /// | ``RuleError/outOfOrder(at:previous:)`` | 409 | `out_of_order` |
    /// | ``RuleError/unknownTrack(_:field:)``, ``RuleError/unknownPick(_:user:)``, ``RuleError/pickOfAnotherUser(_:user:)``, ``RuleError/pickBinGone(_:)``, ``RuleError/noContext``, the group's (``RuleError/groupTooSmall(_:)``, ``RuleError/memberTwice(_:)``, ``RuleError/unknownMember(_:)``, ``RuleError/notMember(_:session:)``) | 400 | `bad_request` |
    /// | anything else | 500 | `internal` (logged by type, never shown) |
    ///
    /// The message is the error's description and `field` its field (a ``RuleError``'s is a field of the request body).
    public init(_ error: any Error) {
        switch error {
        case let e as APIError:
            self = e
        case let e as InputError:
            self = .badRequest(e)
        case let e as RuleError:
            let (status, code): (HTTPResponse.Status, String) =
                switch e {
                case .unknownUser: (.notFound, "unknown_user")
                case .unknownPlace: (.notFound, "unknown_place")
                case .unknownQuiz: (.notFound, "unknown_quiz")
                case .userExists, .keyExists, .eventIdTaken, .quizAnswered: (.conflict, "conflict")
                case .tooLittleHistory: (.conflict, "too_little_history")
                case .outOfOrder: (.conflict, "out_of_order")
                case .unknownTrack, .unknownPick, .pickOfAnotherUser, .pickBinGone, .noContext: (.badRequest, "bad_request")
                case .groupTooSmall, .memberTwice, .unknownMember, .notMember: (.badRequest, "bad_request")
                case .unknownSession: (.notFound, "unknown_session")
                case .alreadyMember, .sessionMoved: (.conflict, "conflict")
                case .noTrackYet, .nothingToPlay: (.badRequest, "bad_request")
                }
            self.init(status, code: code, message: e.description, field: e.field)
        default:
            self = .internal
        }
    }

    /// 400 `bad_request` from an input validation error (its description names the field).
    public static func badRequest(_ e: InputError) -> APIError {
        APIError(.badRequest, code: "bad_request", message: e.description, field: e.path.isEmpty ? nil : e.path)
    }

    /// 401: no key, or a key that is unknown or revoked.
    public static let unauthorized = APIError(
        .unauthorized, code: "unauthorized", message: "a valid API key is required: Authorization: Bearer <key>")

    /// 403: the key does not reach this user or route.
    public static func forbidden(_ what: String) -> APIError {
        APIError(.forbidden, code: "forbidden", message: what)
    }

    /// 404 `not_found` for a route that does not exist.
    public static let notFound = APIError(.notFound, code: "not_found", message: "no such route")

    /// 405 `method_not_allowed`: the path exists with other methods (listed in `Allow`).
    public static func methodNotAllowed(_ method: String, allow: [String]) -> APIError {
        var e = APIError(
            .methodNotAllowed, code: "method_not_allowed",
            message: "\(method.prefix(20)) is not allowed here; allowed: \(allow.joined(separator: ", "))")
        e.allow = allow
        return e
    }

    /// 415 `unsupported_media_type`: a body that is not declared as JSON.
    public static func unsupportedMediaType(_ contentType: String) -> APIError {
        APIError(
            .unsupportedMediaType, code: "unsupported_media_type",
            message: "expected a JSON body (Content-Type: application/json), got '\(contentType.prefix(60))'", field: "Content-Type")
    }

    /// 408 `request_timeout`: the body did not arrive within ``ServerConfiguration/bodyTimeout``;
    /// the connection is closed.
    public static let requestTimeout = APIError(
        .requestTimeout, code: "request_timeout", message: "the request body did not arrive in time"
    ).closing()

    /// The same error, answered with `Connection: close` (``close``).
    public func closing() -> APIError {
        var e = self
        e.close = true
        return e
    }

    /// 413 `payload_too_large`.
    public static func payloadTooLarge(limit: Int) -> APIError {
        APIError(.contentTooLarge, code: "payload_too_large", message: "the request body exceeds \(limit) bytes")
    }

    /// 429 `rate_limited`.
    public static func rateLimited(retryAfter: Int) -> APIError {
        APIError(.tooManyRequests, code: "rate_limited", message: "too many requests for this key; retry after \(retryAfter) s", retryAfter: retryAfter)
    }

    /// 503 `unavailable` (shutting down).
    public static let unavailable = APIError(.serviceUnavailable, code: "unavailable", message: "the service is shutting down", retryAfter: 1)

    /// 500 `internal`: the details are logged (without sensitive fields), never shown.
    public static let `internal` = APIError(.internalServerError, code: "internal", message: "internal error")

    /// The error as a JSON object (`{"code", "message", "field"?}`).
    public var json: JSONValue {
        var pairs: [(String, JSONValue)] = [("code", .string(code)), ("message", .string(message))]
        if let field { pairs.append(("field", .string(field))) }
        return .object(pairs)
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        if !allow.isEmpty { headers[.allow] = allow.joined(separator: ", ") }
        if close { headers[.connection] = "close" }
        let body = JSONValue.object([("error", json)]).serialized()
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}
