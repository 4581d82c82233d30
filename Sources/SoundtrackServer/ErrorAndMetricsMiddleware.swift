import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackProviders
import SoundtrackRules
import SoundtrackStore
import Synchronization

/// Turns every error into a JSON error response (a 500 logged without request data) and records
/// each request's route, status and latency.
struct ErrorAndMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics
    let logger: Logger
    let clock: ServerClock
    /// Whether the service is shutting down (a cancelled request is then one the drain timeout cut off).
    let draining: @Sendable () -> Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var response: Response
        do {
            // CONNECT asks for a tunnel, which the service never opens: refused, and the
            // connection closed (NIO sends no body with a response to CONNECT, so without the close
            // the client would wait for one until the idle timeout).
            if request.method == .connect {
                throw APIError.methodNotAllowed("CONNECT", allow: SoundtrackAPI.allowedMethods(path: request.uri.path)).closing()
            }
            response = try await next(request, context)
        } catch let e as APIError {
            response = try e.response(from: request, context: context)
        } catch let e as RuleError {
            response = try APIError(e).response(from: request, context: context)
        } catch let e as InputError {
            response = try APIError(e).response(from: request, context: context)
        } catch let e as any HTTPResponseError {
            let mapped: APIError
            switch e.status {
            case .notFound:
                // An existing path with another method: 405 with the methods it has.
                let allow = SoundtrackAPI.allowedMethods(path: request.uri.path)
                mapped = allow.isEmpty ? .notFound : .methodNotAllowed(request.method.rawValue, allow: allow)
            case .contentTooLarge: mapped = .payloadTooLarge(limit: 0)
            case .badRequest: mapped = APIError(.badRequest, code: "bad_request", message: "malformed request")
            default: mapped = APIError(e.status, code: e.status.code < 500 ? "bad_request" : "internal", message: e.status.reasonPhrase)
            }
            response = try mapped.response(from: request, context: context)
        } catch is HTTPParserError {
            // A body cut off (the client went away mid-upload) or malformed: the client's doing,
            // not the service's; answered (if anyone still listens) and closed, counted as a 400.
            logger.debug("request body cut off or malformed", metadata: ["route": "\(context.endpointPath ?? "unknown")"])
            response = try APIError(.badRequest, code: "bad_request", message: "malformed or incomplete request body").closing()
                .response(from: request, context: context)
        } catch is CancellationError where draining() {
            // The drain timeout ran out while this request was still in flight.
            logger.debug("request cut off by the shutdown", metadata: ["route": "\(context.endpointPath ?? "unknown")"])
            response = try APIError.unavailable.closing().response(from: request, context: context)
        } catch {
            // Only the route and the error's type: never the body, the query or the error's text.
            logger.error(
                "internal error",
                metadata: [
                    "route": "\(context.endpointPath ?? "unknown")", "method": "\(request.method)",
                    "error_type": "\(String(describing: type(of: error)))"
                ])
            response = try APIError.internal.response(from: request, context: context)
        }
        metrics.request(
            route: context.endpointPath ?? "unmatched", method: request.method.rawValue, status: response.status.code,
            duration: ContinuousClock.now - start)
        return response
    }
}
