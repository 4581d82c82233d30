import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine

@testable import SoundtrackEvaluation

/// Committed files and shared fixtures of the evaluation tests.
enum Repo {
    static let root: URL = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func url(_ relative: String) -> URL { root.appendingPathComponent(relative) }

    /// The 500-track catalog.
    static let smallCatalog: CatalogIndex = {
        let (tracks, _) = try! CatalogReader().read(contentsOf: url("datasets/catalog-small.csv"))
        return CatalogIndex(tracks: tracks)
    }()

    /// The shipped model files.
    static let config: EngineConfig = {
        let t = try! Thresholds.load(from: url("Models/thresholds.v2.json"))
        let w = try! DefaultWeights.load(from: url("Models/weights.v2.json"))
        return EngineConfig(thresholds: t, weights: w)
    }()

    static let priors: ColdStartPriors = try! ColdStartPriors.load(from: url("Models/priors.v1.json"))

    /// The engine over the small catalog.
    static func engine(seed: UInt64 = 42) -> Recommender {
        Recommender(config: config, catalog: IndexCatalog(smallCatalog), priors: priors, seed: seed)
    }

    /// The committed small log the golden test evaluates.
    static let smallLogURL = url("Tests/SoundtrackEvaluationTests/Fixtures/small-log.jsonl")
    static let goldenURL = url("Tests/SoundtrackEvaluationTests/Fixtures/small-log.eval.json")
}

/// A small simulated log: 3 people, 4 days, the small catalog.
enum SmallSimulation {
    static let population = Population(users: 3, days: 4, seed: 11, catalog: Repo.smallCatalog)
    static let log: LabelledLog = {
        let (events, _) = population.feedbackLog()
        return LabelledLog(entries: events.enumerated().map { LabelledLog.Entry(line: $0 + 1, event: $1) })
    }()
}

/// A hand-made event with a minimal snapshot.
func handEvent(_ id: String, user: String, hour: Int, track: String, _ signal: Signal) -> FeedbackEvent {
    let at = Timestamp(rfc3339: "2026-03-02T00:00:00+01:00")!.advanced(minutes: hour * 60)
    let snapshot = Snapshot(
        user: user, at: at, location: Location(lat: 52.5, lon: 13.4, speedMps: 0, place: "home"),
        motion: Motion(activity: .stationary))
    return FeedbackEvent(id: id, user: user, at: at.advanced(minutes: 1), track: track, signal: signal, snapshot: snapshot)
}

extension LabelledLog {
    /// A log of events in the given order, numbered by line.
    init(_ events: [FeedbackEvent]) {
        self.init(entries: events.enumerated().map { Entry(line: $0 + 1, event: $1) })
    }
}
