import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

#if canImport(Glibc)
import Glibc
#endif

/// Latency figures of one benchmark run.
public struct LatencyStats: Sendable {
    /// Number of timed operations.
    public var count: Int
    /// Median, in microseconds.
    public var p50: Double
    /// 99th percentile, in microseconds.
    public var p99: Double
    /// Mean, in microseconds.
    public var mean: Double
    /// Slowest, in microseconds.
    public var max: Double

    /// Statistics of a sample of durations in microseconds.
    public init(_ samples: [Double]) {
        let s = samples.sorted()
        count = s.count
        func q(_ p: Double) -> Double { s.isEmpty ? 0 : s[min(s.count - 1, Int((p * Double(s.count)).rounded(.up)) - 1)] }
        p50 = q(0.5)
        p99 = q(0.99)
        mean = s.isEmpty ? 0 : s.reduce(0, +) / Double(s.count)
        max = s.last ?? 0
    }
}

/// The in-process pick benchmark: a synthetic user with many bins over a real catalog.
public enum PickBenchmark {
    /// A random but plausible snapshot: one of the day's scenes at a jittered time, with jittered sensors.
    static func randomSnapshot(user: String, rng: inout SeededGenerator, contextId: Int) -> Snapshot {
        var ctx = SeededGenerator(seed: UInt64(contextId) &* 7919 &+ 17)
        let scene = DayScenario.scenes[Int(ctx.next() % UInt64(DayScenario.scenes.count))]
        let day = Int(ctx.next() % 7)
        let minute = max(0, min(1439, scene.minuteOfDay + Int(ctx.next() % 240) - 120 + Int(rng.next() % 20) - 10))
        var s = scene.snapshot(user, DayScenario.time(day: day, minute: minute))
        let places = ["home", "work", "library", "gym", "cafe", "park", "office", "campus", "station", "mall"]
        if ctx.unit() < 0.6 { s.location?.place = places[Int(ctx.next() % UInt64(places.count))] }
        if ctx.unit() < 0.4 { s.tags = ["company": ["alone", "friends", "partner"][Int(ctx.next() % 3)], "ctx": "c\(contextId % 97)"] }
        if var m = s.motion {
            m.heartRateBpm = min(200, max(45, (m.heartRateBpm ?? 70) + rng.normal() * 4))
            s.motion = m
        }
        return s
    }

    /// A user made from `bins` distinct contexts, a bin each, seeded from the catalog and given some
    /// likes, plus `queries` snapshots drawn from those contexts. Past the engine's bin cap the
    /// closest bins merge as they would for a real user, so the user holds at most the cap.
    public static func syntheticUser(engine: Recommender, user: String = "bench", bins: Int, queries: Int, seed: UInt64) -> (UserState, [Snapshot]) {
        var state = engine.newUser(user)
        var rng = SeededGenerator(seed: seed)
        for b in 0..<bins {
            let snap = randomSnapshot(user: user, rng: &rng, contextId: b)
            let x = engine.features(of: snap, state: &state)
            let i = engine.makeBin(x, at: snap.at.date, nearest: nil, state: &state, rng: &rng)
            // An established user: each bin has served some snapshots (a bin of one snapshot that
            // does not recur is folded away after a fortnight).
            state.bins[i].observations = max(state.bins[i].observations, 8 + Int(rng.next() % 24))
            for s in state.bins[i].songs.indices {
                state.bins[i].songs[s].likes = Int(rng.next() % 4)
                state.bins[i].songs[s].dislikes = Int(rng.next() % 2)
            }
        }
        state.changes = UserState.Changes()
        var qs: [Snapshot] = []
        for _ in 0..<queries {
            qs.append(randomSnapshot(user: user, rng: &rng, contextId: Int(rng.next() % UInt64(bins))))
        }
        return (state, qs)
    }

    /// One run of the in-process benchmark: every pick, and the picks that made a bin (kept, or
    /// merged at once into an older one) apart from the others: making a bin searches the catalog
    /// for its seed tracks and, past the cap, merges the closest pair (the slow tail).
    public struct Run: Sendable {
        /// Every timed pick.
        public var all: LatencyStats
        /// The picks that made a bin.
        public var madeBin: LatencyStats
        /// The picks that chose an existing bin.
        public var others: LatencyStats
    }

