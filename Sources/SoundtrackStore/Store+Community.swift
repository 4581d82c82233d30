import Foundation
import GRDB
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import Synchronization

/// A ``Community`` as a process loads it from the database: the model, and the feedback row up
/// to which it counts every row.
public struct LoadedCommunity: Sendable {
    /// The model (its rows read from the database as they are needed).
    public var model: Community
    /// Every feedback row up to this rowid is counted in the model.
    public var seq: Int64
    /// Feedback rows counted again because the stored model did not hold them yet (the tail).
    public var tail: Int
    /// Whether the model was rebuilt from the whole log (a database without a stored model).
    public var rebuilt: Bool
    /// How many people the store had forgotten when the model was counted (``Store/forgottenCount()``).
    public var forgotten: Int64 = 0
}

extension Store {
    /// Loads the community model of what all users taught (docs/architecture.md, "The community
    /// model"): what every pick needs of it at once (every track's counts, the most liked, the
    /// scale) from the `community` row, the rest row by row as picks need it, and the feedback rows
    /// after the stored model's `seq` (the tail: events applied since the model was last written,
    /// by a process killed before it wrote, or by a command that does not write it) counted again
    /// in the contexts their rows keep. A database without a stored model (written by an earlier
    /// version) has it rebuilt from the whole log once.
    /// - Parameters:
    ///   - write: write the model when it was rebuilt or had a tail (a process that holds the
    ///     writer lock, or any process for a rebuild, so that it happens once).
    ///   - keepRows: keep the co-occurrence rows once read (a process that picks for many people
    ///     and many times); a one-shot process reads each once and keeps none.
    /// - Throws: ``StoreError`` for a stored value that does not read; database errors.
    public func loadCommunity(write: Bool, keepRows: Bool = true) throws -> LoadedCommunity {
        let index = try catalogIndex.get { try database.read { try Self.loadCatalogIndex($0) } }
        var storedSeq: Int64?
        var counted: LogShape?
        var loaded = try database.read { db -> LoadedCommunity in
            let forgotten = try Self.forgottenCount(db)
            guard let header = try Self.communityHeader(db), let path else {
                var model = Community()
                let seq = try Self.count(db, into: &model, after: 0, index: index)
                counted = try LogShape(db)
                return LoadedCommunity(model: model, seq: seq, tail: 0, rebuilt: true, forgotten: forgotten)
            }
            storedSeq = header.seq
            let base = try StoredCommunity(path: path, keepsRows: keepRows, statementCounter: statementCounter)
            var model = Community(header: header.header, base: base)
            let seq = try Self.count(db, into: &model, after: header.seq, index: index)
            return LoadedCommunity(model: model, seq: seq, tail: model.changed.events, rebuilt: false, forgotten: forgotten)
        }
        if (write || loaded.rebuilt) && (loaded.rebuilt || loaded.tail > 0) && path != nil {
            // Written only over the stored model it was read from (another process may have written one meanwhile).
            let wrote = try database.write { db -> Bool in
                guard try Self.communityHeader(db)?.seq == storedSeq else { return false }
                // A rebuild counted the log as it was: not written when a forget took rows out of
                // it meanwhile (the next process rebuilds again).
                if let counted, try LogShape(db) != counted { return false }
                try Self.writeCommunity(db, loaded.model, seq: loaded.seq)
                return true
            }
            if wrote { loaded.model.markWritten() }
        }
        return loaded
    }

    /// Writes what changed in a process's model, as the new stored model counting every feedback
    /// row up to the newest, when the process counted every row written since the model's
    /// ``SharedCommunity/seq`` (it was loaded or last written then) and the stored model is still
    /// the one of that `seq`: no other process applied feedback or wrote the model meanwhile, and
    /// no user was forgotten. Otherwise nothing is written and the changes stay for the next attempt; the next
    /// process to load the model counts the rows after the stored `seq` again.
    /// - Returns: the new `seq`, or `nil` when the model was not written.
    @discardableResult
    public func checkpointCommunity(_ community: SharedCommunity) throws -> Int64? {
        let seq = community.seq
        guard seq >= 0, path != nil else { return nil }
        let model = community.takeChanges()
        do {
            let written = try database.write { db -> Int64? in
                let rows = try Int.fetchOne(db, sql: "SELECT count(*) FROM feedback WHERE rowid > ?", arguments: [seq]) ?? 0
                guard rows == model.changed.events, try Self.communityHeader(db)?.seq ?? -1 == seq || model.changed.events == 0 else {
                    return nil
                }
                let newest = try Int64.fetchOne(db, sql: "SELECT max(rowid) FROM feedback") ?? 0
                guard model.changed.events > 0 else { return seq }
                try Self.writeCommunity(db, model, seq: newest)
                return newest
            }
            if let written { community.seq = written } else { community.restore(model.changed) }
            return written
        } catch {
            community.restore(model.changed)
            throw error
        }
    }

