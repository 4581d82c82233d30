import Foundation
import Logging
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackEvaluation
import SoundtrackRules
import SoundtrackStore

/// `eval ratings --through-store`: each fold through a new database file and the code the commands
/// run, as a user would meet the engine: `catalog import` of the items, the users added, `replay
/// --no-fit` of the training log (with the community model, as `replay` opens the database), `batch --read-only --top 100` of the test pairs' snapshots (the
/// models' blend); then the refit `replay` makes at its end (``BlendRefit``) and, when it promoted a
/// blend, the same batch again in a new process's way (the database opened afresh, its blend in
/// use). The database is deleted after the fold.
public struct RatingsThroughStore: RatingsEngineRun {
    /// The model files.
    public let models: Models
    /// The engine's seed.
    public let seed: UInt64
    /// Tracks a pick ranks (`batch --top`).
    public let top: Int
    /// Where the databases are made.
    public let directory: URL

    /// A run with the models and seed the commands would use.
    public init(models: Models, seed: UInt64, top: Int = 100, directory: URL = FileManager.default.temporaryDirectory) {
        var models = models
        models.config.exploration = 0
        self.models = models
        self.seed = seed
        self.top = top
        self.directory = directory
    }

    public func rank(_ fold: RatingsFold) throws -> RatingsRankings {
        let dir = directory.appendingPathComponent("soundtrack-ratings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("ratings.sqlite").path
        let now = Date(timeIntervalSince1970: 1_704_067_200)
        try learn(fold, path: path, now: now)
        let queries = Self.jsonLines(fold.queries.map { $0.json() })
        let shipped = try pick(queries, count: fold.queries.count, path: path)
        let service = try open(path)
        let refit = BlendRefit()
        guard let outcome = try refit.runIfDue(service.store, current: service.engine.ranker, at: now) else {
            return RatingsRankings(shipped: shipped, learned: shipped, decision: nil)
        }
        let learned = outcome.decision.promoted ? try pick(queries, count: fold.queries.count, path: path) : shipped
        return RatingsRankings(shipped: shipped, learned: learned, decision: outcome.decision)
    }

    /// A new database with the fold's catalog and users, and its log replayed (no refit).
    func learn(_ fold: RatingsFold, path: String, now: Date) throws {
        let service = try open(path)
        let catalog = Self.jsonLines(
            fold.tracks.map { t in
                .object([("track_id", .string(t.id)), ("title", .string(t.title)), ("artist", .string(t.artist)), ("genres", .array(t.genres.map { .string($0) }))])
            })
        _ = try service.store.importCatalog(data: catalog, format: .jsonLines)
        for user in fold.users { try service.store.addUser(NewUser(id: user), at: now) }
        var options = ReplayOptions()
        options.now = now
        options.refit = nil
        let log = Self.jsonLines(fold.events.map { $0.json() })
        var rejected: [LineError] = []
        // `replay` in a new process: the database opened with its community model.
        _ = try ReplayRunner(service: try open(path, community: true), options: options).run(read: Self.reader(log), reject: { rejected.append($0) })
        if let first = rejected.first { throw first }
    }

    /// One read-only pick a query, as `batch --read-only --top` makes them in a new process: the
    /// ranked track ids of each (an empty list for a rejected line).
    func pick(_ queries: Data, count: Int, path: String) throws -> [[String]] {
        let service = try open(path, community: true)
        var options = BatchOptions()
        options.learn = false
        options.top = top
        var out = Data()
        _ = try BatchRunner(service: service, options: options).run(
            read: Self.reader(queries), write: { parts in for p in parts { out.append(contentsOf: p) } }, reject: { _ in })
        var lists = [[String]](repeating: [], count: count)
        for (i, line) in out.split(separator: UInt8(ascii: "\n")).enumerated() where i < count {
            let pick = try JSONParser.parse(Data(line))
            guard case let .object(pairs) = pick, let ranked = pairs.first(where: { $0.0 == "ranked" })?.1, case let .array(items) = ranked else {
                continue
            }
            lists[i] = items.compactMap { item in
                guard case let .object(p) = item, case let .string(id)? = p.first(where: { $0.0 == "id" })?.1 else { return nil }
                return id
            }
        }
        return lists
    }

    func open(_ path: String, community: Bool = false) throws -> SoundtrackService {
        try Bootstrap.open(
            path: path, models: models, seed: seed, catalogCandidates: nil, durable: false, emailKey: .key(.random()), community: community,
            writesCommunity: community, logger: Logger(label: "soundtrack.eval")
        )
        .service
    }

    static func jsonLines(_ values: [JSONValue]) -> Data {
        var out = Data()
        for v in values {
            out.append(contentsOf: v.serialized().utf8)
            out.append(UInt8(ascii: "\n"))
        }
        return out
    }

    /// A ``LineBlocks/Read`` over bytes in memory.
    static func reader(_ data: Data) -> LineBlocks.Read {
        let offset = LockedOffset()
        return { buffer in
            offset.advance(by: buffer.count, total: data.count) { start, n in
                data.withUnsafeBytes { src in buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[start..<(start + n)])) }
            }
        }
    }
}

/// How far an in-memory reader has read (reads come from the reader thread of batch).
private final class LockedOffset: @unchecked Sendable {
    private let lock = NSLock()
    private var offset = 0

    func advance(by limit: Int, total: Int, copy: (Int, Int) -> Void) -> Int {
        lock.lock()
        defer { lock.unlock() }
        let n = min(limit, total - offset)
        if n > 0 { copy(offset, n) }
        offset += max(0, n)
        return max(0, n)
    }
}