    /// Times `iterations` in-process picks (state in memory, no I/O) for each of `runs` runs.
    public static func run(engine: Recommender, state: UserState, queries: [Snapshot], iterations: Int, runs: Int) -> [Run] {
        var out: [Run] = []
        for _ in 0..<runs {
            var s = state
            var samples: [Double] = [], made: [Double] = [], others: [Double] = []
            samples.reserveCapacity(iterations)
            for k in 0..<iterations {
                let q = queries[k % queries.count]
                let next = s.nextBinNumber
                let t0 = DispatchTime.now().uptimeNanoseconds
                let r = engine.pick(q, state: &s)
                let t1 = DispatchTime.now().uptimeNanoseconds
                precondition(!r.pick.track.id.isEmpty)
                let us = Double(t1 - t0) / 1000
                samples.append(us)
                if s.nextBinNumber != next { made.append(us) } else { others.append(us) }
                if s.bins.count > state.bins.count + 8 { s = state }  // keep the bin count near the target
            }
            out.append(Run(all: LatencyStats(samples), madeBin: LatencyStats(made), others: LatencyStats(others)))
        }
        return out
    }

    /// A table of in-process runs: every pick, then the share of picks that made a bin and the p99 of
    /// those and of the others.
    public static func table(title: String, _ runs: [Run]) -> [String] {
        var lines = [
            title,
            "  "
                + TextColumns.row(
                    ["run", "p50 µs", "p99 µs", "mean µs", "max µs", "n", "new bin", "p99 new", "p99 other"],
                    widths: [-6, 10, 10, 10, 10, 8, 8, 10, 10])
        ]
        for (i, r) in runs.enumerated() {
            let s = r.all
            let share = s.count > 0 ? 100 * Double(r.madeBin.count) / Double(s.count) : 0
            lines.append(
                String(
                    format: "  %-6d %10.1f %10.1f %10.1f %10.1f %8d %7.1f%% %10.1f %10.1f", i + 1, s.p50, s.p99, s.mean, s.max, s.count, share,
                    r.madeBin.p99, r.others.p99))
        }
        return lines
    }

    /// A table of runs: one line per run and a header.
    public static func table(title: String, unit: String, _ stats: [LatencyStats]) -> [String] {
        var lines = [title, "  " + TextColumns.row(["run", "p50 \(unit)", "p99 \(unit)", "mean \(unit)", "max \(unit)", "n"], widths: [-6, 10, 10, 10, 10, 8])]
        for (i, s) in stats.enumerated() {
            lines.append(String(format: "  %-6d %10.1f %10.1f %10.1f %10.1f %8d", i + 1, s.p50, s.p99, s.mean, s.max, s.count))
        }
        return lines
    }
}

/// Wall time of one-shot processes (for `soundtrack pick` as a separate process).
///
/// Uses `posix_spawn` and `waitpid` directly: Foundation's `Process.waitUntilExit` polls its run
/// loop, which quantises short runs to its polling interval.
public enum ProcessBenchmark {
    /// Runs `executable` with `arguments` `runs` times and returns each wall time in milliseconds.
    /// Standard output and error go to /dev/null.
    /// - Throws: when a run cannot start or exits with a non-zero status.
    public static func wallTimes(executable: URL, arguments: [String], runs: Int) throws -> [Double] {
        var out: [Double] = []
        let argv = [executable.path] + arguments
        for _ in 0..<runs {
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            var cargs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
            defer { for p in cargs { free(p) } }
            var pid: pid_t = 0
            let t0 = DispatchTime.now().uptimeNanoseconds
            let rc = posix_spawn(&pid, executable.path, &actions, nil, &cargs, environ)
            guard rc == 0 else { throw ProcessFailure(status: rc, arguments: arguments) }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let t1 = DispatchTime.now().uptimeNanoseconds
            // WIFEXITED and WEXITSTATUS, spelled out (the C macros are not imported).
            guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
                throw ProcessFailure(status: status, arguments: arguments)
            }
            out.append(Double(t1 - t0) / 1e6)
        }
        return out
    }

    /// A benchmarked process failed.
    public struct ProcessFailure: Error, CustomStringConvertible {
        /// The raw wait status (or the spawn error).
        public var status: Int32
        /// The arguments it ran with.
        public var arguments: [String]
        public var description: String { "benchmarked process failed (status \(status)): \(arguments.joined(separator: " "))" }
    }
}
