import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

/// The contexts people reported for their snapshots: the truth of `soundtrack eval bins`.
///
/// CSV with a header naming `user`, `context` and the time as `timestamp` (Unix seconds) or `at`
/// (RFC 3339), in any order, other columns ignored: for example `context,user,at`.
public struct ContextTruth: Sendable {
    /// The context of each (user, second since 1970).
    public var contexts: [Key: String]

    /// A snapshot's key: its user and its time in whole seconds.
    public struct Key: Hashable, Sendable {
        /// The user.
        public var user: String
        /// Seconds since 1970, rounded down.
        public var second: Int64
        /// Creates a key.
        public init(user: String, second: Int64) {
            self.user = user
            self.second = second
        }
    }

    /// Parses a truth file.
    /// - Throws: ``InputError`` naming the line and the column of the first bad row.
    public static func parse(_ text: String) throws(InputError) -> ContextTruth {
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map(String.init)
        while let last = lines.last, last.trimmingCharacters(in: .whitespaces).isEmpty { lines.removeLast() }
        guard let header = lines.first else {
            throw InputError(path: "truth", expected: "a CSV header with user, context and timestamp or at", got: "an empty file")
        }
        let names = header.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard let u = names.firstIndex(of: "user"), let c = names.firstIndex(of: "context") else {
            throw InputError(path: "line 1", expected: "a header naming the columns user and context", got: "'\(header)'")
        }
        let ts = names.firstIndex(of: "timestamp"), at = names.firstIndex(of: "at")
        guard ts != nil || at != nil else {
            throw InputError(path: "line 1", expected: "a header naming a timestamp or at column", got: "'\(header)'")
        }
        var contexts: [Key: String] = [:]
        for (k, line) in lines.enumerated().dropFirst() {
            let number = k + 1
            if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.count == names.count else {
                throw InputError(path: "line \(number)", expected: "\(names.count) fields like the header", got: "\(fields.count)")
            }
            let user = fields[u], context = fields[c]
            guard !user.isEmpty else { throw InputError(path: "line \(number): user", expected: "a user id", got: "an empty field") }
            guard !context.isEmpty else { throw InputError(path: "line \(number): context", expected: "a context name", got: "an empty field") }
            let second: Int64
            if let ts, let v = Double(fields[ts]), v.isFinite {
                second = Int64(v.rounded(.down))
            } else if let at, let t = Timestamp(rfc3339: fields[at]) {
                second = Int64(t.date.timeIntervalSince1970.rounded(.down))
            } else {
                throw InputError(
                    path: "line \(number): \(ts != nil ? "timestamp" : "at")",
                    expected: ts != nil ? "Unix seconds" : "an RFC 3339 time with an offset", got: "'\(fields[ts ?? at!])'")
            }
            let key = Key(user: user, second: second)
            if let old = contexts[key], old != context {
                throw InputError(path: "line \(number): context", expected: "one context per user and time (an earlier row says '\(old)')", got: "'\(context)'")
            }
            contexts[key] = context
        }
        return ContextTruth(contexts: contexts)
    }

    /// The context of a snapshot, if the truth has one.
    public func context(of snapshot: Snapshot) -> String? {
        contexts[Key(user: snapshot.user, second: Int64(snapshot.at.date.timeIntervalSince1970.rounded(.down)))]
    }
}

/// `soundtrack eval bins`: how well a user's bins separate the contexts the user reported, beside
/// clustering baselines computed on the same snapshots (docs/evaluation.md, "Bin accuracy").
///
/// The engine makes one learning pass over the snapshots (each user's in file order, exactly as
/// `soundtrack batch` would: ``Recommender/pick(_:state:top:pickId:)`` on the user's state), and
/// each snapshot belongs to the bin its pick chose, or to the bin that bin was merged into later
/// (``UserState/resolve(bin:)``): the bins as they stand at the end. Baselines, each with the
/// engine's number of bins for that user: k-means on the engine's feature vectors (missing slots as
/// 0) and on the time of week alone (sin and cos of the hour of the day and of the hour of the
/// week), seeded; and one bin per user.
public struct BinEvaluator: Sendable {
    /// The engine whose bins are measured.
    public let engine: Recommender
    /// The seed of the k-means baselines.
    public let seed: UInt64

