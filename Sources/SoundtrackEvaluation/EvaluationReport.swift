import Foundation
import SoundtrackContext

/// The metrics of one recommender (the engine or a baseline); `nil` where a metric does not apply
/// (bins for a baseline, ranking metrics online). Definitions in `docs/evaluation.md`.
public struct MetricSet: Sendable, Equatable {
    public var binHitRate: Double?
    public var precision: Double?
    public var recall: Double?
    public var ndcg: Double?
    public var map: Double?
    public var auc: Double?
    public var likeRate: Double?
    public var binSwitchesPerSession: Double?

    /// An empty set.
    public init() {}

    /// The metrics as `(json name, table name, value)`, in report order.
    func rows(k: Int) -> [(String, String, Double?)] {
        [
            ("bin_hit_rate", "bin hit rate", binHitRate), ("precision_at_k", "precision@\(k)", precision),
            ("recall_at_k", "recall@\(k)", recall), ("ndcg_at_k", "NDCG@\(k)", ndcg), ("map_at_k", "MAP@\(k)", map),
            ("auc", "AUC", auc), ("like_rate", "like rate (first pick)", likeRate),
            ("bin_switches_per_session", "bin switches / session", binSwitchesPerSession)
        ]
    }
}

/// What `soundtrack eval` reports: the protocol, the counts, the engine's metrics and the baselines'.
public struct EvaluationReport: Sendable {
    /// `random`, `chronological`, `leave-last-out`, or `online`.
    public var split: String
    public var folds: Int
    public var seed: UInt64
    public var k: Int

    /// Users, events, and how they were used.
    public struct Counts: Sendable, Equatable {
        public var users = 0
        public var events = 0
        /// Training events, summed over folds.
        public var trainEvents = 0
        /// Test events, summed over folds (online: picks answered).
        public var testEvents = 0
        /// Test events with a liked track: the queries of the ranking metrics.
        public var queries = 0
        /// Test sessions.
        public var sessions = 0
        /// The engine's bins at the end of training (mean over folds), all users together.
        public var bins = 0.0
        public init() {}
    }
    public var counts = Counts()
    public var engine = MetricSet()
    /// The engine with the blend it learns from the training part, as `replay` learns one at its
    /// end (docs/scoring.md, "Learning the blend"); in the splits where none was due or promoted,
    /// the models' blend. `nil`: not measured (online).
    public var engineLearned: MetricSet?
    /// Blends learned and promoted, of the attempts (offline: one a split where 500 or more queries
    /// came; online: one every 500 new queries).
    public var blendsPromoted = (promoted: 0, splits: 0)
    /// The baselines in ``BaselineKind`` order.
    public var baselines: [(BaselineKind, MetricSet)] = []

    /// The closed loop's extra results (`eval --online`).
    public struct Online: Sendable {
        public var days: Int
        /// Like rate of each day, for the engine and each baseline (by name).
        public var likeRateByDay: [(String, [Double])]
        /// NDCG@k of each day's lists (relevance: the person's noise-free taste), by name.
        public var ndcgByDay: [(String, [Double])] = []
        /// Like rate per ground-truth context, for the engine and each baseline (by name).
        public var likeRateByContext: [(String, [(String, Double)])]
        /// Bin purity against the ground-truth contexts (mean over users).
        public var purity: Double
        /// Normalised mutual information of bins and ground-truth contexts (mean over users).
        public var nmi: Double
        /// Mean absolute error of the picks' suggested volume against the volume the person wants
        /// in the slot's context, and of the baseline "the person's last volume" (what the phone
        /// reported in the snapshot); also over the first slot of each listening episode alone,
        /// where the context has just changed.
        public var volumeError = VolumeError()

        /// ``volumeError``'s figures.
        public struct VolumeError: Sendable, Equatable {
            public var engine = 0.0, lastVolume = 0.0
            public var engineAtStart = 0.0, lastVolumeAtStart = 0.0
            public init() {}
        }
    }
    public var online: Online?

    /// Creates an empty report.
    public init(split: String, folds: Int, seed: UInt64, k: Int) {
        self.split = split
        self.folds = folds
        self.seed = seed
        self.k = k
    }

    static func r(_ x: Double?) -> JSONValue {
        guard let x, x.isFinite else { return .null }
        return .number((x * 10000).rounded() / 10000)
    }