    /// The stored model's header and `seq`, `nil` when there is none.
    static func communityHeader(_ db: Database) throws -> (header: Community.Header, seq: Int64)? {
        guard let r = try Row.fetchOne(db, sql: "SELECT seq, version, max_likes, max_raters, stats, top FROM community WHERE id = 1") else {
            return nil
        }
        let statsBlob: Data = r["stats"], topBlob: Data = r["top"]
        let header = Community.Header(
            stats: CommunityCoding.decode(stats: statsBlob), top: CommunityCoding.decode(rows: topBlob), maxLikes: r["max_likes"],
            maxRaters: r["max_raters"], version: UInt64(bitPattern: r["version"]))
        return (header, r["seq"])
    }

    /// Counts the feedback rows after `seq` into `model`, in the order applied: the track by its
    /// row in the catalog index, like or dislike as the signal says, and the context the row keeps
    /// (rows of an earlier version keep none: the features of the pick the event answers, named
    /// through the user's vocabulary; an event without a pick counts in no context). Events of
    /// tracks no longer in the catalog are skipped.
    /// - Parameters:
    ///   - limit: count at most this many rows (the next ones after the returned rowid).
    ///   - ids: called with each row's rowid and event id (`nil`: ids are not read).
    /// - Returns: the newest feedback rowid (`seq` when there is no row after it).
    static func count(
        _ db: Database, into model: inout Community, after seq: Int64, index: CatalogIndex, limit: Int? = nil,
        ids: ((Int64, String) -> Void)? = nil
    ) throws -> Int64 {
        var vocabularies: [String: FeatureVocabulary] = [:]
        var newest = seq
        let rows = try RawStatement(
            db,
            """
            SELECT f.rowid, f.user_id, f.track_id, f.signal, f.rating, f.context, p.features, p.mask, u.rowid, u.place_names, u.tag_names, f.id
            FROM feedback f JOIN users u ON u.id = f.user_id LEFT JOIN picks p ON p.id = f.pick_id
            WHERE f.rowid > \(seq)
            ORDER BY f.rowid\(limit.map { " LIMIT \($0)" } ?? "")
            """)
        while try rows.step() {
            newest = rows.int64(0)
            ids?(newest, rows.text(11))
            guard let row = index.row(of: rows.text(2)), let signal = Signal(rawValue: rows.text(3)) else { continue }
            let rating: Int? = rows.isNull(4) ? nil : rows.int(4)
            let user = rows.text(1)
            var attributes: [UInt64] = []
            if !rows.isNull(5) {
                attributes = CommunityCoding.decode(attributes: rows.bytes(5))
            } else if !rows.isNull(6), !rows.isNull(7) {
                let values = rows.floats(6)
                if values.count == FeatureLayout.dimension, let mask = VectorCoding.decode(mask: rows.bytes(7), count: values.count) {
                    let vocabulary: FeatureVocabulary
                    if let v = vocabularies[user] {
                        vocabulary = v
                    } else {
                        vocabulary = try Self.decodeUserLists(row: rows.int64(8), placeNames: rows.text(9), tagNames: rows.text(10), mergedInto: "[]").0
                        vocabularies[user] = vocabulary
                    }
                    attributes = ContextAttributes.of(FeatureVector(values: values, mask: mask), vocabulary: vocabulary)
                }
            }
            model.record(
                user: user, row: row, like: signal.isLike(rating: rating), dislike: signal.isDislike(rating: rating), attributes: attributes)
        }
        return newest
    }