    /// Creates an evaluator.
    public init(engine: Recommender, seed: UInt64) {
        self.engine = engine
        self.seed = seed
    }

    /// One user's snapshots (in order) and what each clustering made of them.
    public struct UserRows: Sendable {
        /// The user.
        public var user: String
        /// The reported context of each snapshot.
        public var contexts: [String]
        /// The engine's bin (its number, after merges) of each snapshot.
        public var bins: [Int]
        /// The bin numbers as the picks named them (before merges).
        public var pickedBins: [Int]
        /// Each snapshot's feature vector, as the engine saw it.
        public var features: [[Double]]
        /// Each snapshot's time of week (sin, cos of the hour of day and of the hour of week).
        public var timeOfWeek: [[Double]]
    }

    /// Runs the learning pass and collects each user's rows.
    /// - Parameters:
    ///   - snapshots: the snapshots, each user's in time order.
    ///   - truth: the reported contexts; every snapshot must have one.
    /// - Throws: ``InputError`` naming the snapshot (1-based line) that has no context in the truth.
    public func learningPass(_ snapshots: [(line: Int, snapshot: Snapshot)], truth: ContextTruth) throws(InputError) -> [UserRows] {
        var states: [String: UserState] = [:]
        var order: [String] = []
        var rows: [String: UserRows] = [:]
        for (line, s) in snapshots {
            guard let context = truth.context(of: s) else {
                throw InputError(path: "line \(line)", expected: "a snapshot with a context in the truth file (user \(s.user), at \(s.at.rfc3339))", got: "none")
            }
            if states[s.user] == nil {
                states[s.user] = engine.newUser(s.user)
                order.append(s.user)
                rows[s.user] = UserRows(user: s.user, contexts: [], bins: [], pickedBins: [], features: [], timeOfWeek: [])
            }
            let (_, record) = engine.pick(s, state: &states[s.user]!)
            states[s.user]!.changes = UserState.Changes()
            rows[s.user]!.contexts.append(context)
            rows[s.user]!.pickedBins.append(record.binNumber)
            rows[s.user]!.features.append(zip(record.features.values, record.features.mask).map { Double($0 * $1) })
            rows[s.user]!.timeOfWeek.append(Self.timeOfWeek(s.at))
        }
        return order.map { user in
            var r = rows[user]!
            let state = states[user]!
            r.bins = r.pickedBins.map { state.resolve(bin: $0) ?? $0 }
            return r
        }
    }

    /// Sin and cos of the hour of the day and of the hour of the week (Monday 00:00 = 0).
    static func timeOfWeek(_ t: Timestamp) -> [Double] {
        let hour = t.localHour
        let week = Double(t.localWeekday) * 24 + hour
        let a = 2 * Double.pi * hour / 24, b = 2 * Double.pi * week / 168
        return [sin(a), cos(a), sin(b), cos(b)]
    }

