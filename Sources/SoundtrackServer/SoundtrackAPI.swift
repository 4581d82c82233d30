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

/// The HTTP service: routes, authentication, limits, metrics and the group committer, assembled
/// over a ``SoundtrackService``. Handlers decode, stage with the ``Rules`` (through
/// ``LiveRecommender``), encode; errors become responses by their type (``APIError/init(_:)``).
///
/// ```swift
/// let api = try SoundtrackAPI(service: service, configuration: config, logger: logger)
/// let app = api.buildApplication()
/// try await app.runService()          // SIGTERM/SIGINT: graceful shutdown
/// ```
public final class SoundtrackAPI: Sendable {
    /// The recommender with its per-user cache and group committer.
    public let live: LiveRecommender
    /// API key checks and rate limits.
    public let authenticator: Authenticator
    /// Prometheus metrics.
    public let metrics: ServerMetrics
    /// The configuration the service runs with.
    public let configuration: ServerConfiguration
    let committer: GroupCommitter
    let checkpoints: CheckpointService?
    let views: ViewCheckpointService
    let refits: BlendRefitService?
    /// Counts the community model again after a forget (`nil`: the service ranks without one).
    let recounts: CommunityRecountService?
    /// Empties the write-ahead log after a forget (file databases only).
    let forgetCheckpointer: WALCheckpointer?
    let logger: Logger
    // Set last in `init`, after everything that throws: a throwing class initializer that has to
    // destroy a `Mutex` stored before the throw crashes the release compiler (Swift 6.3, SIL
    // ownership verifier).
    private let draining: Mutex<Bool>

    /// Whether ``beginDraining()`` was called: `/readyz` then answers 503.
    public var isDraining: Bool { draining.withLock { $0 } }

    /// Marks the service as shutting down: `/readyz` answers 503 `unavailable` from now on, while
    /// every other route still serves (the shutdown's first phase, before the listener closes).
    public func beginDraining() {
        draining.withLock { $0 = true }
    }

    /// Builds the service: loads the catalog index into memory and prepares the committer.
    /// - Throws: database errors while loading the catalog.
    public init(service: SoundtrackService, configuration: ServerConfiguration, logger: Logger) throws {
        let metrics = ServerMetrics()
        // The write connection: a larger page cache, and checkpoints left to a thread of their own.
        let background = service.store.path != nil
        try service.store.configureWriteConnection(cacheKiB: configuration.writeCacheKiB, autoCheckpoint: !background)
        let checkpoints =
            background
            ? CheckpointService(
                checkpointer: try WALCheckpointer(store: service.store), interval: configuration.checkpointInterval,
                restartFrames: configuration.checkpointRestartFrames, nice: configuration.backgroundNice,
                metrics: metrics, logger: logger) : nil
        let forgetCheckpointer = background ? try WALCheckpointer(store: service.store) : nil
        let index = CatalogIndex(tracks: try service.store.allTracks())
        let live = try LiveRecommender(
            service: service, index: index, clock: configuration.clock, checkpointEvents: configuration.viewCheckpointEvents,
            metrics: metrics, logger: logger)
        let committer = GroupCommitter(
            store: service.store, maxBatch: configuration.maxWriteBatch, chunk: configuration.pickCommitChunk, maxQueued: configuration.maxQueuedWrites,
            pickDelay: configuration.pickCommitDelay, nice: configuration.backgroundNice,
            metrics: metrics, logger: logger,
            settled: { items, error in live.settled(items, error) },
            closing: { live.checkpointViews() })
        live.attach(committer)
        let views = ViewCheckpointService(live: live, interval: configuration.viewCheckpointInterval, metrics: metrics)
        let refits = configuration.blendRefit.map {
            BlendRefitService(
                live: live, refit: $0, interval: configuration.blendRefitInterval, maxAge: configuration.blendRefitMaxAge,
                minimum: configuration.blendRefitMinimum, clock: configuration.clock, metrics: metrics, logger: logger)
        }
        let recounts =
            service.engine.community is SharedCommunity
            ? CommunityRecountService(
                live: live, interval: configuration.communityRecountInterval, clock: configuration.clock, metrics: metrics, logger: logger)
            : nil
        metrics.blendVersion.set(Double(service.engine.ranker.version))
        self.recounts = recounts
        self.checkpoints = checkpoints
        self.forgetCheckpointer = forgetCheckpointer
        self.views = views
        self.refits = refits
        self.live = live
        self.committer = committer
        self.metrics = metrics
        self.configuration = configuration
        self.logger = logger
        authenticator = Authenticator(store: service.store, configuration: configuration)
        draining = Mutex(false)
    }