    /// Writes a model's changes (rows, people, attributes) and its header with `seq`.
    static func writeCommunity(_ db: Database, _ model: Community, seq: Int64) throws {
        let header = model.header
        try db.execute(
            sql: """
                INSERT INTO community (id, seq, version, max_likes, max_raters, stats, top) VALUES (1, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET seq = excluded.seq, version = excluded.version, max_likes = excluded.max_likes,
                    max_raters = excluded.max_raters, stats = excluded.stats, top = excluded.top
                """,
            arguments: [
                seq, Int64(bitPattern: header.version), header.maxLikes, header.maxRaters, Data(CommunityCoding.encode(stats: header.stats)),
                Data(CommunityCoding.encode(rows: header.top))
            ])
        let liked = try RawStatement(db, cached: "INSERT OR REPLACE INTO community_co_liked (row, co) VALUES (?, ?)")
        let rated = try RawStatement(db, cached: "INSERT OR REPLACE INTO community_co_rated (row, co) VALUES (?, ?)")
        let contexts = try RawStatement(db, cached: "INSERT OR REPLACE INTO community_contexts (row, contexts) VALUES (?, ?)")
        for row in model.changed.rows.sorted() {
            let r = model.record(ofRow: row)
            for (statement, blob) in [
                (liked, CommunityCoding.encode(co: r.coLiked)), (rated, CommunityCoding.encode(co: r.coRated)),
                (contexts, CommunityCoding.encode(contexts: r.contexts))
            ] {
                try statement.bind(1, row)
                try statement.bind(2, blob: blob)
                try statement.execute()
            }
        }
        // A person forgotten meanwhile is not written back (the forget also dropped the stored model).
        let person = try RawStatement(
            db, cached: "INSERT OR REPLACE INTO community_people (user_id, liked, rated) SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM users WHERE id = ?)")
        for user in model.changed.people.sorted() {
            let w = model.windows(of: user)
            try person.bind(1, user)
            try person.bind(2, blob: CommunityCoding.encode(rows: w.liked))
            try person.bind(3, blob: CommunityCoding.encode(rows: w.rated))
            try person.bind(4, user)
            try person.execute()
        }
        let top = try RawStatement(db, cached: "INSERT OR REPLACE INTO community_tops (attribute, rows) VALUES (?, ?)")
        for attribute in model.changed.attributes.sorted() {
            try top.bind(1, Int64(bitPattern: attribute))
            try top.bind(2, blob: CommunityCoding.encode(rows: model.top(of: attribute)))
            try top.execute()
        }
    }

    /// Deletes what the stored model counted of a person about to be forgotten, in `db`'s
    /// transaction (before their feedback goes): the header (every track's counts), the
    /// attributes' most liked, and the rows of every track they reacted to. A person adds to a
    /// track's co-occurrences and contexts only for tracks they reacted to, so no other row holds
    /// anything of theirs; a track only they liked would otherwise keep its row through any
    /// rebuild, which writes the rows of the tracks that still have events. The next process that
    /// ranks rebuilds the model from the feedback that remains, and a running service counts its
    /// own again (``forgottenCount()`` moves; docs/architecture.md, "The community model"); the
    /// other people's pairing windows are theirs and stay.
    /// - Parameter index: the catalog's index (read from `db` when not given).
    static func dropCommunity(_ db: Database, forgetting user: String, index: CatalogIndex? = nil) throws {
        let index = try index ?? loadCatalogIndex(db)
        let tracks = try String.fetchAll(db, sql: "SELECT DISTINCT track_id FROM feedback WHERE user_id = ?", arguments: [user])
        let rows = Set(tracks.compactMap { index.row(of: $0) }).sorted()
        try db.execute(sql: "DELETE FROM community; DELETE FROM community_tops")
        // Counted, so that a running process whose model counts the person (a service, whichever
        // process forgot them) knows to count its model again (``recountCommunity(idsAfter:slice:stop:)``).
        try db.execute(
            sql: """
                INSERT INTO store_settings (name, value) VALUES ('forgotten_people', '1')
                ON CONFLICT(name) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
                """)
        for table in ["community_co_liked", "community_co_rated", "community_contexts"] {
            let delete = try db.cachedStatement(sql: "DELETE FROM \(table) WHERE row = ?")
            for row in rows { try delete.execute(arguments: [row]) }
        }
    }

    /// How many people the store has forgotten (``forget(user:)``, and the HTTP service's forgets):
    /// a long-running process whose community model was counted before the last of them counts it
    /// again (the model counts the forgotten person's events).
    public func forgottenCount() throws -> Int64 {
        try database.read { db in try Self.forgottenCount(db) }
    }

    static func forgottenCount(_ db: Database) throws -> Int64 {
        try String.fetchOne(db, sql: "SELECT value FROM store_settings WHERE name = 'forgotten_people'").flatMap { Int64($0) } ?? 0
    }

