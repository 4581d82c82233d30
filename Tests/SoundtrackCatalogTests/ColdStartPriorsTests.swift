import Foundation
import SoundtrackContext
import Testing

@testable import SoundtrackCatalog

/// Builds feature vectors the way feature extraction does (docs/features.md), section by section.
struct ContextBuilder {
    var v = FeatureVector()

    /// Time slots for a local hour and weekday (Monday = 0).
    init(hour: Double, weekday: Int) {
        let tau = 2 * Double.pi
        v.set("time.tod_sin", Float(sin(tau * hour / 24)))
        v.set("time.tod_cos", Float(cos(tau * hour / 24)))
        v.set("time.dow_sin", Float(sin(tau * Double(weekday) / 7)))
        v.set("time.dow_cos", Float(cos(tau * Double(weekday) / 7)))
        v.set("time.weekend", weekday >= 5 ? 1 : 0)
    }

    private mutating func oneHot(_ prefix: String, _ names: [String], _ chosen: String?) {
        for n in names { v.set("\(prefix).\(n)", n == chosen ? 1 : 0) }
    }

    func place(_ category: String) -> Self { var c = self; c.oneHot("place", FeatureLayout.placeCategories, category); return c }
    func activity(_ a: String) -> Self { var c = self; c.oneHot("motion", FeatureLayout.activities, a); return c }
    func calendar(_ category: String?) -> Self {
        var c = self
        c.oneHot("calendar", FeatureLayout.calendarCategories, category)
        c.v.set("calendar.busy", category == nil ? 0 : 1)
        c.v.set("calendar.next_soon", 0)
        return c
    }
    func bluetooth(_ kinds: [String]) -> Self {
        var c = self
        for k in FeatureLayout.bluetoothKinds { c.v.set("bluetooth.\(k)", kinds.contains(k) ? 1 : 0) }
        return c
    }
    func audio(_ route: String, volume: Float) -> Self {
        var c = self
        c.oneHot("audio", FeatureLayout.audioRoutes, route)
        c.v.set("audio.volume", volume)
        return c
    }
    func speed(_ mps: Double) -> Self {
        var c = self
        c.v.set("movement.speed", Float(min(max(log1p(mps) / log1p(40), 0), 1)))
        c.v.set("movement.moving", mps >= 0.5 ? 1 : 0)
        return c
    }
    func set(_ name: String, _ value: Float) -> Self { var c = self; c.v.set(name, value); return c }
}

private func shippedPriorsText() throws -> String {
    try String(contentsOf: Repo.url("Models/priors.v1.json"), encoding: .utf8)
}

/// Decodes the shipped priors file after a textual edit, expecting a precise error.
private func expectError(_ expected: String, replacing old: String, with new: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let text = try shippedPriorsText()
    #expect(text.contains(old), "the fixture must contain \(old)", sourceLocation: sourceLocation)
    let edited = text.replacingOccurrences(of: old, with: new)
    do {
        _ = try ColdStartPriors.decode(Data(edited.utf8))
        Issue.record("expected \(expected)", sourceLocation: sourceLocation)
    } catch {
        #expect(error.description == expected, sourceLocation: sourceLocation)
    }
}

@Suite("Cold-start priors")
struct ColdStartPriorsTests {
    static let required = [
        "workout", "study", "commute", "driving", "relaxing at home", "sleep", "social", "rainy evening", "work focus",
        "morning wake-up", "walking outdoors", "default"
    ]

