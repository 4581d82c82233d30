import Foundation
import SoundtrackProviders
import SoundtrackRules

/// Everything `soundtrack serve` can be told: where to listen, limits, and the clock.
///
/// The executable fills it from the command line and the environment; tests build one in code.
///
/// ```swift
/// var config = ServerConfiguration()
/// config.port = 0                        // an ephemeral port
/// config.userRate = .init(perSecond: 5, burst: 5)
/// ```
public struct ServerConfiguration: Sendable {
    /// The address to bind (loopback by default; put a TLS proxy in front on the internet).
    public var host: String = "127.0.0.1"
    /// The TCP port (0: an ephemeral port).
    public var port: Int = 8080
    /// The largest request body accepted, in bytes (larger: 413 `payload_too_large`).
    public var maxBodyBytes: Int = 1 << 20
    /// The most feedback events in one `POST /v1/feedback` batch.
    public var maxBatchEvents: Int = 1000
    /// The rate limit of each user key.
    public var userRate = RateLimit(perSecond: 50, burst: 100)
    /// The rate limit of each admin key.
    public var adminRate = RateLimit(perSecond: 2000, burst: 4000)
    /// How long an API key lookup is cached (seconds): a key revoked by the CLI stops working within this time.
    public var keyCacheSeconds: Double = 5
    /// The most writes the committer gathers before the picks among them are due, whatever
    /// ``pickCommitDelay`` says (group commit).
    public var maxWriteBatch: Int = 16384
    /// About how many writes one transaction commits once picks are due: a second of picks goes
    /// in several transactions, all of a user's writes in the same one (so a user's state is still
    /// written once), and feedback, which never waits behind other users' queued picks
    /// (``GroupCommitter``), waits at most for the one under way: about 50 ms, where a second of
    /// picks in one transaction held it back for up to half a second.
    public var pickCommitChunk: Int = 512
    /// The most writes waiting for the committer: past this, requests wait before they change
    /// anything (back-pressure), so a committer that falls behind slows picks down instead of
    /// piling up memory.
    public var maxQueuedWrites: Int = 32768
    /// How long the committer may hold picks back to commit more of them at once, when no feedback
    /// waits for its commit (feedback is committed at once, with the picks queued before it).
    /// Each transaction rewrites every index and session page it touches, however many rows
    /// changed on it, so bigger transactions cost less per pick; a crash loses at most this much
    /// of the last picks (never acknowledged feedback). 0 commits picks as soon as possible.
    public var pickCommitDelay: Duration = .milliseconds(1000)
    /// How often the users' states are checkpointed: feedback commits its rows and events alone
    /// (the durable record), and each user's changed state (bins, weights, session) is written at
    /// the next checkpoint or with the user's next pick, whichever comes first. A crash loses no
    /// acknowledged event: a state behind its events is brought up to date when it is next loaded.
    public var viewCheckpointInterval: Duration = .seconds(5)
    /// After this many feedback events a checkpoint of the users' states runs before the interval is up.
    public var viewCheckpointEvents: Int = 20_000
    /// How often the checkpoint thread copies the WAL back into the database file. Pages the
    /// committer rewrites in that time are copied once; the WAL grows by what is written meanwhile.
    public var checkpointInterval: Duration = .milliseconds(100)
    /// The WAL size (in 4 KiB frames) past which a checkpoint holds the committer back to let the
    /// WAL start over (the passive ones cannot while the committer keeps writing): bounds the WAL file.
    public var checkpointRestartFrames: Int = 20_000
    /// SQLite's page cache of the write connection, in KiB (the committer touches the picks' and
    /// sessions' index pages all over the file; SQLite's default is 2,000 KiB).
    public var writeCacheKiB: Int = 65536
    /// The nice value the commit and checkpoint threads add to their priority (Linux; 0, the
    /// default, leaves them at the priority of the thread that starts them). With 10, when both
    /// cores are busy the scheduler runs the threads that answer requests first and the committer in
    /// the gaps: at 10,000 picks/s the p99 was lower in 12 of 14 paired load-test runs (by about
    /// 1 ms). But past what the cores can serve the committer then starves, its queue fills and
    /// back-pressure holds every pick: at saturation the p99 went to 110, 130 and 489 ms in 3 of
    /// 13 runs (7.9–12.4 ms in 6 runs at 0). Only for a service that is never driven past its capacity.
    public var backgroundNice: Int32 = 0
    /// How long a connection may stay without a complete request part: an idle keep-alive
    /// connection, or one whose request head arrives slower than this (a slowloris), is closed.
    public var idleTimeout: Duration = .seconds(30)
    /// The most time a request body may take to arrive, from the handler's first read of it
    /// (408 `request_timeout` past it, and the connection is closed): a slow uploader cannot hold
    /// a connection, or the shutdown, for longer.
    public var bodyTimeout: Duration = .seconds(20)
    /// After SIGTERM, how long `/readyz` answers 503 while the service still accepts connections
    /// (so that a load balancer stops sending requests first); then the listener closes.
    public var shutdownDelay: Duration = .seconds(1)
    /// After the listener closes, the most time the requests in flight get to finish; past it they
    /// are cut off (answered 503 `unavailable` if the client still listens, never acknowledged).
    /// Queued writes are committed either way.
    public var drainTimeout: Duration = .seconds(10)
    /// How the service learns the blend of the track ranker again from its feedback, in the
    /// background (``BlendRefit``); `nil` (`serve --no-fit`): never, the blend in use stays.
    public var blendRefit: BlendRefit? = BlendRefit()
    /// How often the service looks whether a refit is due: ``BlendRefit/every`` new queries, or
    /// ``blendRefitMaxAge`` since the last attempt with ``blendRefitMinimum`` new queries or more.
    public var blendRefitInterval: Duration = .seconds(60)
    /// The longest time between two refits while new queries come (at least ``blendRefitMinimum``).
    public var blendRefitMaxAge: Duration = .seconds(24 * 3600)
    /// The fewest new queries that make a refit due once ``blendRefitMaxAge`` has passed.
    public var blendRefitMinimum: Int = 50
    /// How often the service looks whether another process forgot someone (`soundtrack users
    /// forget` beside it), whose events its community model then still counts: the model is counted
    /// again from the feedback log in the background (``CommunityRecountService``). A forget through
    /// the service starts that at once.
    public var communityRecountInterval: Duration = .seconds(10)
    /// Clocks: wall time for records, and a monotonic one (seconds) for rate limits and latencies.
    public var clock: ServerClock = .system
    /// Makes the id of a new listening session (`POST /v1/sessions`): unguessable by default (a
    /// random UUID, as joining an invitation names the session); tests pass a counter.
    public var sessionIDs: @Sendable () -> String = { UUID().uuidString.lowercased() }
    /// Fills the weather and calendar sections a snapshot lacks before each pick (`serve --enrich`);
    /// the pick then carries the `enriched` list. `nil`: snapshots are used as sent.
    public var enricher: SnapshotEnricher?
    /// Searches Spotify for an onboarding's song outside the catalog (`POST /v1/users/{id}/onboard`);
    /// `nil`: only catalog songs are accepted.
    public var spotify: SpotifyClient?

    /// A configuration with the defaults.
    public init() {}
}

/// A token bucket: `perSecond` tokens refill per second, up to `burst`.
public struct RateLimit: Sendable, Equatable {
    /// Sustained requests per second.
    public var perSecond: Double
    /// Requests allowed at once after a quiet period.
    public var burst: Double

    /// Creates a limit.
    public init(perSecond: Double, burst: Double) {
        self.perSecond = perSecond
        self.burst = burst
    }
}

/// The server's time sources, injected so tests control them.
public struct ServerClock: Sendable {
    /// Wall-clock time (key creation, user creation).
    public var now: @Sendable () -> Date
    /// Monotonic seconds (rate limits, key cache expiry).
    public var monotonic: @Sendable () -> Double

    /// Creates a clock from two functions.
    public init(now: @escaping @Sendable () -> Date, monotonic: @escaping @Sendable () -> Double) {
        self.now = now
        self.monotonic = monotonic
    }

    /// The system's clocks.
    public static var system: ServerClock {
        let origin = ContinuousClock.now
        return ServerClock(
            now: { Date() },
            monotonic: {
                let d = ContinuousClock.now - origin
                return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
            })
    }
}
