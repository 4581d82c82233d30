import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization
import SoundtrackProviders

/// A scripted HTTP server on 127.0.0.1 (ephemeral port) that the tests start and stop: a queue of
/// canned responses per `METHOD /path`, replayed in order, and a record of every request it got.
final class StubServer: Sendable {
    /// One canned response.
    struct Canned: Sendable {
        var status: Int
        var headers: [(String, String)] = []
        var body: Data = Data()
        /// Seconds to wait before answering (to provoke client timeouts).
        var delay: Double = 0

        /// A fixture file's bytes with status 200 and a JSON content type.
        static func fixture(_ name: String, status: Int = 200, headers: [(String, String)] = []) -> Canned {
            Canned(status: status, headers: [("Content-Type", "application/json")] + headers, body: Fixtures.data(name))
        }

        static func status(_ s: Int, headers: [(String, String)] = [], body: String = "") -> Canned {
            Canned(status: s, headers: headers, body: Data(body.utf8))
        }
    }

    /// One request as the server saw it.
    struct Recorded: Sendable {
        var method: String
        var path: String
        var query: [String: String]
        /// Headers, names lower-cased.
        var headers: [String: String]
        var body: String

        /// A header by name (any case).
        func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    private struct State {
        var queues: [String: [Canned]] = [:]
        var requests: [Recorded] = []
    }

    private let state = Mutex(State())
    private let portBox = Mutex(0)
    private let task = Mutex<Task<Void, any Error>?>(nil)

    /// The server's base URL, e.g. `http://127.0.0.1:53211`.
    var baseURL: URL { URL(string: "http://127.0.0.1:\(portBox.withLock { $0 })")! }

    /// Adds responses for `METHOD /path` (served in order; the last one is not repeated).
    func enqueue(_ method: String, _ path: String, _ responses: Canned...) {
        state.withLock { $0.queues["\(method) \(path)", default: []].append(contentsOf: responses) }
    }

    /// Every request received so far, in order.
    var requests: [Recorded] { state.withLock { $0.requests } }

    /// The requests to one path.
    func requests(to path: String) -> [Recorded] { requests.filter { $0.path == path } }

    /// Starts a server and returns once it listens.
    static func start() async throws -> StubServer {
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
    func stop() async {
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
func withStub<T>(_ body: (StubServer) async throws -> T) async throws -> T {
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

/// The fixture files written from the providers' public documentation.
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func data(_ name: String) -> Data {
        guard let d = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else {
            fatalError("missing fixture \(name)")
        }
        return d
    }

    static func text(_ name: String) -> String { String(decoding: data(name), as: UTF8.self) }
}

/// Lines captured by a logger made with ``capturingLogger()``.
final class LogCapture: Sendable {
    let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
}

/// A trace-level logger writing into a capture.
func capturingLogger() -> (Logger, LogCapture) {
    let capture = LogCapture()
    let box = capture
    let logger = Logger(label: "test.providers") { _ in ForwardingHandler(target: box) }
    return (logger, capture)
}

/// A log handler that keeps every rendered line (message and metadata) in a capture.
struct ForwardingHandler: LogHandler {
    let target: LogCapture
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let error = event.error.map { " error=\($0)" } ?? ""
        let rendered = "\(event.level) \(event.message) " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") + error
        target.lines.withLock { $0.append(rendered) }
    }
}

/// Waits recorded instead of slept, and a settable clock.
final class TestTime: Sendable {
    private let waits = Mutex<[Double]>([])
    private let current = Mutex(Date(timeIntervalSince1970: 1_773_470_530))

    var sleeps: [Double] { waits.withLock { $0 } }
    var sleep: @Sendable (Double) async throws -> Void { { s in self.waits.withLock { $0.append(s) } } }
    var now: @Sendable () -> Date { { self.current.withLock { $0 } } }
    func advance(_ seconds: Double) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// A client against the stub (10 s timeouts: the loopback answers in milliseconds, and the timeout test sets its own 0.3 s), its sleeps and clock from `time`.
func testClient(_ time: TestTime, logger: Logger = Logger(label: "test"), timeout: Double = 10, attempts: Int = 3) -> ProviderHTTPClient {
    ProviderHTTPClient(
        transport: URLSessionTransport(), policy: RetryPolicy(maxAttempts: attempts, baseDelay: 0.5, maxDelay: 4, timeout: timeout, maxRetryAfter: 30),
        logger: logger, sleep: time.sleep, now: time.now)
}