    @Test func theShippedFileLoads() throws {
        let priors = try ColdStartPriors.load(from: Repo.url("Models/priors.v1.json"))
        #expect(priors.schemaVersion == 1)
        #expect(priors.contexts.map(\.name) == Self.required)
        #expect(priors.fallback.name == "default" && priors.fallback.signature.mask.allSatisfy { $0 == 0 })
        let workout = try #require(priors.prior(named: "workout"))
        #expect(workout.signature.value("motion.running") == 1 && workout.signature.value("motion.hr_zone") == 0.8)
        #expect(workout.signature.value("place.home") == nil)
        #expect(workout.profile.tempo == 0.75 && workout.profile.presentCount == 8)
        #expect(workout.genres.prefix(5) == ["edm", "hip hop", "pop", "dance pop", "rock"])
        for p in priors.contexts {
            #expect(!p.description.isEmpty && !p.source.isEmpty, "\(p.name)")
            #expect(p.profile.presentCount == 8, "\(p.name)")
            #expect(!p.genres.isEmpty, "\(p.name)")
        }
    }

    @Test func everyGenreOccursInTheShippedCatalog() {
        for p in BundledModels.priors().contexts {
            for g in p.genres {
                #expect(Shipped.index.trackCount(ofGenre: g) >= 10, "\(p.name): \(g)")
            }
        }
    }

    @Test func seedTracksFollowTheProfile() throws {
        let priors = BundledModels.priors()
        let index = Shipped.index
        var seen: [String: [Int]] = [:]
        for p in priors.contexts {
            let seeds = priors.seedTracks(for: p, index: index, k: 12)
            #expect(seeds.count == 12 && Set(seeds).count == 12, "\(p.name)")
            seen[p.name] = seeds
            let excluded = priors.seedTracks(for: p, index: index, k: 12, excluding: Set(seeds.prefix(3)))
            #expect(Set(excluded).isDisjoint(with: seeds.prefix(3)))
        }
        func mean(_ rows: [Int], _ key: KeyPath<AudioFeatures, Double?>) -> Double {
            rows.map { index.tracks[$0].audio[keyPath: key] ?? 0 }.reduce(0, +) / Double(rows.count)
        }
        let workout = try #require(seen["workout"]), sleep = try #require(seen["sleep"]), study = try #require(seen["study"])
        #expect(mean(workout, \.energy) > 0.75 && mean(sleep, \.energy) < 0.3)
        #expect(mean(workout, \.tempo) > 130 && mean(sleep, \.tempo) < 100)
        #expect(mean(study, \.speechiness) < 0.06)
        #expect(Set(workout).isDisjoint(with: sleep))
    }

    @Test func matchingRanksTheObviousContextFirst() {
        let weights = BundledModels.weights()
        let gym = ContextBuilder(hour: 18, weekday: 2).place("gym").activity("running").calendar(nil)
            .audio("headphones", volume: 0.7).set("motion.cadence", 165.0 / 180).set("motion.hr_zone", 100.0 / 130)
        let library = ContextBuilder(hour: 14, weekday: 1).place("library").activity("stationary").calendar("study")
            .audio("headphones", volume: 0.4).speed(0)
        let car = ContextBuilder(hour: 8, weekday: 3).bluetooth(["car"]).audio("car", volume: 0.6).activity("automotive")
            .speed(14)
        let night = ContextBuilder(hour: 23.5, weekday: 3).place("home").activity("stationary").calendar(nil)
            .audio("speaker", volume: 0.15)
        let party = ContextBuilder(hour: 22.5, weekday: 5).calendar("social").bluetooth(["speaker"]).audio("bluetooth", volume: 0.8)
        let walk = ContextBuilder(hour: 11, weekday: 6).place("outdoors").activity("walking").speed(1.4)
            .set("motion.cadence", 110.0 / 180).set("time.daylight", 1)
        let office = ContextBuilder(hour: 10, weekday: 1).place("work").activity("stationary").calendar("work")
            .audio("headphones", volume: 0.3)
        let morning = ContextBuilder(hour: 7, weekday: 2).place("home").set("time.daylight", 1).set("motion.steps_today", 0.02)
        for w in [nil, weights] {
            let priors = BundledModels.priors()
            func first(_ c: ContextBuilder) -> String { priors.match(c.v, weights: w)[0].prior.name }
            #expect(first(gym) == "workout")
            #expect(first(library) == "study")
            #expect(["driving", "commute"].contains(first(car)))
            #expect(first(night) == "sleep")
            #expect(first(party) == "social")
            #expect(first(walk) == "walking outdoors")
            #expect(first(office) == "work focus")
            #expect(first(morning) == "morning wake-up")
            let ranked = priors.match(gym.v, weights: w)
            #expect(ranked.count == priors.contexts.count)
            #expect(zip(ranked, ranked.dropFirst()).allSatisfy { $0.score >= $1.score })
            #expect(ranked.allSatisfy { $0.score >= -1 && $0.score <= 1 })
        }
    }