    /// The engine's lead over each baseline on NDCG@k and like rate: absolute (engine − baseline)
    /// and relative ((engine − baseline) / baseline; `nil` when the baseline is 0).
    public func improvements() -> [(metric: String, baseline: BaselineKind, absolute: Double, relative: Double?)] {
        var out: [(String, BaselineKind, Double, Double?)] = []
        for (name, get) in [("ndcg_at_k", \MetricSet.ndcg), ("like_rate", \MetricSet.likeRate)] {
            guard let e = engine[keyPath: get] else { continue }
            for (kind, m) in baselines {
                guard let b = m[keyPath: get] else { continue }
                out.append((name, kind, e - b, b > 0 ? (e - b) / b : nil))
            }
        }
        return out
    }

    /// The report as JSON (docs/evaluation.md, "JSON report"); numbers rounded to 4 decimals.
    public func json() -> JSONValue {
        func metrics(_ m: MetricSet) -> JSONValue { .object(m.rows(k: k).map { ($0.0, Self.r($0.2)) }) }
        var pairs: [(String, JSONValue)] = [
            ("protocol", .object([("split", .string(split)), ("folds", .number(Double(folds))), ("seed", .number(Double(seed))), ("k", .number(Double(k)))])),
            (
                "counts",
                .object([
                    ("users", .number(Double(counts.users))), ("events", .number(Double(counts.events))),
                    ("train_events", .number(Double(counts.trainEvents))), ("test_events", .number(Double(counts.testEvents))),
                    ("queries", .number(Double(counts.queries))), ("sessions", .number(Double(counts.sessions))),
                    ("bins", Self.r(counts.bins)), ("bins_per_user", Self.r(counts.users > 0 ? counts.bins / Double(counts.users) : 0))
                ])
            ),
            ("metrics", metrics(engine)),
            ("baselines", .object(baselines.map { ($0.0.rawValue, metrics($0.1)) }))
        ]
        if let engineLearned { pairs.append(("metrics_learned_blend", metrics(engineLearned))) }
        if blendsPromoted.splits > 0 {
            pairs.append(
                (
                    "blends_promoted",
                    .object([("promoted", .number(Double(blendsPromoted.promoted))), ("attempts", .number(Double(blendsPromoted.splits)))])
                ))
        }
        var imp: [(String, JSONValue)] = []
        for metric in ["ndcg_at_k", "like_rate"] {
            let rows = improvements().filter { $0.metric == metric }
            guard !rows.isEmpty else { continue }
            imp.append((metric, .object(rows.map { ($0.baseline.rawValue, .object([("absolute", Self.r($0.absolute)), ("relative", Self.r($0.relative))])) })))
        }
        pairs.append(("improvement", .object(imp)))
        if let o = online {
            pairs.append(
                (
                    "online",
                    .object([
                        ("days", .number(Double(o.days))),
                        ("like_rate_by_day", .object(o.likeRateByDay.map { ($0.0, .array($0.1.map { Self.r($0) })) })),
                        ("ndcg_by_day", .object(o.ndcgByDay.map { ($0.0, .array($0.1.map { Self.r($0) })) })),
                        ("like_rate_by_context", .object(o.likeRateByContext.map { ($0.0, .object($0.1.map { ($0.0, Self.r($0.1)) })) })),
                        ("bin_purity", Self.r(o.purity)), ("bin_nmi", Self.r(o.nmi)),
                        (
                            "volume_mae",
                            .object([
                                ("engine", Self.r(o.volumeError.engine)), ("last_volume", Self.r(o.volumeError.lastVolume)),
                                ("engine_at_episode_start", Self.r(o.volumeError.engineAtStart)),
                                ("last_volume_at_episode_start", Self.r(o.volumeError.lastVolumeAtStart))
                            ])
                        )
                    ])
                ))
        }
        return .object(pairs)
    }

