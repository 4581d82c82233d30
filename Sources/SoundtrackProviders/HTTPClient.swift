import Dispatch
import Foundation
import Logging
import SoundtrackContext

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP request of a provider.
public struct HTTPRequest: Sendable {
    /// `GET`, `POST`…
    public var method: String
    /// The full URL, query included.
    public var url: URL
    /// Request headers.
    public var headers: [String: String]
    /// The body, if any.
    public var body: Data?

    /// Creates a request.
    public init(method: String = "GET", url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// One HTTP response: status, headers (names lower-cased) and body.
public struct HTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Headers, names lower-cased.
    public var headers: [String: String]
    /// The body.
    public var body: Data

    /// Creates a response.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        self.body = body
    }
}

/// How a request goes over the wire. ``URLSessionTransport`` in production and in tests (against a
/// stub server on loopback).
public protocol HTTPTransport: Sendable {
    /// Sends one request; throws ``TransportFailure`` when no response arrived.
    func send(_ request: HTTPRequest, timeout: Double) async throws(TransportFailure) -> HTTPResponse
}

/// A request that got no HTTP response.
public enum TransportFailure: Error, Sendable {
    /// No answer within the timeout.
    case timeout
    /// The connection failed (refused, reset, DNS…).
    case network(String)
}

/// Foundation's URLSession (libcurl on Linux), ephemeral: no cookies, no cache, no credentials stored.
public struct URLSessionTransport: HTTPTransport {
    let session: URLSession

    /// Creates a transport over its own ephemeral session.
    public init() {
        let config = URLSessionConfiguration.ephemeral
        config.httpCookieStorage = nil
        config.urlCache = nil
        config.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: config)
    }

    public func send(_ request: HTTPRequest, timeout: Double) async throws(TransportFailure) -> HTTPResponse {
        var r = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        r.httpMethod = request.method
        for (k, v) in request.headers { r.setValue(v, forHTTPHeaderField: k) }
        r.httpBody = request.body
        // The answer, the timer and cancellation race on Dispatch threads, first come first served, so a
        // busy Swift concurrency pool cannot turn a response that arrived in time into a timeout.
        let pending = PendingRequest()
        let session = self.session
        let urlRequest = r
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<HTTPResponse, TransportFailure>, Never>) in
                let task = session.dataTask(with: urlRequest) { data, response, error in
                    if let error {
                        let code = (error as? URLError)?.code
                        pending.finish(.failure(code == .timedOut ? .timeout : .network(code.map { "URLError \($0.rawValue)" } ?? "\(type(of: error))")))
                        return
                    }
                    guard let http = response as? HTTPURLResponse else {
                        pending.finish(.failure(.network("not an HTTP response")))
                        return
                    }
                    var headers: [String: String] = [:]
                    for (k, v) in http.allHeaderFields {
                        if let k = k as? String, let v = v as? String { headers[k.lowercased()] = v }
                    }
                    pending.finish(.success(HTTPResponse(status: http.statusCode, headers: headers, body: data ?? Data())))
                }
                pending.start(continuation, task: task)
                DispatchQueue.global().asyncAfter(deadline: .now() + max(timeout, 0.001)) {
                    pending.finish(.failure(.timeout))
                }
                task.resume()
            }
        } onCancel: {
            pending.finish(.failure(.network("cancelled")))
        }
        return try result.get()
    }
}

/// One request in flight: whoever finishes it first (the answer, the timer, cancellation) resumes the
/// caller and cancels the transfer; later finishers do nothing.
private final class PendingRequest: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Result<HTTPResponse, TransportFailure>, Never>?
    private var task: URLSessionDataTask?
    private var early: Result<HTTPResponse, TransportFailure>?
    private var done = false

    func start(_ c: CheckedContinuation<Result<HTTPResponse, TransportFailure>, Never>, task t: URLSessionDataTask) {
        lock.lock()
        if let early {
            task = nil
            lock.unlock()
            t.cancel()
            c.resume(returning: early)
            return
        }
        continuation = c
        task = t
        lock.unlock()
    }

    func finish(_ r: Result<HTTPResponse, TransportFailure>) {
        lock.lock()
        guard !done else {
            lock.unlock()
            return
        }
        guard let c = continuation else {
            // Finished (cancelled) before the transfer started: start() resumes with this outcome.
            early = r
            done = true
            lock.unlock()
            return
        }
        done = true
        continuation = nil
        let t = task
        task = nil
        lock.unlock()
        if case .failure = r { t?.cancel() }
        c.resume(returning: r)
    }
}