    /// The routes of the API (method and path template), as the router and the OpenAPI document list them.
    public static let routes: [(method: HTTPRequest.Method, path: String)] = [
        (.post, "/v1/picks"), (.post, "/v1/feedback"), (.get, "/v1/users/{id}/bins"), (.post, "/v1/users"),
        (.delete, "/v1/users/{id}"), (.put, "/v1/users/{id}/email"), (.get, "/v1/users/{id}/settings"), (.patch, "/v1/users/{id}/settings"),
        (.get, "/v1/users/{id}/history"), (.get, "/v1/users/{id}/places"), (.post, "/v1/users/{id}/onboard"), (.get, "/v1/users/{id}/export"),
        (.put, "/v1/users/{id}/places/{place}"), (.get, "/v1/users/{id}/quiz"), (.post, "/v1/users/{id}/quiz/{quiz}/answers"),
        (.post, "/v1/sessions"), (.get, "/v1/sessions/{session}"), (.post, "/v1/sessions/{session}/members"),
        (.delete, "/v1/sessions/{session}/members/{user}"), (.post, "/v1/sessions/{session}/picks"), (.post, "/v1/sessions/{session}/feedback"),
        (.get, "/healthz"), (.get, "/readyz"), (.get, "/metrics"), (.get, "/openapi.json")
    ]