    /// Scores the engine and the baselines on the rows of a learning pass.
    public func evaluate(_ users: [UserRows]) -> BinReport {
        var report = BinReport()
        var pooled: [String: [(bins: [Int], contexts: [String])]] = [:]
        for u in users {
            let k = Set(u.bins).count
            let clusterings: [(String, [Int])] = [
                ("engine", u.bins),
                ("engine_at_pick", u.pickedBins),
                ("one_bin", [Int](repeating: 0, count: u.contexts.count)),
                ("kmeans_features", KMeans(k: k, seed: seed).fit(u.features)),
                ("kmeans_time_of_week", KMeans(k: k, seed: seed).fit(u.timeOfWeek))
            ]
            var row = BinReport.UserRow(user: u.user, snapshots: u.contexts.count, scores: [:])
            let binNumbers = Array(Set(u.bins)).sorted(), contextNames = Array(Set(u.contexts)).sorted()
            var counts = [[Int]](repeating: [Int](repeating: 0, count: contextNames.count), count: binNumbers.count)
            for (b, c) in zip(u.bins, u.contexts) {
                counts[binNumbers.firstIndex(of: b)!][contextNames.firstIndex(of: c)!] += 1
            }
            row.contingency = (binNumbers, contextNames, counts)
            for (name, labels) in clusterings {
                let pairs = Array(zip(labels, u.contexts))
                row.scores[name] = BinReport.Score(
                    purity: Metrics.purity(pairs), nmi: Metrics.nmiArithmetic(pairs), ami: Metrics.ami(pairs), bins: Set(labels).count)
                pooled[name, default: []].append((labels, u.contexts))
            }
            report.users.append(row)
        }
        report.methods = ["engine", "engine_at_pick", "one_bin", "kmeans_features", "kmeans_time_of_week"]
        for name in report.methods {
            let total = report.users.reduce(0) { $0 + $1.snapshots }
            func weighted(_ f: (BinReport.Score) -> Double) -> Double {
                report.users.reduce(0.0) { $0 + f($1.scores[name]!) * Double($1.snapshots) } / Double(max(total, 1))
            }
            report.summary[name] = BinReport.Score(
                purity: weighted(\.purity), nmi: weighted(\.nmi), ami: weighted(\.ami),
                bins: 0, binsPerUser: Double(report.users.reduce(0) { $0 + $1.scores[name]!.bins }) / Double(max(report.users.count, 1)))
            // The share of each context's snapshots that sit in a bin where that context is the majority.
            var inOwn: [String: Int] = [:], all: [String: Int] = [:]
            for (labels, contexts) in pooled[name] ?? [] {
                var table: [Int: [String: Int]] = [:]
                for (b, c) in zip(labels, contexts) { table[b, default: [:]][c, default: 0] += 1 }
                let majority = table.mapValues { counts in counts.max { ($0.value, $1.key) < ($1.value, $0.key) }!.key }
                for (b, c) in zip(labels, contexts) {
                    all[c, default: 0] += 1
                    if majority[b] == c { inOwn[c, default: 0] += 1 }
                }
            }
            report.dominated[name] = all.keys.sorted().map { ($0, Double(inOwn[$0] ?? 0) / Double(all[$0]!)) }
        }
        return report
    }
}

/// What `soundtrack eval bins` reports: per user and pooled (weighted by snapshots), for the engine
/// and each baseline.
public struct BinReport: Sendable {
    /// Purity, NMI and AMI of one clustering, and its number of bins.
    public struct Score: Sendable {
        /// Share of snapshots whose context is their bin's majority.
        public var purity: Double
        /// Normalised mutual information (arithmetic mean of the entropies).
        public var nmi: Double
        /// Adjusted mutual information (arithmetic).
        public var ami: Double
        /// Bins (per user rows).
        public var bins: Int
        /// Mean bins per user (summary rows).
        public var binsPerUser: Double = 0
    }

    /// One user's scores by method.
    public struct UserRow: Sendable {
        /// The user.
        public var user: String
        /// The user's snapshots.
        public var snapshots: Int
        /// Scores by method name.
        public var scores: [String: Score]
        /// The engine's bins × the reported contexts: `counts[i][j]` snapshots of context
        /// `contexts[j]` in bin `bins[i]` (bins and contexts in ascending order).
        public var contingency: (bins: [Int], contexts: [String], counts: [[Int]]) = ([], [], [])
    }

    /// Method names in report order: `engine` (bins at the end of the pass), `engine_at_pick`
    /// (the bins as each pick named them, before later merges), `one_bin`, `kmeans_features`,
    /// `kmeans_time_of_week`.
    public var methods: [String] = []
    /// Per user, in the order users first appear.
    public var users: [UserRow] = []
    /// Weighted by snapshots over users.
    public var summary: [String: Score] = [:]
    /// Per method, each context's share of snapshots in a bin that context dominates.
    public var dominated: [String: [(String, Double)]] = [:]

