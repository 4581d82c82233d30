import Foundation
import Logging
import SoundtrackProviders
import SoundtrackTestSupport
import Synchronization

extension StubServer.Canned {
    /// A fixture file's bytes with status 200 and a JSON content type.
    static func fixture(_ name: String, status: Int = 200, headers: [(String, String)] = []) -> StubServer.Canned {
        StubServer.Canned(status: status, headers: [("Content-Type", "application/json")] + headers, body: Fixtures.data(name))
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

/// A client against the stub, its sleeps and clock from `time`. Timeouts of 120 s: the loopback answers in milliseconds, but a test run that keeps both cores busy once delayed an answer past 10 s, and the retry of a timed-out request changes what the stub serves next (the timeout tests set their own 0.3 s).
func testClient(_ time: TestTime, logger: Logger = Logger(label: "test"), timeout: Double = 120, attempts: Int = 3) -> ProviderHTTPClient {
    ProviderHTTPClient(
        transport: URLSessionTransport(), policy: RetryPolicy(maxAttempts: attempts, baseDelay: 0.5, maxDelay: 4, timeout: timeout, maxRetryAfter: 30),
        logger: logger, sleep: time.sleep, now: time.now)
}