    /// The methods the API serves at a request path (the route templates' `{id}` match any one
    /// segment), in the order of ``routes``; empty for a path no route has.
    public static func allowedMethods(path: String) -> [String] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        var out: [String] = []
        for (method, template) in routes {
            let parts = template.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == segments.count else { continue }
            let matches = zip(parts, segments).allSatisfy { p, s in p.hasPrefix("{") ? !s.isEmpty : p == s }
            if matches, !out.contains(method.rawValue) { out.append(method.rawValue) }
        }
        return out
    }

    /// The application: the router on `configuration.host:port`, with the committer as a service
    /// that stops after the server has finished its in-flight requests.
    public func buildApplication(onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        let bodyTimeout = TimeAmount(configuration.bodyTimeout)
        return Application(
            router: buildRouter(),
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [ConnectionGuard(bodyTimeout: bodyTimeout)], idleTimeout: TimeAmount(configuration.idleTimeout))),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            // Stopped in reverse order: the checkpoints of the states first, then the committer (which
            // queues the last checkpoint of the states before it closes), then the WAL's.
            services: (checkpoints.map { [$0] } ?? []) + [committer, views] + (refits.map { [$0] } ?? []) + (recounts.map { [$0] } ?? []),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// The router with every route and middleware: the routes under `/v1` behind
    /// ``AuthenticationMiddleware``, the operational ones (`/healthz`, `/readyz`, `/metrics`,
    /// `/openapi.json`) without a key.
    public func buildRouter() -> Router<APIRequestContext> {
        let router = Router(context: APIRequestContext.self)
        router.add(middleware: ErrorAndMetricsMiddleware(metrics: metrics, logger: logger, clock: configuration.clock) { [self] in isDraining })
        let v1 = router.group("v1").add(middleware: AuthenticationMiddleware(authenticator: authenticator))
        v1.post("picks") { request, context in try await self.postPick(request, context: context) }
        v1.post("feedback") { request, context in try await self.postFeedback(request, context: context) }
        v1.post("users") { request, context in try await self.postUser(request, context: context) }
        let user = v1.group("users/{id}")
        user.get("bins") { request, context in try self.getBins(request, context: context, id: context.userID()) }
        user.delete { request, context in try await self.deleteUser(request, context: context, id: context.userID()) }
        user.get("settings") { request, context in try self.getSettings(request, context: context, id: context.userID()) }
        user.patch("settings") { request, context in try await self.patchSettings(request, context: context, id: context.userID()) }
        user.get("history") { request, context in try self.getHistory(request, context: context, id: context.userID()) }
        user.get("places") { request, context in try self.getPlaces(request, context: context, id: context.userID()) }
        user.put("places/{place}") { request, context in
            try await self.putPlace(request, context: context, id: context.userID(), place: Self.pathID(context.parameters.require("place")))
        }
        user.get("export") { request, context in try await self.getExport(request, context: context, id: context.userID()) }
        user.post("onboard") { request, context in try await self.postOnboard(request, context: context, id: context.userID()) }
        user.get("quiz") { request, context in try self.getQuiz(request, context: context, id: context.userID()) }
        user.post("quiz/{quiz}/answers") { request, context in
            try await self.postQuizAnswers(request, context: context, id: context.userID(), quiz: Self.quizID(context.parameters.require("quiz")))
        }
        user.put("email") { request, context in try await self.putEmail(request, context: context, id: context.userID()) }
        v1.post("sessions") { request, context in try await self.postSession(request, context: context) }
        let session = v1.group("sessions/{session}")
        session.get { request, context in try self.getSession(request, context: context, id: Self.sessionID(context)) }
        session.post("members") { request, context in try await self.postSessionMember(request, context: context, id: Self.sessionID(context)) }
        session.delete("members/{user}") { request, context in
            try self.deleteSessionMember(
                request, context: context, id: Self.sessionID(context), user: Self.pathID(context.parameters.require("user")))
        }
        session.post("picks") { request, context in try await self.postSessionPick(request, context: context, id: Self.sessionID(context)) }
        session.post("feedback") { request, context in try await self.postSessionFeedback(request, context: context, id: Self.sessionID(context)) }
        router.get("/healthz") { _, _ in Self.json(.object([("status", .string("ok"))])) }
        router.get("/readyz") { _, _ in
            guard self.committer.isOpen, !self.isDraining else { throw APIError.unavailable }
            return Self.json(.object([("status", .string("ready"))]))
        }
        router.get("/metrics") { _, _ in
            self.metrics.cachedUsers.set(Double(self.live.cachedUsers))
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: self.metrics.exposition())))
        }
        router.get("/openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.json)))
        }
        return router
    }

    // MARK: - Helpers

    /// A user id from a URL path segment: percent-decoded (RFC 3986, UTF-8), then checked as ids
    /// are when a user is created, so that every id `POST /v1/users` accepts is reachable:
    /// `/v1/users/a%20b/bins` is the user `a b`, `%2F` a `/` inside the id, `%2E%2E` the id `..`.
    /// - Parameters: `field` and `noun` name the segment in an error (a user id's by default).
    /// - Throws: 400 for a segment that is not percent-encoded UTF-8 or not an id.
    static func pathID(_ raw: String, field: String = "id", noun: String = "user id") throws -> String {
        guard let decoded = raw.removingPercentEncoding else {
            throw InputError(path: field, expected: "a percent-encoded UTF-8 \(noun) in the path", got: "a malformed escape")
        }
        return try JSONObjectReader.identifier(decoded, path: field)
    }

    /// A session id from the URL path (``pathID(_:field:noun:)``'s rules; errors name `session`).
    static func sessionID(_ context: APIRequestContext) throws -> String {
        try pathID(context.parameters.require("session"), field: "session", noun: "session id")
    }

    /// The request body, at most ``ServerConfiguration/maxBodyBytes`` (413 past it), declared as
    /// JSON when its type is given (415 otherwise: `application/json` or a `+json` type). A body
    /// slower than ``ServerConfiguration/bodyTimeout`` is cut off by the connection's
    /// ``ConnectionGuard`` (408).
    func readBody(_ request: Request) async throws -> ByteBuffer {
        if let type = request.headers.value(.contentType), !Self.isJSON(mediaType: type) {
            throw APIError.unsupportedMediaType(type)
        }
        let limit = configuration.maxBodyBytes
        if let length = request.headers.value(.contentLength).flatMap(Int.init), length > limit {
            throw APIError.payloadTooLarge(limit: limit)
        }
        do {
            return try await request.body.collect(upTo: limit)
        } catch let e as any HTTPResponseError where e.status == .contentTooLarge {
            throw APIError.payloadTooLarge(limit: limit)
        } catch is ConnectionGuard.BodyTimeout {
            throw APIError.requestTimeout
        }
    }

    /// A request body parsed as JSON, straight from its bytes.
    static func parseJSON(_ body: ByteBuffer) throws(InputError) -> JSONValue {
        try body.withUnsafeReadableBytes { raw throws(InputError) in try JSONParser.parse(bytes: raw) }
    }

    /// Whether a `Content-Type` value declares JSON: the media type (before any `;` parameters,
    /// spaces around it ignored, any case) is `application/json` or `application/…+json`.
    static func isJSON(mediaType value: String) -> Bool {
        if value == "application/json" || value == "application/json; charset=utf-8" { return true }  // what clients send
        var media = Substring(value)
        if let semicolon = media.firstIndex(of: ";") { media = media[..<semicolon] }
        let type = media.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()
        let lower = String(type).lowercased()
        return lower == "application/json" || (lower.hasPrefix("application/") && lower.hasSuffix("+json"))
    }

    static func json(_ value: JSONValue) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: value.serialized())))
    }

    static func json(bytes: UnsafeRawBufferPointer) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

extension HTTPFields {
    /// A field's value, as `self[name]` gives it (several fields of the name: their values joined
    /// with ", "), without the subscript's arrays and joining when there is one field: two lookups
    /// of every request.
    func value(_ name: HTTPField.Name) -> String? {
        var found: String?
        for field in self where field.name == name {
            if found != nil { return self[name] }
            found = field.value
        }
        return found
    }
}