    @Test func matchFormula() {
        var sig = FeatureVector()
        sig.set("place.gym", 1)
        sig.set("motion.running", 1)
        sig.set("time.weekend", 0)
        let priors = ColdStartPriors(contexts: [
            ContextPrior(name: "x", signature: sig, profile: AudioProfile(AudioFeatures(energy: 1))),
            ContextPrior(name: "default", profile: AudioProfile(AudioFeatures(energy: 0.5)))
        ])
        var f = FeatureVector()
        f.set("place.gym", 1)
        f.set("time.weekend", 1)
        f.set("place.home", 1)  // not in the signature: ignored
        // Coverage outside time: gym of {gym, running} = 1/2 ≥ 0.5. Over the shared slots (gym, weekend):
        // dot = 1, ‖s‖ = 1, ‖x‖ = √2; running, missing, neither raises nor lowers the score.
        #expect(abs(priors.match(f)[0].score - 1 / Float(2).squareRoot()) < 1e-6)
        var w = [Float](repeating: 1, count: FeatureLayout.dimension)
        w[FeatureLayout.require("place.gym")] = 4
        // dot = 4, ‖s‖ = √4 = 2, ‖x‖ = √5
        #expect(abs(priors.match(f, weights: w)[0].score - 4 / (2 * Float(5).squareRoot())) < 1e-6)
        // Missing is not evidence: with only the time slots present there is no evidence for the
        // prior (coverage 0), however well the time fits.
        var timeOnly = FeatureVector()
        timeOnly.set("time.weekend", 0)
        #expect(priors.match(timeOnly).first { $0.prior.name == "x" }!.score == 0)
        // An evening without a weather section does not match the bundled "rainy evening".
        var evening = FeatureVector()
        evening.set("time.tod_sin", -0.87)
        evening.set("time.tod_cos", 0.5)
        #expect(BundledModels.priors().match(evening).first { $0.prior.name == "rainy evening" }!.score == 0)
        #expect(BundledModels.priors().bestMatch(evening).name == "default")
        evening.set("weather.cond_wet", 1)
        evening.set("weather.clouds", 0.9)
        evening.set("weather.precip", 0.5)
        #expect(BundledModels.priors().bestMatch(evening).name == "rainy evening")
        #expect(priors.match(FeatureVector()).map(\.score) == [0, 0])
        #expect(priors.match(FeatureVector()).map(\.prior.name) == ["default", "x"], "default wins ties")
        #expect(BundledModels.priors().match(FeatureVector())[0].prior.name == "default")
        #expect(priors.bestMatch(FeatureVector()).name == "default")
        #expect(priors.bestMatch(f).name == "x")
    }

