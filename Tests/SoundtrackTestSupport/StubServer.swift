import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// A scripted HTTP server on 127.0.0.1 (ephemeral port) that the tests start and stop: a queue of
/// canned responses per `METHOD /path`, replayed in order, and a record of every request it got.
public final class StubServer: Sendable {
    /// One canned response.
    public struct Canned: Sendable {
        public var status: Int
        public var headers: [(String, String)] = []
        public var body: Data = Data()
        /// Seconds to wait before answering (to provoke client timeouts).
        public var delay: Double = 0

        public init(status: Int, headers: [(String, String)] = [], body: Data = Data(), delay: Double = 0) {
            self.status = status
            self.headers = headers
            self.body = body
            self.delay = delay
        }

        public static func status(_ s: Int, headers: [(String, String)] = [], body: String = "") -> Canned {
            Canned(status: s, headers: headers, body: Data(body.utf8))
        }
    }

    /// One request as the server saw it.
    public struct Recorded: Sendable {
        public var method: String
        public var path: String
        public var query: [String: String]
        /// Headers, names lower-cased.
        public var headers: [String: String]
        public var body: String

        /// A header by name (any case).
        public func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    private struct State {
        var queues: [String: [Canned]] = [:]
        var requests: [Recorded] = []
    }

    private let state = Mutex(State())
    private let portBox = Mutex(0)
    private let task = Mutex<Task<Void, any Error>?>(nil)

    /// The server's base URL, e.g. `http://127.0.0.1:53211`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(portBox.withLock { $0 })")! }

    /// Adds responses for `METHOD /path` (served in order; the last one is not repeated).
    public func enqueue(_ method: String, _ path: String, _ responses: Canned...) {
        state.withLock { $0.queues["\(method) \(path)", default: []].append(contentsOf: responses) }
    }

    /// Every request received so far, in order.
    public var requests: [Recorded] { state.withLock { $0.requests } }

    /// The requests to one path.
    public func requests(to path: String) -> [Recorded] { requests.filter { $0.path == path } }

    /// Starts a server and returns once it listens.
    public static func start() async throws -> StubServer {
        let stub = StubServer()
        let ready = AsyncStream<Int>.makeStream()
        let responder = CallbackResponder<BasicRequestContext> { request, _ in try await stub.respond(request) }
        var logger = Logger(label: "stub")
        logger.logLevel = .critical
        let app = Application(
            responder: responder, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
            onServerRunning: { channel in ready.continuation.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        stub.task.withLock { $0 = Task { try await app.run() } }
        for await port in ready.stream {
            stub.portBox.withLock { $0 = port }
            break
        }
        return stub
    }

    /// Stops the server.
    public func stop() async {
        let t = task.withLock { $0 }
        t?.cancel()
        _ = await t?.result
    }

    private func respond(_ request: Request) async throws -> Response {
        var body = try await request.body.collect(upTo: 1 << 20)
        let text = body.readString(length: body.readableBytes) ?? ""
        let path = request.uri.path
        var query: [String: String] = [:]
        for item in URLComponents(string: "http://x\(request.uri.description)")?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        var headers: [String: String] = [:]
        for f in request.headers { headers[f.name.canonicalName.lowercased()] = f.value }
        let method = request.method.rawValue
        let canned: Canned? = state.withLock { s in
            s.requests.append(Recorded(method: method, path: path, query: query, headers: headers, body: text))
            let key = "\(method) \(path)"
            guard var q = s.queues[key], !q.isEmpty else { return nil }
            let c = q.count > 1 ? q.removeFirst() : q[0]
            s.queues[key] = q
            return c
        }
        guard let canned else {
            return Response(status: .notFound, body: .init(byteBuffer: ByteBuffer(string: "{\"error\":\"no stub for \(method) \(path)\"}")))
        }
        if canned.delay > 0 { try await Task.sleep(nanoseconds: UInt64(canned.delay * 1e9)) }
        var fields = HTTPFields()
        for (k, v) in canned.headers { if let name = HTTPField.Name(k) { fields[name] = v } }
        return Response(status: .init(code: canned.status), headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: canned.body)))
    }
}

/// Runs `body` with a fresh stub server, stopping it afterwards.
public func withStub<T>(_ body: (StubServer) async throws -> T) async throws -> T {
    let stub = try await StubServer.start()
    do {
        let r = try await body(stub)
        await stub.stop()
        return r
    } catch {
        await stub.stop()
        throw error
    }
}