/// Timeouts, retries and backoff of a provider client.
///
/// Network errors, timeouts and 5xx answers are retried after `baseDelay × 2^(attempt−1)` seconds
/// (at most `maxDelay`); a 429 is retried after its `Retry-After` (seconds or an HTTP date) when that
/// is at most `maxRetryAfter`, else it fails at once as ``ProviderError/rateLimited(retryAfterSeconds:url:)``.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all (1: no retries).
    public var maxAttempts: Int
    /// Backoff before the first retry, in seconds.
    public var baseDelay: Double
    /// The longest backoff, in seconds.
    public var maxDelay: Double
    /// The timeout of one attempt, in seconds.
    public var timeout: Double
    /// The longest `Retry-After` the client waits for, in seconds.
    public var maxRetryAfter: Double

    /// Creates a policy (defaults: 3 attempts, 0.5 s then 1 s backoff, 10 s timeout, wait at most 30 s on 429).
    public init(maxAttempts: Int = 3, baseDelay: Double = 0.5, maxDelay: Double = 8, timeout: Double = 10, maxRetryAfter: Double = 30) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.timeout = timeout
        self.maxRetryAfter = maxRetryAfter
    }

    /// The backoff before retry number `attempt` (1-based).
    public func backoff(afterAttempt attempt: Int) -> Double {
        min(maxDelay, baseDelay * pow(2, Double(max(0, attempt - 1))))
    }
}

/// The HTTP client every provider uses: one request with timeouts, retries with backoff, `Retry-After`
/// on 429, and logging with secrets redacted.
///
/// Time is injected: `sleep` waits (tests record the waits instead), `now` reads the wall clock (for
/// `Retry-After` given as an HTTP date).
public struct ProviderHTTPClient: Sendable {
    /// The wire.
    public var transport: any HTTPTransport
    /// Timeouts and retries.
    public var policy: RetryPolicy
    /// Where requests, retries and failures are logged (URLs and headers redacted).
    public var logger: Logger
    /// Waits the given number of seconds.
    public var sleep: @Sendable (Double) async throws -> Void
    /// The wall clock.
    public var now: @Sendable () -> Date

    /// Creates a client.
    public init(
        transport: any HTTPTransport = URLSessionTransport(), policy: RetryPolicy = RetryPolicy(), logger: Logger,
        sleep: @escaping @Sendable (Double) async throws -> Void = { try await Task.sleep(nanoseconds: UInt64(max(0, $0) * 1e9)) },
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.transport = transport
        self.policy = policy
        self.logger = logger
        self.sleep = sleep
        self.now = now
    }