    @Test("bestMatch is the first prior of match's order at and around the minimum score, ties included")
    func bestMatchIsTheFirstOfTheRanking() {
        // Signatures on a grid of values, so that priors tie (equal scores: default, then file order).
        let slots = ["place.gym", "place.home", "motion.running", "motion.walking", "time.weekend", "weather.cond_wet"]
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            seed ^= seed << 13
            seed ^= seed >> 7
            seed ^= seed << 17
            return seed
        }
        func vector(_ density: UInt64) -> FeatureVector {
            var v = FeatureVector()
            for name in slots where next() % 4 < density { v.set(name, Float(next() % 3) / 2) }
            return v
        }
        var contexts = (0..<6).map { k in ContextPrior(name: "c\(k)", signature: vector(3), profile: AudioProfile(AudioFeatures(energy: 0.5))) }
        contexts.insert(ContextPrior(name: "default", profile: AudioProfile(AudioFeatures(energy: 0.5))), at: 3)
        var again = contexts[1]
        again.name = "c1 again"
        contexts.append(again)  // the same signature twice: a tie decided by file order
        let priors = ColdStartPriors(contexts: contexts)
        var ties = 0, fallbacks = 0
        for k in 0..<2000 {
            let x = vector(2)
            var w: [Float]? = nil
            if k % 2 == 1 { w = (0..<FeatureLayout.dimension).map { _ in Float(1 + next() % 3) } }
            let ranked = priors.match(x, weights: w)
            for minimum: Float in [0, 0.3, 0.7] {
                let expected = ranked[0].score >= minimum ? ranked[0].prior : priors.fallback
                let got = priors.bestMatch(x, weights: w, minimumScore: minimum)
                #expect(got.name == expected.name && got.signature == expected.signature, "\(k), minimum \(minimum)")
                if ranked[0].score < minimum { fallbacks += 1 }
            }
            if ranked.count > 1, ranked[0].score > 0, ranked[0].score == ranked[1].score { ties += 1 }
        }
        #expect(ties > 100, "the grid makes the best positive scores tie often: \(ties)")
        #expect(fallbacks > 100)
    }

    @Test func malformedFilesGiveExactErrors() throws {
        try expectError(
            "contexts[3].signature.motion.runing: expected a feature slot name, got \"motion.runing\"",
            replacing: #""motion.automotive": 1"#, with: #""motion.runing": 1"#)
        try expectError(
            "version: expected 1 (the version this build reads), got 2",
            replacing: #""version": 1,"#, with: #""version": 2,"#)
        try expectError(
            "schema: expected \"soundtrack.priors\", got \"soundtrack.prior\"",
            replacing: #""schema": "soundtrack.priors""#, with: #""schema": "soundtrack.prior""#)
        try expectError(
            "contexts[0].profile.energy: expected a number in 0...1, got 1.5",
            replacing: #""tempo": 150, "energy": 0.85"#, with: #""tempo": 150, "energy": 1.5"#)
        try expectError(
            "contexts[0].profile.tempo: expected a number in 0...300, got a string",
            replacing: #""tempo": 150"#, with: #""tempo": "fast""#)
        try expectError(
            "contexts[0].profile.tempoo: expected one of the fields tempo, energy, valence, danceability, acousticness, instrumentalness, speechiness, loudness, got \"tempoo\"",
            replacing: #""tempo": 150"#, with: #""tempoo": 150"#)
        try expectError(
            "contexts[0].signature.place.gym: expected a number in -1...1, got 2",
            replacing: #""place.gym": 1"#, with: #""place.gym": 2"#)
        try expectError(
            "contexts[0].name: expected a non-empty string, got nothing",
            replacing: #""name": "workout","#, with: "")
        try expectError(
            "contexts[1].name: expected a name not used before, got \"workout\"",
            replacing: #""name": "study""#, with: #""name": "workout""#)
        try expectError(
            "contexts[11].name: expected a non-empty string, got \"\"",
            replacing: #""name": "default""#, with: #""name": """#)
        try expectError(
            "contexts: expected a context named 'default', got none",
            replacing: #""name": "default""#, with: #""name": "fallback""#)
        try expectError(
            "contexts[0].genres[1]: expected a non-empty string, got 3",
            replacing: #""genres": ["edm", "hip hop""#, with: #""genres": ["edm", 3"#)
        try expectError(
            "contexts[0].genre: expected one of the fields name, description, signature, profile, genres, source, volume, got \"genre\"",
            replacing: #""genres": ["edm""#, with: #""genre": ["edm""#)
        try expectError(
            "contexts[0].signature: expected an object, got an array",
            replacing: #""signature": {"motion.running": 1, "place.gym": 1, "calendar.workout": 1, "motion.hr_zone": 0.8, "motion.cadence": 0.9}"#,
            with: #""signature": []"#)
        try expectError(
            "contexts[11].profile: expected at least one of tempo, energy, valence, danceability, acousticness, instrumentalness, speechiness, loudness, got none",
            replacing:
                #""profile": {"tempo": 120, "energy": 0.64, "valence": 0.63, "danceability": 0.61, "acousticness": 0.17, "instrumentalness": 0, "speechiness": 0.04, "loudness": -8.5}"#,
            with: #""profile": {}"#)
    }

    @Test func otherMalformedInputs() {
        #expect(throws: InputError.self) { try ColdStartPriors.decode(Data("{".utf8)) }
        #expect(throws: InputError(path: "", expected: "an object", got: "an array")) { try ColdStartPriors.decode(Data("[]".utf8)) }
        #expect(throws: InputError(path: "contexts", expected: "an array", got: "nothing")) {
            try ColdStartPriors.decode(Data(#"{"schema": "soundtrack.priors", "version": 1}"#.utf8))
        }
        #expect(throws: InputError(path: "contexts", expected: "an array", got: "an object")) {
            try ColdStartPriors.decode(Data(#"{"schema": "soundtrack.priors", "version": 1, "contexts": {}}"#.utf8))
        }
        #expect(throws: InputError(path: "contexts[0]", expected: "an object", got: "a string")) {
            try ColdStartPriors.decode(Data(#"{"schema": "soundtrack.priors", "version": 1, "contexts": ["workout"]}"#.utf8))
        }
        let missing = URL(fileURLWithPath: "/nonexistent/priors.json")
        #expect(throws: InputError(path: "", expected: "a readable file", got: "\"/nonexistent/priors.json\"")) {
            try ColdStartPriors.load(from: missing)
        }
    }
}

@Suite("Weights and thresholds")
struct ModelFileTests {
    @Test func shippedWeights() throws {
        let w = try DefaultWeights.load(from: Repo.url("Models/weights.v2.json"))
        #expect(w.count == FeatureLayout.dimension)
        func at(_ name: String) -> Float { w[FeatureLayout.require(name)] }
        #expect(at("place.gym") == 1.4 && at("place.p3") == 1.0 && at("time.tod_sin") == 1.5)
        #expect(at("time.daylight") == 0.3 && at("tags.t0") == 1.0 && at("calendar.study") == 1.3)
        #expect(at("time.dow_sin") == 0 && at("calendar.busy") == 0.8, "slot overrides win over groups")
        #expect(w.allSatisfy { $0 >= 0 })
    }

    @Test func weightsErrors() {
        func decode(_ s: String) throws(InputError) -> [Float] { try DefaultWeights.decode(Data(s.utf8)) }
        let head = #""schema": "soundtrack.weights", "version": 2"#
        #expect(throws: InputError(path: "groups.placee", expected: "a feature group name", got: "\"placee\"")) {
            try decode(#"{\#(head), "layout_version": 2, "default": 1, "groups": {"placee": 1}}"#)
        }
        #expect(throws: InputError(path: "slots.place.gymm", expected: "a feature slot name", got: "\"place.gymm\"")) {
            try decode(#"{\#(head), "layout_version": 2, "default": 1, "slots": {"place.gymm": 1}}"#)
        }
        #expect(throws: InputError(path: "slots.place.gym", expected: "a number in 0...5", got: "-1")) {
            try decode(#"{\#(head), "layout_version": 2, "default": 1, "slots": {"place.gym": -1}}"#)
        }
        #expect(throws: InputError(path: "layout_version", expected: "2 (the feature layout of this build)", got: "1")) {
            try decode(#"{\#(head), "layout_version": 1, "default": 1}"#)
        }
        #expect(throws: InputError(path: "default", expected: "a number in 0...5", got: "nothing")) {
            try decode(#"{\#(head), "layout_version": 2}"#)
        }
        #expect(throws: InputError(path: "schema", expected: "\"soundtrack.weights\"", got: "\"soundtrack.thresholds\"")) {
            try decode(#"{"schema": "soundtrack.thresholds", "version": 2, "layout_version": 2, "default": 1}"#)
        }
        #expect((try? decode(#"{\#(head), "layout_version": 2, "default": 2}"#)) == [Float](repeating: 2, count: FeatureLayout.dimension))
    }

    @Test func shippedThresholds() throws {
        let t = try Thresholds.load(from: Repo.url("Models/thresholds.v2.json"))
        #expect(t.createBinBelow == 0.55 && t.distanceScale == 0.05 && t.binCap == 20 && t.repeatWindow == 20)
        #expect(t.dislikeStreakSwitch == 3 && t.learningRate == 0.15 && t.sessionTimeoutMinutes == 45)
    }

    @Test func thresholdsErrors() throws {
        let text = try String(contentsOf: Repo.url("Models/thresholds.v2.json"), encoding: .utf8)
        func decode(_ old: String, _ new: String) throws(InputError) -> Thresholds {
            try Thresholds.decode(Data(text.replacingOccurrences(of: old, with: new).utf8))
        }
        #expect(throws: InputError(path: "learning_rate", expected: "a number in 0...1", got: "1.5")) {
            try decode(#""learning_rate": 0.15"#, #""learning_rate": 1.5"#)
        }
        #expect(throws: InputError(path: "repeat_window", expected: "an integer in 0...1000", got: "2.5")) {
            try decode(#""repeat_window": 20"#, #""repeat_window": 2.5"#)
        }
        #expect(throws: InputError(path: "dislike_streak_switch", expected: "an integer in 1...100", got: "0")) {
            try decode(#""dislike_streak_switch": 3"#, #""dislike_streak_switch": 0"#)
        }
        #expect(throws: InputError(path: "session_timeout_minutes", expected: "an integer in 1...10080", got: "nothing")) {
            try decode(#",\#n  "session_timeout_minutes": 45"#, "")
        }
        #expect(throws: InputError(path: "create_bin_below", expected: "a number in 0...1", got: "a string")) {
            try decode(#""create_bin_below": 0.55"#, #""create_bin_below": "high""#)
        }
        #expect(throws: InputError(path: "bin_cap", expected: "an integer in 1...1000", got: "0")) {
            try decode(#""bin_cap": 20"#, #""bin_cap": 0"#)
        }
        #expect(throws: InputError.self) { try decode(#""repeat_window": 20"#, #""repeat_windw": 20"#) }
        #expect(throws: InputError(path: "version", expected: "2 (the version this build reads)", got: "1")) {
            try decode(#""version": 2"#, #""version": 1"#)
        }
    }
}

@Suite("Bundled models")
struct BundledModelsTests {
    @Test(arguments: ["priors", "weights", "thresholds"])
    func constantsEqualTheFilesByteForByte(_ name: String) throws {
        let file = try Data(contentsOf: Repo.url("Models/\(name).\(name == "priors" ? "v1" : "v2").json"))
        let constant: String =
            switch name {
            case "priors": BundledModels.priorsJSON
            case "weights": BundledModels.weightsJSON
            default: BundledModels.thresholdsJSON
            }
        #expect(
            Data(constant.utf8) == file,
            "Sources/SoundtrackCatalog/BundledModels.swift is stale: run Models/generate-bundled-models.sh")
    }

    @Test func decodedValuesEqualTheFiles() throws {
        #expect(BundledModels.priors() == (try ColdStartPriors.load(from: Repo.url("Models/priors.v1.json"))))
        #expect(BundledModels.weights() == (try DefaultWeights.load(from: Repo.url("Models/weights.v2.json"))))
        #expect(BundledModels.thresholds() == (try Thresholds.load(from: Repo.url("Models/thresholds.v2.json"))))
    }
}
