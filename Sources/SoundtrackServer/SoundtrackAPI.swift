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
    /// Empties the write-ahead log after a forget (file databases only).
    let forgetCheckpointer: WALCheckpointer?
    let logger: Logger
    private let draining = Mutex(false)

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
        checkpoints =
            background
            ? CheckpointService(
                checkpointer: try WALCheckpointer(store: service.store), interval: configuration.checkpointInterval,
                restartFrames: configuration.checkpointRestartFrames, nice: configuration.backgroundNice,
                metrics: metrics, logger: logger) : nil
        forgetCheckpointer = background ? try WALCheckpointer(store: service.store) : nil
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
        views = ViewCheckpointService(live: live, interval: configuration.viewCheckpointInterval, metrics: metrics)
        refits = configuration.blendRefit.map {
            BlendRefitService(
                live: live, refit: $0, interval: configuration.blendRefitInterval, maxAge: configuration.blendRefitMaxAge,
                minimum: configuration.blendRefitMinimum, clock: configuration.clock, metrics: metrics, logger: logger)
        }
        metrics.blendVersion.set(Double(service.engine.ranker.version))
        self.live = live
        self.committer = committer
        self.metrics = metrics
        self.configuration = configuration
        self.logger = logger
        authenticator = Authenticator(store: service.store, configuration: configuration)
    }

    /// The routes of the API (method and path template), as the router and the OpenAPI document list them.
    public static let routes: [(method: HTTPRequest.Method, path: String)] = [
        (.post, "/v1/picks"), (.post, "/v1/feedback"), (.get, "/v1/users/{id}/bins"), (.post, "/v1/users"),
        (.delete, "/v1/users/{id}"), (.put, "/v1/users/{id}/email"), (.get, "/v1/users/{id}/settings"), (.patch, "/v1/users/{id}/settings"),
        (.get, "/v1/users/{id}/history"), (.get, "/v1/users/{id}/places"), (.post, "/v1/users/{id}/onboard"), (.get, "/v1/users/{id}/export"),
        (.put, "/v1/users/{id}/places/{place}"), (.get, "/healthz"), (.get, "/readyz"), (.get, "/metrics"), (.get, "/openapi.json")
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
            services: (checkpoints.map { [$0] } ?? []) + [committer, views] + (refits.map { [$0] } ?? []),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// The router with every route and middleware.
    public func buildRouter() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: ErrorAndMetricsMiddleware(metrics: metrics, logger: logger, clock: configuration.clock) { [self] in isDraining })
        router.post("/v1/picks") { request, _ in try await self.postPick(request) }
        router.post("/v1/feedback") { request, _ in try await self.postFeedback(request) }
        router.get("/v1/users/{id}/bins") { request, context in try self.getBins(request, id: Self.pathID(context.parameters.require("id"))) }
        router.post("/v1/users") { request, _ in try await self.postUser(request) }
        router.delete("/v1/users/{id}") { request, context in
            try await self.deleteUser(request, id: Self.pathID(context.parameters.require("id")))
        }
        router.get("/v1/users/{id}/settings") { request, context in
            try self.getSettings(request, id: Self.pathID(context.parameters.require("id")))
        }
        router.patch("/v1/users/{id}/settings") { request, context in
            try await self.patchSettings(request, id: Self.pathID(context.parameters.require("id")))
        }
        router.get("/v1/users/{id}/history") { request, context in
            try self.getHistory(request, id: Self.pathID(context.parameters.require("id")))
        }
        router.get("/v1/users/{id}/places") { request, context in
            try self.getPlaces(request, id: Self.pathID(context.parameters.require("id")))
        }
        router.put("/v1/users/{id}/places/{place}") { request, context in
            try await self.putPlace(
                request, id: Self.pathID(context.parameters.require("id")), place: Self.pathID(context.parameters.require("place")))
        }
        router.get("/v1/users/{id}/export") { request, context in
            try await self.getExport(request, id: Self.pathID(context.parameters.require("id")))
        }
        router.post("/v1/users/{id}/onboard") { request, context in
            try await self.postOnboard(request, id: Self.pathID(context.parameters.require("id")))
        }
        router.put("/v1/users/{id}/email") { request, context in
            try await self.putEmail(request, id: Self.pathID(context.parameters.require("id")))
        }
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

    // MARK: - Handlers

    private func postPick(_ request: Request) async throws -> Response {
        let principal = try authenticate(request)
        let body = try await readBody(request)
        var snapshot = try body.withUnsafeReadableBytes { raw throws(InputError) in try Snapshot.decode(bytes: raw) }
        try principal.authorize(user: snapshot.user)
        let query = request.uri.queryParameters
        var top = 1
        if let t = query.get("top") {
            guard let n = Int(t), (1...100).contains(n) else {
                throw InputError(path: "top", expected: "an integer in 1...100", got: "'\(t.prefix(20))'")
            }
            top = n
        }
        var learn = true
        if let l = query.get("learn") {
            guard l == "true" || l == "false" else {
                throw InputError(path: "learn", expected: "true or false", got: "'\(l.prefix(20))'")
            }
            learn = l == "true"
        }
        var report: [EnrichmentEntry] = []
        if let enricher = configuration.enricher {
            // The providers never see what the person's settings keep from the engine (coordinates, calendar titles).
            snapshot = Rules.permitted(snapshot, settings: try live.settings(user: snapshot.user))
            (snapshot, report) = await enricher.enrich(snapshot)
        }
        let pick = try await live.pick(snapshot, top: top, learn: learn)
        if !report.isEmpty {
            return Self.json(EnrichmentEntry.annotate(pick.json(includeRanked: top > 1), with: report))
        }
        // The hand-written encoder: the bytes of `pick.json(includeRanked:).serialized()` without the tree.
        let scratch = ByteArena(capacity: 4096)
        PickEncoder.write(pick, includeRanked: top > 1, into: scratch)
        return scratch.withUnsafeBytes { Self.json(bytes: $0) }
    }

    private func postFeedback(_ request: Request) async throws -> Response {
        let principal = try authenticate(request)
        let body = try await readBody(request)
        let (events, batch) = try Self.feedbackEvents(body, maxEvents: configuration.maxBatchEvents)
        for (i, e) in events.enumerated() where !principal.may(reach: e.user) {
            throw APIError(.forbidden, code: "forbidden", message: "this key may not act on user '\(e.user)'", field: batch ? "[\(i)].user" : "user")
        }
        let results = await live.feedback(events)
        if !batch {
            switch results[0] {
            case let .success(verdict): return Self.json(verdict.json(eventId: events[0].id))
            case let .failure(error): throw error
            }
        }
        var applied = 0, duplicates = 0, rejected = 0
        var items: [JSONValue] = []
        for (i, r) in results.enumerated() {
            switch r {
            case let .success(verdict):
                if case .duplicate = verdict { duplicates += 1 } else { applied += 1 }
                items.append(verdict.json(eventId: events[i].id))
            case let .failure(error):
                rejected += 1
                var e = APIError(error)
                if let f = e.field { e.field = "[\(i)].\(f)" }
                items.append(.object([("id", .string(events[i].id)), ("status", .string("rejected")), ("error", e.json)]))
            }
        }
        return Self.json(
            .object([
                ("applied", .number(Double(applied))), ("duplicates", .number(Double(duplicates))),
                ("rejected", .number(Double(rejected))), ("results", .array(items))
            ]))
    }

    /// The events of a feedback body: one event (an object), or a batch (an array).
    private static func feedbackEvents(_ body: ByteBuffer, maxEvents: Int) throws(InputError) -> (events: [FeedbackEvent], batch: Bool) {
        // One event: the fast decoder, straight from the body's bytes (it gives the general path's
        // value and errors, for documents up to the snapshot size limit).
        if body.readableBytes <= Snapshot.maxBytes, firstNonSpace(body) == UInt8(ascii: "{") {
            let event = try body.withUnsafeReadableBytes { raw throws(InputError) in try FeedbackEvent.decode(bytes: raw) }
            return ([event], false)
        }
        let value = try Self.parseJSON(body)
        var events: [FeedbackEvent] = []
        switch value {
        case let .array(items):
            guard !items.isEmpty, items.count <= maxEvents else {
                throw InputError(path: "", expected: "a batch of 1 to \(maxEvents) events", got: "\(items.count) events")
            }
            // Each event is held to the one document limit too, measured as its JSON without
            // spaces (only a body past the limit can hold an event past it).
            let measure = body.readableBytes > Snapshot.maxBytes
            for (i, item) in items.enumerated() {
                if measure {
                    do {
                        try Snapshot.checkSize(item.serialized().utf8.count)
                    } catch {
                        throw InputError(path: "[\(i)]", expected: error.expected, got: error.got)
                    }
                }
                events.append(try FeedbackEvent(json: item, path: "[\(i)]"))
            }
            return (events, true)
        case .object:
            try Snapshot.checkSize(body.readableBytes)  // one event: the limit of every front end
            return ([try FeedbackEvent(json: value)], false)
        default:
            throw InputError(path: "", expected: "a feedback event (an object) or a batch of events (an array)", got: value.typeDescription)
        }
    }

    private static func firstNonSpace(_ body: ByteBuffer) -> UInt8? {
        for b in body.readableBytesView where !(b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09) { return b }
        return nil
    }

    private func getBins(_ request: Request, id: String) throws -> Response {
        let principal = try authenticate(request)
        try principal.authorize(user: id)
        let bins = try live.bins(user: id)
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: BinTable.json(bins, user: id))))
    }

    private func postUser(_ request: Request) async throws -> Response {
        let principal = try authenticate(request)
        try principal.requireAdmin()
        let body = try await readBody(request)
        let user = try NewUser(json: Self.parseJSON(body))
        try live.addUser(user, at: configuration.clock.now())
        guard let u = try live.store.user(user.id) else { throw APIError.internal }
        var response = Self.json(u.json(counts: false))
        response.status = .created
        return response
    }

    /// Replaces a user's email (`{"email": null}` removes it): stored only as its keyed hash, so a
    /// legacy unkeyed hash is re-keyed when the client supplies the address again.
    private func putEmail(_ request: Request, id: String) async throws -> Response {
        let principal = try authenticate(request)
        try principal.requireAdmin()
        let body = try await readBody(request)
        let r = try JSONObjectReader(Self.parseJSON(body), base: "")
        _ = try r.require("email", "a string or null")
        let email = try r.string("email", maxLength: 254)
        try live.store.setEmail(email, user: id)
        guard let u = try live.store.user(id) else { throw RuleError.unknownUser(id) }
        return Self.json(u.json(counts: false))
    }

    private func getSettings(_ request: Request, id: String) throws -> Response {
        let principal = try authenticate(request)
        try principal.authorize(user: id)
        return Self.json(try live.settings(user: id).json)
    }

    /// `GET /v1/users/{id}/history?since=&limit=&cursor=`: the person's stored picks, newest first,
    /// each with the feedback that named it, a page at a time (`limit`, 1…500, default 50); the
    /// answer's `next_cursor` (`null` on the last page) is the `cursor` of the next page.
    private func getHistory(_ request: Request, id: String) throws -> Response {
        let principal = try authenticate(request)
        try principal.authorize(user: id)
        let query = try HistoryQuery(request.uri.queryParameters)
        let entries = try live.store.history(user: id, before: query.cursor, since: query.since, limit: query.limit)
        let next: JSONValue = entries.count == query.limit ? entries.last.map { .string(String($0.seq)) } ?? .null : .null
        return Self.json(.object([("entries", .array(entries.map(\.json))), ("next_cursor", next)]))
    }

    /// `GET /v1/users/{id}/export`: everything stored about the person (``Store/exportPerson(_:at:)``),
    /// after the person's queued writes are committed, so that it holds what the service answered.
    private func getExport(_ request: Request, id: String) async throws -> Response {
        let principal = try authenticate(request)
        try principal.authorize(user: id)
        try await live.settle(user: id)
        return Self.json(try live.store.exportPerson(id, at: configuration.clock.now()))
    }

    /// `GET /v1/users/{id}/places`: the places learned from the person's coordinates.
    private func getPlaces(_ request: Request, id: String) throws -> Response {
        let principal = try authenticate(request)
        try principal.authorize(user: id)
        return Self.json(.object([("places", .array(try live.places(user: id).map(\.json)))]))
    }

    /// `PUT /v1/users/{id}/places/{place}` with `{"name": "home"}` (or `null` to remove the name):
    /// the place as named; 404 for a place the person does not have, 400 naming a bad name.
    private func putPlace(_ request: Request, id: String, place: String) async throws -> Response {
        let principal = try authenticate(request)
        try principal.authorize(user: id)
        let r = try JSONObjectReader(Self.parseJSON(try await readBody(request)), base: "")
        try r.rejectUnknown(["name"])
        _ = try r.require("name", "a string or null")
        let name = try r.string("name", maxLength: 4 * LearnedPlace.maxNameLength).map { try LearnedPlace.validName($0) }
        return Self.json(try await live.namePlace(user: id, place: place, name: name).json)
    }

    /// `PATCH /v1/users/{id}/settings`: the settings the body names, `true` or `false`; the others
    /// stay. 400 naming the first unknown setting or value that is not a boolean (nothing changes).
    private func patchSettings(_ request: Request, id: String) async throws -> Response {
        let principal = try authenticate(request)
        try principal.authorize(user: id)
        let change = try Self.parseJSON(try await readBody(request))
        let (settings, locationTurnedOff) = try await live.updateSettings(user: id) { s in try s.apply(change) }
        // The coordinates just removed from the tables leave the write-ahead log too.
        if locationTurnedOff { try await truncateLog() }
        return Self.json(settings.json)
    }

    private func deleteUser(_ request: Request, id: String) async throws -> Response {
        let principal = try authenticate(request)
        try principal.requireAdmin()
        try await live.forget(user: id)
        authenticator.forgetKeys(of: id)
        try await truncateLog()
        return Response(status: .noContent)
    }

    /// Copies the write-ahead log into the database file and truncates it, so that once a forget
    /// is answered no file of the database holds the person (the deleted rows' pages are zeroed in
    /// the database file, `secure_delete` being on, and the log that still held them is empty).
    /// Tried for up to 10 s, on a thread of its own: the checkpoint waits for readers to leave the
    /// log, holding new writes back 5 ms at a time.
    /// - Throws: 503 `unavailable` when the log could not be emptied in that time (the rows are
    ///   deleted; the next forget empties the log).
    private func truncateLog() async throws {
        guard let checkpointer = forgetCheckpointer else { return }
        let clock = configuration.clock, logger = logger
        let emptied: Bool = await withCheckedContinuation { done in
            Thread.detachNewThread {
                let deadline = clock.monotonic() + 10
                repeat {
                    if (try? checkpointer.checkpoint(.truncate)) != nil { return done.resume(returning: true) }
                    Thread.sleep(forTimeInterval: 0.02)
                } while clock.monotonic() < deadline
                done.resume(returning: false)
            }
        }
        guard emptied else {
            logger.error("forget: the write-ahead log could not be emptied in 10 s")
            throw APIError(
                .serviceUnavailable, code: "unavailable",
                message: "the user is deleted, but the database's log could not be emptied yet; the next forget empties it",
                retryAfter: 10)
        }
    }

    // MARK: - Helpers

    /// A user id from a URL path segment: percent-decoded (RFC 3986, UTF-8), then checked as ids
    /// are when a user is created, so that every id `POST /v1/users` accepts is reachable:
    /// `/v1/users/a%20b/bins` is the user `a b`, `%2F` a `/` inside the id, `%2E%2E` the id `..`.
    /// - Throws: 400 for a segment that is not percent-encoded UTF-8 or not an id.
    static func pathID(_ raw: String) throws -> String {
        guard let decoded = raw.removingPercentEncoding else {
            throw InputError(path: "id", expected: "a percent-encoded UTF-8 user id in the path", got: "a malformed escape")
        }
        return try JSONObjectReader.identifier(decoded, path: "id")
    }

    func authenticate(_ request: Request) throws -> Principal {
        try authenticator.authenticate(authorization: request.headers.value(.authorization))
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