    /// The report as a table: per user (engine against the best baseline), then the summary, then
    /// the context shares.
    public func table() -> [String] {
        func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
        func lpad(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }
        func f(_ x: Double) -> String { String(format: "%.3f", x) }
        var out: [String] = []
        out.append(
            pad("user", 16) + lpad("snapshots", 10) + lpad("bins", 6) + lpad("purity", 8) + lpad("nmi", 8) + lpad("ami", 8)
                + "   k-means on time of week: purity / ami")
        for u in users {
            let e = u.scores["engine"]!, t = u.scores["kmeans_time_of_week"]!
            out.append(
                pad(u.user, 16) + lpad("\(u.snapshots)", 10) + lpad("\(e.bins)", 6) + lpad(f(e.purity), 8) + lpad(f(e.nmi), 8)
                    + lpad(f(e.ami), 8) + "   \(f(t.purity)) / \(f(t.ami))")
        }
        out.append("")
        out.append(pad("clustering", 22) + lpad("purity", 8) + lpad("nmi", 8) + lpad("ami", 8) + lpad("bins per user", 15))
        for m in methods {
            let s = summary[m]!
            out.append(pad(m, 22) + lpad(f(s.purity), 8) + lpad(f(s.nmi), 8) + lpad(f(s.ami), 8) + lpad(String(format: "%.1f", s.binsPerUser), 15))
        }
        if let e = summary["engine"] {
            let rivals = ["kmeans_features", "kmeans_time_of_week"].compactMap { m in summary[m].map { (m, $0) } }
            if let best = rivals.max(by: { $0.1.ami < $1.1.ami }) {
                out.append(String(format: "engine vs the best baseline at equal bins (%@): purity %+.3f, ami %+.3f", best.0, e.purity - best.1.purity, e.ami - best.1.ami))
            }
        }
        out.append("")
        out.append("share of each context in a bin it dominates:")
        let contexts = (dominated["engine"] ?? []).map(\.0)
        out.append(pad("", 22) + contexts.map { lpad(String($0.prefix(9)), 10) }.joined())
        for m in methods {
            let shares = Dictionary(uniqueKeysWithValues: dominated[m] ?? [])
            out.append(pad(m, 22) + contexts.map { lpad(f(shares[$0] ?? 0), 10) }.joined())
        }
        return out
    }

    /// The report as JSON (numbers rounded to 4 decimals).
    public func json() -> JSONValue {
        func r(_ x: Double) -> JSONValue { .number((x * 10_000).rounded() / 10_000) }
        func score(_ s: Score, perUser: Bool) -> JSONValue {
            .object([
                ("purity", r(s.purity)), ("nmi", r(s.nmi)), ("ami", r(s.ami)),
                perUser ? ("bins", .number(Double(s.bins))) : ("bins_per_user", r(s.binsPerUser))
            ])
        }
        return .object([
            ("summary", .object(methods.map { ($0, score(summary[$0]!, perUser: false)) })),
            (
                "users",
                .array(
                    users.map { u in
                        .object([
                            ("user", .string(u.user)), ("snapshots", .number(Double(u.snapshots))),
                            ("scores", .object(methods.map { ($0, score(u.scores[$0]!, perUser: true)) })),
                            (
                                "engine_bins_by_context",
                                .object([
                                    ("bins", .array(u.contingency.bins.map { .string(Bin.id($0)) })),
                                    ("contexts", .array(u.contingency.contexts.map { .string($0) })),
                                    ("counts", .array(u.contingency.counts.map { .array($0.map { .number(Double($0)) }) }))
                                ])
                            )
                        ])
                    })
            ),
            ("context_in_dominated_bin", .object(methods.map { m in (m, .object((dominated[m] ?? []).map { ($0.0, r($0.1)) })) }))
        ])
    }
}

extension BinEvaluator {
    /// Parses JSON Lines of snapshots (blank lines skipped), keeping each one's line number.
    /// - Throws: ``InputError`` prefixed with the line of the first bad snapshot.
    public static func readSnapshots(_ data: Data, strict: Bool = false) throws(InputError) -> [(line: Int, snapshot: Snapshot)] {
        var out: [(line: Int, snapshot: Snapshot)] = []
        try JSONLinesRecords.forEach(data) { line, record throws(InputError) in
            out.append((line, try Snapshot.decode(bytes: record, strict: strict)))
        }
        return out
    }
}