    /// The model counted again from the whole feedback log as it now is, for a long-running process
    /// that replaces the model it holds after a forget (``SharedCommunity/replace(with:forgotten:counted:)``):
    /// the same model as a process opening the database then rebuilds, read `slice` rows at a time,
    /// each slice in a read transaction of its own, so that no checkpoint of the log (a forget's,
    /// which empties it) waits for the whole count. Rows deleted by a forget during the count may
    /// be counted: the caller compares ``forgottenCount()`` before and after and counts again when
    /// it moved. Nothing is written.
    /// - Parameters:
    ///   - idsAfter: the ids of the events counted whose rowid is above this one are returned (the
    ///     events the process recorded itself since it began, to tell which of those the count has).
    ///   - stop: asked between slices; when it says so, the count is given up and `nil` returned.
    /// - Returns: the model and the ids; `nil` when stopped.
    public func recountCommunity(
        idsAfter: Int64, slice: Int = 2_000, stop: () -> Bool = { false }
    ) throws -> (model: Community, ids: Set<String>)? {
        let index = try catalogIndex.get { try database.read { try Self.loadCatalogIndex($0) } }
        var model = Community()
        var ids = Set<String>()
        var seq: Int64 = 0
        while true {
            if stop() { return nil }
            let (newest, rows) = try database.read { db -> (Int64, Int) in
                var rows = 0
                let newest = try Self.count(db, into: &model, after: seq, index: index, limit: slice) { rowid, id in
                    rows += 1
                    if rowid > idsAfter { ids.insert(id) }
                }
                return (newest, rows)
            }
            seq = newest
            if rows < slice { return (model, ids) }
        }
    }

    /// The model rebuilt from the whole feedback log (``count(_:into:after:index:limit:ids:)`` from the
    /// start), without reading or writing the stored one: what tests compare a stored model with.
    public func rebuildCommunity() throws -> Community {
        let index = try catalogIndex.get { try database.read { try Self.loadCatalogIndex($0) } }
        return try database.read { db in
            var model = Community()
            _ = try Self.count(db, into: &model, after: 0, index: index)
            return model
        }
    }
}

/// The feedback log's size and newest row: what a rebuild of the community model counted, compared
/// again before the rebuilt model is written.
struct LogShape: Equatable {
    var rows: Int
    var newest: Int64

    init(_ db: Database) throws {
        let r = try Row.fetchOne(db, sql: "SELECT count(*), coalesce(max(rowid), 0) FROM feedback")
        rows = r?[0] ?? 0
        newest = r?[1] ?? 0
    }
}

/// The rows of a stored community model, read as a process needs them over a read-only connection
/// of its own (the engine reads them inside other transactions): contexts and tops kept once
/// read, co-occurrence rows kept only by a process that asks for it (``keepsRows``).
final class StoredCommunity: CommunityBase, Sendable {
    private let reader: DatabaseQueue
    private let cache = Mutex(Cache())

    private struct Cache {
        var contexts: [Int: PackedContexts] = [:]
        /// The co-occurrence rows' bytes, for a process that keeps them (``keepsRows``).
        var likedBytes: [Int: [UInt8]] = [:]
        var ratedBytes: [Int: [UInt8]] = [:]
        var tops: [UInt64: [Int]?] = [:]
    }

    /// Whether co-occurrence rows are kept once read (a process that picks for many people and
    /// many times) or read again each time (a one-shot process, which reads each once).
    let keepsRows: Bool

