import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import SoundtrackContext
import SoundtrackEngine
import SoundtrackRules
import SoundtrackServer
import SoundtrackStore
import SoundtrackTestSupport
import Synchronization
import Testing

/// Paths of the checkout.
enum Repo {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let smallCatalog = root.appendingPathComponent("datasets/catalog-small.csv")

    static func tempDir() -> URL { Scratch.directory("server") }
}

/// Polls `condition` every 10 ms for up to `seconds` (5), then expects it.
func waitUntil(seconds: Int = 5, _ condition: () -> Bool) async throws {
    for _ in 0..<(seconds * 100) where !condition() { try await Task.sleep(for: .milliseconds(10)) }
    #expect(condition())
}

/// A clock the test moves by hand.
final class ManualClock: Sendable {
    private let seconds = Mutex<Double>(1000)
    private let wall = Mutex<Double>(1_773_000_000)
    func advance(_ s: Double) { seconds.withLock { $0 += s } }
    /// Sets the wall clock (seconds since 1970); it may step back, as a real one can.
    func setWall(_ s: Double) { wall.withLock { $0 = s } }
    var clock: ServerClock {
        ServerClock(now: { Date(timeIntervalSince1970: self.wall.withLock { $0 }) }, monotonic: { self.seconds.withLock { $0 } })
    }
}

/// Log lines kept in memory, to check that no sensitive field reaches the logs.
final class CapturedLogs: Sendable {
    private let lines = Mutex<[String]>([])
    var text: String { lines.withLock { $0.joined(separator: "\n") } }
    func append(_ s: String) { lines.withLock { $0.append(s) } }

    var logger: Logger {
        var l = Logger(label: "test") { _ in CapturingHandler(sink: self) }
        l.logLevel = .trace
        return l
    }
}

struct CapturingHandler: LogHandler {
    let sink: CapturedLogs
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        sink.append("\(event.level) \(event.message) \(metadata.merging(event.metadata ?? [:]) { $1 })")
    }
}

/// A service over a fresh database file with the 500-track catalog, users and keys.
struct Fixture {
    let dir: URL
    let path: String
    let service: SoundtrackService
    let api: SoundtrackAPI
    let logs = CapturedLogs()
    let clock = ManualClock()
    var keys: [String: String] = [:]
    var admin = ""

    /// - Parameters:
    ///   - keepingSnapshots: users whose `keep_raw_snapshots` is on: their events with snapshots
    ///     take the service's pending path (the event waits in `pending_events` for its state),
    ///     which other users' do not.
    ///   - community: rank with the community model of the database, as `serve` does
    ///     (``Fixture/service(path:)``); by default without one.
    init(
        users: [String] = ["u-1", "u-2"], keepingSnapshots: Set<String> = [], community: Bool = false,
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) throws {
        dir = Repo.tempDir()
        path = dir.appendingPathComponent("t.sqlite").path
        let logger = logs.logger
        let store = try Store(path: path, durable: false)
        _ = try store.importCatalog(Repo.smallCatalog)
        var rng = SystemRandomNumberGenerator()
        for u in users {
            try store.addUser(NewUser(id: u), at: Date())
            if keepingSnapshots.contains(u) { try store.updateSettings(user: u) { $0.keepRawSnapshots = true } }
            let (secret, record) = APIKeys.generate(role: .user, user: u, label: nil, at: Date(), using: &rng)
            try store.insertKey(record)
            keys[u] = secret
        }
        service = try community ? Self.service(path: path, logger: logger) : Self.service(store: store, community: nil, logger: logger)
        let (secret, record) = APIKeys.generate(role: .admin, user: nil, label: "ops", at: Date(), using: &rng)
        try service.store.insertKey(record)
        admin = secret
        var config = ServerConfiguration()
        config.port = 0
        config.clock = clock.clock
        configure(&config)
        api = try SoundtrackAPI(service: service, configuration: config, logger: logger)
    }