    /// Sends a request, retrying network errors, timeouts, 5xx and 429 as the policy says.
    ///
    /// - Returns: the first response that is not retried (2xx, or a 4xx other than 429).
    /// - Throws: ``ProviderError`` `.timeout`, `.network`, `.http` (5xx after the last attempt) or `.rateLimited`.
    public func send(_ request: HTTPRequest) async throws(ProviderError) -> HTTPResponse {
        let shown = Redaction.url(request.url)
        var attempt = 0
        while true {
            attempt += 1
            let last = attempt >= policy.maxAttempts
            logger.debug(
                "provider request",
                metadata: [
                    "method": "\(request.method)", "url": "\(shown)", "attempt": "\(attempt)",
                    "headers": "\(Redaction.headers(request.headers).sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))"
                ])
            let response: HTTPResponse
            do {
                response = try await transport.send(request, timeout: policy.timeout)
            } catch {
                let failure: ProviderError
                switch error {
                case .timeout: failure = .timeout(url: shown)
                case let .network(m): failure = .network("\(m) (\(shown))")
                }
                if last {
                    logger.warning("provider request failed", metadata: ["url": "\(shown)", "error": "\(failure)"])
                    throw failure
                }
                try await wait(policy.backoff(afterAttempt: attempt), reason: failure.code, url: shown)
                continue
            }
            switch response.status {
            case 429:
                let after = retryAfter(response)
                let delay = after ?? policy.backoff(afterAttempt: attempt)
                if last || delay > policy.maxRetryAfter {
                    logger.warning("provider rate limited", metadata: ["url": "\(shown)", "retry_after": "\(after.map { "\($0)" } ?? "none")"])
                    throw .rateLimited(retryAfterSeconds: after, url: shown)
                }
                try await wait(delay, reason: "rate_limited", url: shown)
            case 500...599:
                if last {
                    logger.warning("provider server error", metadata: ["url": "\(shown)", "status": "\(response.status)"])
                    throw .http(status: response.status, url: shown)
                }
                try await wait(policy.backoff(afterAttempt: attempt), reason: "http_\(response.status)", url: shown)
            default:
                logger.debug("provider response", metadata: ["url": "\(shown)", "status": "\(response.status)", "bytes": "\(response.body.count)"])
                return response
            }
        }
    }

    /// Sends a request and parses a 2xx answer as JSON (401 → `.unauthorized`, other statuses → `.http`).
    public func json(_ request: HTTPRequest) async throws(ProviderError) -> JSONValue {
        try Self.decodeJSON(try await send(request), url: request.url)
    }

    /// Parses a response's body as JSON after checking its status.
    public static func decodeJSON(_ response: HTTPResponse, url: URL) throws(ProviderError) -> JSONValue {
        switch response.status {
        case 200..<300: break
        case 401: throw .unauthorized(url: Redaction.url(url))
        default: throw .http(status: response.status, url: Redaction.url(url))
        }
        do {
            return try JSONParser.parse(response.body)
        } catch {
            throw .malformed(error)
        }
    }

    private func wait(_ seconds: Double, reason: String, url: String) async throws(ProviderError) {
        logger.info("provider retry", metadata: ["url": "\(url)", "reason": "\(reason)", "wait_s": "\(seconds)"])
        do {
            try await sleep(seconds)
        } catch {
            throw .network("cancelled while waiting to retry \(url)")
        }
    }

    /// The `Retry-After` of a response in seconds: delta-seconds, or an HTTP date relative to ``now``.
    func retryAfter(_ response: HTTPResponse) -> Double? {
        guard let v = response.headers["retry-after"]?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let s = Double(v), s >= 0 { return s }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "GMT")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let d = f.date(from: v) else { return nil }
        return max(0, d.timeIntervalSince(now()))
    }
}

extension HTTPRequest {
    /// A URL built from a base URL, a path and query items (the path is appended to the base's path).
    static func url(base: URL, path: String, query: [(String, String)] = []) -> URL {
        var c = URLComponents(url: base, resolvingAgainstBaseURL: false)!
        let basePath = c.path.hasSuffix("/") ? String(c.path.dropLast()) : c.path
        c.percentEncodedPath = basePath + path
        if !query.isEmpty {
            func enc(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .queryValueAllowed) ?? "" }
            c.percentEncodedQuery = query.map { "\(enc($0.0))=\(enc($0.1))" }.joined(separator: "&")
        }
        return c.url!
    }
}

extension CharacterSet {
    /// Characters left as they are in a query value (`&`, `=`, `+`, `:` and `#` are encoded).
    static let queryValueAllowed: CharacterSet = {
        var s = CharacterSet.urlQueryAllowed
        s.remove(charactersIn: "&=+:#?/")
        return s
    }()
}