    init(path: String, keepsRows: Bool = true, statementCounter: StatementCounter? = nil) throws {
        self.keepsRows = keepsRows
        var config = Configuration()
        config.readonly = true
        // The co-occurrence lists of a person's tracks are megabytes of overflow pages: read through
        // a memory map instead of a `pread` a page (a one-shot pick on a million-event database,
        // 85 → 74 ms; issue 40). As large as SQLite allows (it caps the size at its build's
        // maximum, 2 GB on Linux): a database grows past 1 GB at about a million events.
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA mmap_size = 1099511627776")
            statementCounter?.install(on: db)
        }
        reader = try DatabaseQueue(path: path, configuration: config)
    }

    private func blob(_ sql: String, _ key: Int64) -> Data? {
        // Outside a transaction: one statement reads one consistent row (a transaction of its own
        // cost two statements more for each of a pick's 200 candidates).
        (try? reader.inDatabase { db in try Data.fetchOne(db, sql: sql, arguments: [key]) }) ?? nil
    }

    func coLiked(_ row: Int) -> CoOccurrences? { coOccurrences(row, liked: true) }

    func coRated(_ row: Int) -> CoOccurrences? { coOccurrences(row, liked: false) }

    /// A row as the model loads it for its writes (once a row), read as picks read it.
    private func coOccurrences(_ row: Int, liked: Bool) -> CoOccurrences? {
        var out: CoOccurrences?
        withCoOccurrences(row, liked: liked) { out = CoOccurrences($0) }
        return out
    }

    /// Reads the row in place from SQLite's buffer: a heavy listener's rows are megabytes, read
    /// once by a one-shot process (decoded and kept, they made its pick slower; issue 40). A
    /// process that keeps rows (``keepsRows``: the service, batch, replay) keeps a copy of the
    /// bytes, and reads them from it next time.
    func withCoOccurrences(_ row: Int, liked: Bool, _ body: (PackedCoOccurrences) -> Void) {
        if keepsRows, let kept = cache.withLock({ (liked ? $0.likedBytes : $0.ratedBytes)[row] }) {
            kept.withUnsafeBytes { body(PackedCoOccurrences($0)) }
            return
        }
        let sql = liked ? "SELECT co FROM community_co_liked WHERE row = ?" : "SELECT co FROM community_co_rated WHERE row = ?"
        // Outside a transaction: one statement reads one consistent row.
        try? reader.inDatabase { db in
            let r = try RawStatement(db, cached: sql)
            try r.bind(1, Int64(row))
            // The bytes are SQLite's until the statement is reset: `r` lives until they are read.
            try withExtendedLifetime(r) {
                let bytes = try r.step() ? r.bytes(0) : UnsafeRawBufferPointer(start: nil, count: 0)
                if keepsRows {
                    let copy = [UInt8](bytes)
                    cache.withLock { c in
                        if liked { c.likedBytes[row] = copy } else { c.ratedBytes[row] = copy }
                    }
                }
                if !bytes.isEmpty { body(PackedCoOccurrences(bytes)) }
            }
        }
    }

    func contextLikes(_ row: Int, attributes: [UInt64]) -> Int32 { packedContexts(row).likes(in: attributes) }

    func contexts(_ row: Int) -> [UInt64: Int32]? { packedContexts(row).dictionary }

    /// A row's contexts, kept once read as sorted arrays (a pick reads its candidates' rows, and
    /// the service's next picks the same popular ones again).
    private func packedContexts(_ row: Int) -> PackedContexts {
        if let hit = cache.withLock({ $0.contexts[row] }) { return hit }
        let packed = PackedContexts(blob("SELECT contexts FROM community_contexts WHERE row = ?", Int64(row)) ?? Data())
        cache.withLock { $0.contexts[row] = packed }
        return packed
    }

    func contextTop(_ attribute: UInt64) -> [Int]? {
        if let hit = cache.withLock({ $0.tops[attribute] }) { return hit }
        let value = blob("SELECT rows FROM community_tops WHERE attribute = ?", Int64(bitPattern: attribute)).map(CommunityCoding.decode(rows:))
        cache.withLock { $0.tops[attribute] = value }
        return value
    }

    func person(_ user: String) -> (liked: [Int], rated: [Int])? {
        let row = try? reader.read { db in try Row.fetchOne(db, sql: "SELECT liked, rated FROM community_people WHERE user_id = ?", arguments: [user]) }
        guard let row, let r = row as Row? else { return nil }
        return (CommunityCoding.decode(rows: r["liked"] as Data), CommunityCoding.decode(rows: r["rated"] as Data))
    }
}

/// A row's like events by context attribute as sorted arrays, read from its stored layout
/// (``CommunityCoding``: attribute UInt64, likes Int32, by attribute).
struct PackedContexts: Sendable {
    let attributes: [UInt64]
    let likes: [Int32]

    init(_ data: Data) { (attributes, likes) = CommunityCoding.decode(contexts: data) }

    /// As a dictionary, what the model loads for its writes.
    var dictionary: [UInt64: Int32] { Dictionary(uniqueKeysWithValues: zip(attributes, likes)) }

    /// `Σ_{a ∈ query}` the likes of attribute `a` (0 for one it does not have).
    func likes(in query: [UInt64]) -> Int32 {
        var sum: Int32 = 0
        for a in query {
            var lo = 0, hi = attributes.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if attributes[mid] < a { lo = mid + 1 } else { hi = mid }
            }
            if lo < attributes.count, attributes[lo] == a { sum += likes[lo] }
        }
        return sum
    }
}