    /// A service over `store` with the bundled models and seed 42, ranking with `community`.
    static func service(store: Store, community: (any CommunitySource)?, logger: Logger) throws -> SoundtrackService {
        let models = try Models.bundled()
        let engine = Recommender(config: models.config, catalog: IndexCatalog(.init(tracks: [])), priors: models.priors, seed: 42)
        return SoundtrackService(store: store, engine: engine.with(community: community), logger: logger)
    }

    /// A service opened on the database at `path` as `serve` opens it: its community model loaded
    /// (and written when it was rebuilt from the log).
    static func service(path: String, logger: Logger) throws -> SoundtrackService {
        let store = try Store(path: path, durable: false)
        let loaded = try store.loadCommunity(write: true)
        return try service(store: store, community: SharedCommunity(loaded.model, seq: loaded.seq, forgotten: loaded.forgotten), logger: logger)
    }

    /// A catalog track id (for feedback events).
    var track: String {
        get throws { try service.store.allTracks()[7].id }
    }
}

/// Example documents.
enum Doc {
    static func snapshot(user: String, at: String = "2026-03-14T07:42:10+01:00", lat: Double = 42.0267, place: String = "library") -> String {
        """
        {"user": "\(user)", "at": "\(at)",
         "location": {"lat": \(lat), "lon": -93.6465, "accuracy_m": 12, "speed_mps": 1.4, "place": "\(place)"},
         "weather": {"temp_c": 3.5, "cloud_pct": 80, "condition": "rain"},
         "calendar": {"events": [{"title": "Confidential oncology appointment", "start": "2026-03-14T07:30:00+01:00", "end": "2026-03-14T09:00:00+01:00"}]},
         "bluetooth": {"devices": [{"name": "Ana's secret AirPods", "kind": "headphones"}]},
         "motion": {"activity": "stationary", "heart_rate_bpm": 64},
         "tags": {"mood": "focused"}}
        """
    }

    static func event(id: String, user: String, track: String, signal: String = "like", pickId: String? = nil, snapshot: Bool = false) -> String {
        var s = #"{"id": "\#(id)", "user": "\#(user)", "at": "2026-03-14T07:45:02+01:00", "track": "\#(track)", "signal": "\#(signal)""#
        if let pickId { s += #", "pick_id": "\#(pickId)""# }
        if snapshot { s += ", \"snapshot\": " + Self.snapshot(user: user) }
        return s + "}"
    }
}

extension TestClientProtocol {
    /// Sends a request with an optional key and JSON body.
    func send(_ method: HTTPRequest.Method, _ uri: String, key: String? = nil, body: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let key { headers[.authorization] = "Bearer \(key)" }
        return try await execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
    }
}

extension TestClient {
    /// Sends a request with an optional key and JSON body over this connection.
    func send(_ method: HTTPRequest.Method, _ uri: String, key: String? = nil, body: String? = nil) async throws -> TestClient.Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let key { headers[.authorization] = "Bearer \(key)" }
        let request = TestClient.Request(uri, method: method, authority: "localhost", headers: headers, body: body.map { ByteBuffer(string: $0) })
        return try await execute(request)
    }
}

extension TestClient.Response {
    var json: JSONValue { (try? JSONParser.parse(String(buffer: body ?? ByteBuffer()))) ?? .null }
}

extension TestResponse {
    var text: String { String(buffer: body) }
    var json: JSONValue { (try? JSONParser.parse(text)) ?? .null }

    /// `error.code` of an error body.
    var errorCode: String? { json["error"]?["code"]?.stringValue }
    /// `error.field` of an error body.
    var errorField: String? { json["error"]?["field"]?.stringValue }
}

extension JSONValue {
    subscript(index: Int) -> JSONValue? {
        if case let .array(items) = self, items.indices.contains(index) { return items[index] }
        return nil
    }

    var stringValue: String? {
        if case let .string(s) = self { return s }
        return nil
    }

    var numberValue: Double? {
        if case let .number(n) = self { return n }
        return nil
    }

    var arrayCount: Int? {
        if case let .array(items) = self { return items.count }
        return nil
    }
}
