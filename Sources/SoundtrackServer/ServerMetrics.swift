import Prometheus
import Synchronization

/// The service's Prometheus metrics, in a registry of its own (served at `GET /metrics`):
/// requests and latency per route, picks, bins created, bin switches, feedback, write batches.
public final class ServerMetrics: Sendable {
    /// The registry the metrics live in.
    public let registry: PrometheusCollectorRegistry
    private struct RouteKey: Hashable {
        var route: String
        var method: String
        var status: Int
    }

    private let requestCounters = Mutex<[RouteKey: Counter]>([:])
    private let latency = Mutex<[String: DurationHistogram]>([:])
    let picks: Counter
    let binsCreated: Counter
    let binSwitches: Counter
    let feedbackApplied: Counter
    let feedbackDuplicates: Counter
    let writeBatches: Counter
    let writesCommitted: Counter
    let cachedUsers: Gauge
    let commitSeconds: DurationHistogram
    let checkpoints: Counter
    let walRestarts: Counter
    let viewCheckpoints: Counter
    let viewStatesQueued: Counter
    let walPendingFrames: Gauge
    let blendRefits: Counter
    let blendVersion: Gauge
    let communityRecounts: Counter

    private static let latencyBuckets: [Duration] = [
        .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1), .seconds(2.5)
    ]

    /// Creates the metrics in a new registry.
    public init() {
        let r = PrometheusCollectorRegistry()
        registry = r
        func counter(_ name: String, _ help: String, _ labels: [(String, String)] = []) -> Counter {
            r.makeCounter(descriptor: .init(namespace: "soundtrack", metricName: name, unitName: "total", helpText: help), labels: labels)
        }
        picks = counter("picks", "Picks made (learned or read-only).")
        binsCreated = counter("bins_created", "Bins created by picks and feedback.")
        binSwitches = counter("bin_switches", "Bin switches after a dislike streak.")
        feedbackApplied = counter("feedback_events", "Feedback events committed.", [("result", "applied")])
        feedbackDuplicates = counter("feedback_events", "Feedback events committed.", [("result", "duplicate")])
        writeBatches = counter("write_batches", "Group-commit transactions.")
        writesCommitted = counter("writes_committed", "Writes (picks, feedback, forgets) committed.")
        cachedUsers = r.makeGauge(
            descriptor: .init(namespace: "soundtrack", metricName: "cached_users", unitName: "", helpText: "Users whose state is in memory."), labels: [])
        checkpoints = counter("wal_checkpoints", "WAL checkpoints run beside the committer.")
        walRestarts = counter("wal_restarts", "Checkpoints that held the committer back to let the WAL start over.")
        viewCheckpoints = counter("view_checkpoints", "Checkpoints of the users' states (feedback commits its events; the states follow).")
        viewStatesQueued = counter("view_states_written", "Users' states queued for writing by the checkpoints of the view.")
        walPendingFrames = r.makeGauge(
            descriptor: .init(
                namespace: "soundtrack", metricName: "wal_pending_frames", unitName: "",
                helpText: "WAL frames not yet copied into the database file after the last checkpoint."), labels: [])
        blendRefits = counter("blend_refits", "Attempts to learn the ranker's blend again from the feedback (promoted or not).")
        communityRecounts = counter(
            "community_recounts", "Community models counted again from the feedback log after a forget, and swapped in.")
        blendVersion = r.makeGauge(
            descriptor: .init(
                namespace: "soundtrack", metricName: "blend_version", unitName: "",
                helpText: "The version of the ranker's blend in use (0: the models' own)."), labels: [])
        commitSeconds = r.makeDurationHistogram(
            descriptor: .init(namespace: "soundtrack", metricName: "commit_duration", unitName: "seconds", helpText: "Time to commit one write batch."),
            labels: [], buckets: Self.latencyBuckets)
    }

    /// Records one request of a route (its path template, e.g. `/v1/users/{id}/bins`).
    public func request(route: String, method: String, status: Int, duration: Duration) {
        let key = RouteKey(route: route, method: method, status: status)
        let counter = requestCounters.withLock { c in
            if let x = c[key] { return x }
            let x = registry.makeCounter(
                descriptor: .init(namespace: "soundtrack", subsystem: "http", metricName: "requests", unitName: "total", helpText: "HTTP requests by route, method and status."),
                labels: [("route", route), ("method", method), ("status", String(status))])
            c[key] = x
            return x
        }
        counter.increment()
        let hkey = method + " " + route
        let histogram = latency.withLock { h in
            if let x = h[hkey] { return x }
            let x = registry.makeDurationHistogram(
                descriptor: .init(
                    namespace: "soundtrack", subsystem: "http", metricName: "request_duration", unitName: "seconds", helpText: "HTTP request latency by route and method."),
                labels: [("route", route), ("method", method)], buckets: Self.latencyBuckets)
            h[hkey] = x
            return x
        }
        histogram.record(duration)
    }

    /// The Prometheus text exposition.
    public func exposition() -> String {
        registry.emitToString()
    }
}