    /// The report as a table for people.
    public func table() -> [String] {
        func f(_ x: Double?) -> String { x.map { String(format: "%.4f", $0) } ?? "—" }
        func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
        func lpad(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }
        var lines: [String] = []
        let proto = split == "online" ? "online (simulated users answer the picks)" : "\(split) (folds \(folds))"
        lines.append("soundtrack eval — protocol \(proto), seed \(seed), k = \(k)")
        lines.append(
            "users \(counts.users) · events \(counts.events) · train \(counts.trainEvents) · test \(counts.testEvents) · queries \(counts.queries) · test sessions \(counts.sessions) · bins \(String(format: "%.1f", counts.bins)) (\(String(format: "%.1f", counts.users > 0 ? counts.bins / Double(counts.users) : 0)) per user)"
        )
        lines.append("")
        let names = ["engine"] + (engineLearned == nil ? [] : ["engine_learned"]) + baselines.map(\.0.rawValue)
        lines.append(pad("metric", 26) + names.map { lpad($0, 16) }.joined())
        for (i, row) in engine.rows(k: k).enumerated() {
            let values = [row.2] + (engineLearned.map { [$0.rows(k: k)[i].2] } ?? []) + baselines.map { $0.1.rows(k: k)[i].2 }
            if values.allSatisfy({ $0 == nil }) { continue }
            lines.append(pad(row.1, 26) + values.map { lpad(f($0), 16) }.joined())
        }
        let imp = improvements()
        if !imp.isEmpty {
            lines.append("")
            lines.append("engine vs baselines (absolute, relative):")
            for metric in ["ndcg_at_k", "like_rate"] {
                let rows = imp.filter { $0.metric == metric }
                guard !rows.isEmpty else { continue }
                let label = metric == "ndcg_at_k" ? "NDCG@\(k)" : "like rate"
                lines.append(
                    "  " + pad(label, 11)
                        + rows.map { r in
                            let rel = r.relative.map { String(format: "%+.1f%%", $0 * 100) } ?? "n/a"
                            return "vs \(r.baseline.rawValue) \(String(format: "%+.4f", r.absolute)) (\(rel))"
                        }.joined(separator: "   "))
            }
        }
        if let o = online {
            lines.append("")
            lines.append("like rate by day:")
            lines.append(pad("day", 6) + o.likeRateByDay.map { lpad($0.0, 16) }.joined())
            for d in 0..<o.days {
                lines.append(pad("\(d + 1)", 6) + o.likeRateByDay.map { lpad(d < $0.1.count ? f($0.1[d]) : "—", 16) }.joined())
            }
            if !o.ndcgByDay.isEmpty {
                lines.append("")
                lines.append("NDCG@\(k) by day (the list of \(k) asked at every slot; relevant: what the person likes there):")
                lines.append(pad("day", 6) + o.ndcgByDay.map { lpad($0.0, 16) }.joined())
                for d in 0..<o.days {
                    lines.append(pad("\(d + 1)", 6) + o.ndcgByDay.map { lpad(d < $0.1.count ? f($0.1[d]) : "—", 16) }.joined())
                }
                let first = o.ndcgByDay.first?.1 ?? []
                if first.count >= 14 {
                    let early = first.prefix(7).reduce(0, +) / 7, late = first.suffix(7).reduce(0, +) / 7
                    lines.append(String(format: "engine NDCG@%d, first week %.4f, last week %.4f (%+.1f%%)", k, early, late, early > 0 ? (late - early) / early * 100 : 0))
                }
            }
            lines.append("")
            lines.append("like rate by ground-truth context:")
            lines.append(pad("context", 10) + o.likeRateByContext.map { lpad($0.0, 16) }.joined())
            for (i, row) in (o.likeRateByContext.first?.1 ?? []).enumerated() {
                lines.append(pad(row.0, 10) + o.likeRateByContext.map { lpad(f($0.1[i].1), 16) }.joined())
            }
            lines.append("")
            lines.append("bins against the ground-truth contexts: purity \(f(o.purity)), NMI \(f(o.nmi)) (mean over users)")
            let v = o.volumeError
            lines.append(
                "suggested volume, mean absolute error against the person's: engine \(f(v.engine)), last volume \(f(v.lastVolume)); "
                    + "at the first slot of an episode: engine \(f(v.engineAtStart)), last volume \(f(v.lastVolumeAtStart))")
        }
        return lines
    }
}

extension JSONValue {
    /// Indented JSON text (two spaces; arrays of scalars on one line), for files people diff.
    public func pretty(indent: Int = 0) -> String {
        let pad = String(repeating: "  ", count: indent + 1)
        let close = String(repeating: "  ", count: indent)
        switch self {
        case .object(let pairs):
            guard !pairs.isEmpty else { return "{}" }
            let body = pairs.map { pad + JSONValue.string($0.0).serialized() + ": " + $0.1.pretty(indent: indent + 1) }
            return "{\n" + body.joined(separator: ",\n") + "\n" + close + "}"
        case .array(let items):
            if items.allSatisfy({ if case .object = $0 { return false } else if case .array = $0 { return false } else { return true } }) {
                return serialized()
            }
            return "[\n" + items.map { pad + $0.pretty(indent: indent + 1) }.joined(separator: ",\n") + "\n" + close + "]"
        default:
            return serialized()
        }
    }
}
