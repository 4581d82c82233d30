import Foundation
import SoundtrackCatalog
import SoundtrackContext
import Testing

@testable import SoundtrackEngine

/// Bins as online clusters: served snapshots move them, a cap merges them, idle small bins fold,
/// labels tell them apart (docs/scoring.md, "Bins learn from every snapshot they serve", "Merging and
/// folding", "Labels").
@Suite("Bin lifecycle")
struct BinLifecycleTests {
    let engine = Fixtures.engine()

    /// The engine with a cap of `cap` bins per user.
    func engine(cap: Int) -> Recommender {
        var config = engine.config
        config.binCap = cap
        return engine.with(config: config)
    }

    /// A minimal snapshot of phone sensors: an activity, a tag, at a time.
    func phone(_ time: String, activity: Activity, wifi: String, user: String = "u-1") -> Snapshot {
        Snapshot(user: user, at: Fixtures.at(time), motion: Motion(activity: activity), tags: ["wifi": wifi])
    }

    @Test("Every snapshot a bin serves moves it: the centroid is the running mean of its snapshots")
    func servedSnapshotsMoveTheCentroid() {
        var state = engine.newUser("u-1")
        _ = engine.pick(phone("2026-03-11T09:00:00+01:00", activity: .stationary, wifi: "home"), state: &state)
        _ = engine.pick(phone("2026-03-11T09:10:00+01:00", activity: .stationary, wifi: "home"), state: &state)
        _ = engine.pick(phone("2026-03-11T09:20:00+01:00", activity: .stationary, wifi: "home"), state: &state)
        #expect(state.bins.count == 1)
        let bin = state.bins[0]
        #expect(bin.observations == 3)
        // The time of day is the mean of 09:00, 09:10 and 09:20 on the unit circle's coordinates.
        let sinSlot = FeatureLayout.require("time.tod_sin")
        let hours: [Double] = [9, 9 + 1.0 / 6, 9 + 2.0 / 6]
        var expected = 0.0
        for h in hours { expected += sin(2 * Double.pi * h / 24) / 3 }
        #expect(abs(Double(bin.centroid[sinSlot]) - expected) < 1e-5)
        #expect(bin.meanTime == Fixtures.at("2026-03-11T09:10:00+01:00").date.timeIntervalSince1970)
    }

    @Test("Past the cap the closest pair merges; picks of the merged bin resolve to the survivor")
    func capMergesAndResolves() throws {
        let engine = self.engine(cap: 3)
        var state = engine.newUser("u-1")
        var records: [PickRecord] = []
        // Four clearly different contexts, hours apart: each makes a bin until the cap is passed.
        let contexts: [(String, Activity, String)] = [
            ("2026-03-11T03:00:00+01:00", .stationary, "home"), ("2026-03-11T09:00:00+01:00", .walking, "none"),
            ("2026-03-11T14:00:00+01:00", .automotive, "none"), ("2026-03-11T20:00:00+01:00", .running, "gym")
        ]
        for (t, a, w) in contexts { records.append(engine.pick(phone(t, activity: a, wifi: w), state: &state).record) }
        #expect(state.bins.count == 3)
        #expect(state.mergedInto.count == 1)
        let (gone, survivor) = state.mergedInto.first!
        #expect(state.binIndex(number: gone) == nil)
        #expect(state.resolve(bin: gone) == survivor)
        #expect(survivor < gone, "the older bin survives")
        #expect(state.changes.removedBins.contains(gone))
        // Feedback naming a pick of the merged bin applies to the survivor.
        let r = records.first { $0.binNumber == gone } ?? records.last!
        let outcome = engine.feedback(
            FeedbackEvent(id: "e-1", user: "u-1", at: Fixtures.at("2026-03-11T21:00:00+01:00"), track: r.trackId, signal: .like, pickId: r.pickId),
            pick: r, state: &state)
        #expect(outcome.bin == state.resolve(bin: r.binNumber))
        // The merged bin holds what both held: snapshot counts add up.
        #expect(state.bins.reduce(0) { $0 + $1.observations } == 4)
    }

    /// A user of three contexts that recurred on five days (home at night, the car, the gym): three
    /// bins of five snapshots each, with `engine`'s cap of 3.
    func threeRecurringContexts(_ engine: Recommender) throws -> UserState {
        var state = engine.newUser("u-1")
        let contexts: [(String, Activity, String)] = [("03:00", .stationary, "home"), ("14:00", .automotive, "car"), ("19:00", .running, "gym")]
        for day in 11...15 {
            for (t, a, w) in contexts { _ = engine.pick(phone("2026-03-\(day)T\(t):00+01:00", activity: a, wifi: w), state: &state) }
        }
        try #require(state.bins.count == 3)
        try #require(state.bins.allSatisfy { $0.observations == 5 })
        return state
    }

    @Test("At the cap, a context that a new bin would be merged into at once joins that bin: no new bin, no seed songs")
    func joinsAtTheCap() throws {
        let engine = self.engine(cap: 3)
        var state = try threeRecurringContexts(engine)
        // Later and walking, at the gym: near the gym's bin, but not near enough to be recognised.
        let gym = phone("2026-03-16T21:30:00+01:00", activity: .walking, wifi: "gym")
        // What making a bin for it would do: the new bin is merged at once into an old one, which
        // gains the new bin's seed songs.
        var made = state
        var rng = SeededGenerator(seed: 1)
        let x = engine.features(of: gym, state: &made)
        let number = made.nextBinNumber
        _ = engine.makeBin(x, at: gym.at.date, nearest: nil, state: &made, rng: &rng)
        let target = try #require(made.mergedInto[number], "the new bin is the one merged")
        let t = try #require(state.binIndex(number: target))
        let songs = state.bins[t].songs.map(\.trackId)
        #expect(made.bins[made.binIndex(number: target)!].songs.count > songs.count)
        // The pick: that bin serves the snapshot instead.
        let next = state.nextBinNumber
        var below = state
        let pick = engine.pick(gym, state: &state).pick
        #expect(pick.bin.id == Bin.id(target))
        #expect(!pick.bin.created)
        #expect(state.nextBinNumber == next, "no bin number was used")
        #expect(state.mergedInto.isEmpty)
        #expect(state.bins.count == 3)
        #expect(state.bins[t].observations == 6)
        // No seed songs were brought in: the bin holds its songs and, if it came from elsewhere, the one played.
        let played = songs.contains(pick.track.id) ? [] : [pick.track.id]
        #expect(state.bins[t].songs.map(\.trackId) == songs + played)
        // Below the cap the same context makes a bin of its own.
        let fresh = self.engine(cap: 4).pick(gym, state: &below).pick
        #expect(fresh.bin.created)
        #expect(below.bins.count == 4)
    }

    @Test("A user over the cap (a lowered cap) makes the bin and merges back down to the cap; it does not join")
    func overTheCapMergesDown() throws {
        var state = try threeRecurringContexts(engine(cap: 3))
        let lowered = engine(cap: 2)
        _ = lowered.pick(phone("2026-03-16T21:30:00+01:00", activity: .walking, wifi: "gym"), state: &state)
        #expect(state.bins.count == 2)
        #expect(state.mergedInto.count == 2, "the new bin and an older pair: two merges")
    }

    @Test("The merge costs kept in the state between picks equal a layout made from scratch, through picks, merges and feedback")
    func keptPairCostsEqualFreshOnes() throws {
        let engine = self.engine(cap: 4)
        var state = engine.newUser("u-1")
        var rng = SeededGenerator(seed: 7)
        let activities: [Activity] = [.stationary, .walking, .running, .automotive]
        let wifis = ["home", "work", "gym", "none", "cafe"]
        var checked = 0
        for k in 0..<160 {
            let minutes = 20 * k + Int(rng.next() % 15)
            let at = Fixtures.at("2026-03-11T06:00:00+01:00").date.addingTimeInterval(Double(minutes * 60))
            let snapshot = Snapshot(
                user: "u-1", at: Timestamp(date: at, offsetSeconds: 3600),
                motion: Motion(activity: activities[Int(rng.next() % 4)]), tags: ["wifi": wifis[Int(rng.next() % 5)]])
            let (pick, record) = engine.pick(snapshot, state: &state)
            if k % 9 == 4 {
                // Feedback changes the weights: the kept pairs must be measured again (the rows stay).
                let event = FeedbackEvent(
                    id: "e\(k)", user: "u-1", at: snapshot.at, track: pick.track.id, signal: k % 2 == 0 ? .like : .dislike, pickId: pick.pickId)
                _ = engine.feedback(event, pick: record, state: &state)
            }
            guard state.bins.count >= 2 else { continue }
            state.pairs.sync(state.bins, weights: state.weights, threshold: engine.config.presenceThreshold)
            var fresh = BinVectors(state.bins, weights: state.weights, threshold: engine.config.presenceThreshold)
            for i in state.bins.indices {
                for j in state.bins.indices where j != i {
                    let kept = state.pairs.mergeCost(i, j, config: engine.config)
                    let made = fresh.mergeCost(i, j, config: engine.config)
                    #expect(kept == made || (kept.isNaN && made.isNaN), "pick \(k), bins \(i), \(j): \(kept) vs \(made)")
                }
            }
            #expect(state.pairs.cheapestPair(config: engine.config)?.cost == fresh.cheapestPair(config: engine.config)?.cost)
            checked += 1
        }
        #expect(checked > 100)
        #expect(state.bins.count == 4, "the cap was reached and held by merges")
    }
    @Test("A bin number is never given twice: a state whose counter is behind its bins or merges gets a new bin above them")
    func binNumbersAreNotReused() {
        let d = FeatureLayout.dimension
        let at = Fixtures.at("2026-03-11T09:00:00+01:00")
        func bin(_ number: Int) -> Bin {
            Bin(
                number: number, label: "", centroid: [Float](repeating: 0.5, count: d), spread: [Float](repeating: 0.1, count: d),
                observed: [Float](repeating: 1, count: d), observations: 3, songs: [], prior: nil, createdAt: at.date, updatedAt: at.date)
        }
        // As stored by a writer that left the counter at 1 (the benchmark population did).
        let behind = UserState(
            user: "u-1", bins: [bin(1), bin(2), bin(5)], weights: engine.config.defaultWeights, places: PlaceBook(), session: SessionState(),
            recentTracks: [], pickCounter: 0, nextBinNumber: 1, mergedInto: [7: 2])
        #expect(behind.nextBinNumber == 8)
        var state = behind
        var rng = SeededGenerator(seed: 1)
        let x = engine.features(of: phone("2026-03-11T23:00:00+01:00", activity: .running, wifi: "gym"), state: &state)
        let i = engine.makeBin(x, at: at.date, nearest: nil, state: &state, rng: &rng)
        #expect(state.bins[i].number == 8)
        #expect(Set(state.bins.map(\.number)).count == state.bins.count)
    }

    @Test("Merge distances over SIMD lanes equal the slot-by-slot formula over the slots both bins have seen")
    func binVectorsDistance() {
        var rng = SeededGenerator(seed: 3)
        let d = FeatureLayout.dimension
        func bin(_ number: Int) -> Bin {
            let c = (0..<d).map { _ in Float(rng.unit()) }
            // Presence around the threshold, some exactly at it.
            let o = (0..<d).map { k in k % 7 == 0 ? engine.config.presenceThreshold : Float(rng.unit()) }
            return Bin(
                number: number, label: "", centroid: c, spread: c, observed: o, observations: 1 + number, songs: [], prior: nil,
                createdAt: Date(timeIntervalSince1970: 0), updatedAt: Date(timeIntervalSince1970: 0))
        }
        let bins = (1...4).map(bin)
        let weights = (0..<d).map { _ in Float(rng.unit()) * 2 }
        let t = engine.config.presenceThreshold
        let vectors = BinVectors(bins, weights: weights, threshold: t)
        for i in bins.indices {
            for j in bins.indices where j != i {
                var sw: Float = 0, sum: Float = 0
                for k in 0..<d where bins[i].observed[k] >= t && bins[j].observed[k] >= t {
                    let dc = bins[i].centroid[k] - bins[j].centroid[k]
                    sw += weights[k]
                    sum += weights[k] * dc * dc
                }
                let expected = sum / sw
                let got = vectors.distance(i, j)
                #expect(abs(got - expected) <= 1e-5 * max(1, expected), "\(i), \(j): \(got) vs \(expected)")
            }
        }
        // No slot seen by both: +∞.
        var a = bins[0], b = bins[1]
        a.setVectors(centroid: a.centroid, spread: a.spread, observed: (0..<d).map { $0 % 2 == 0 ? 1 : 0 })
        b.setVectors(centroid: b.centroid, spread: b.spread, observed: (0..<d).map { $0 % 2 == 0 ? 0 : 1 })
        let apart = BinVectors([a, b], weights: weights, threshold: t)
        #expect(apart.distance(0, 1) == .infinity)
    }

    @Test("A bin of hundreds of songs ranks its best-liked songs, not its oldest, and leaves room for other candidates")
    func bigBinCandidates() throws {
        var state = engine.newUser("u-1")
        _ = engine.pick(phone("2026-03-11T09:00:00+01:00", activity: .stationary, wifi: "home"), state: &state)
        let index = engine.catalog.index()
        // 300 songs played in the bin; the last ten were liked.
        let tracks = index.tracks.prefix(1000).suffix(300).map(\.id)
        state.bins[0].songs = tracks.enumerated().map { i, id in BinSong(trackId: id, likes: i >= 290 ? 2 : 0) }
        state.evidenceVersion &+= 1
        var rng = SeededGenerator(seed: 1)
        let rows = engine.candidateRows(binIndex: 0, attributes: [], state: &state, index: index, rng: &rng)
        let liked = Set(tracks.suffix(10).compactMap { index.row(of: BinSong(trackId: $0)) })
        let members = Set(tracks.compactMap { index.row(of: BinSong(trackId: $0)) })
        #expect(rows.count <= engine.config.candidates)
        #expect(liked.isSubset(of: Set(rows)), "the liked songs, played last, are candidates")
        #expect(rows.filter { members.contains($0) }.count <= engine.config.candidates - engine.config.candidates / 4)
        #expect(rows.contains { !members.contains($0) }, "other sources have room")
    }

    @Test("A song played without feedback keeps the bin's sound neighbours; a like, a dislike or a rating searches again")
    func soundSignature() throws {
        var state = engine.newUser("u-1")
        _ = engine.pick(phone("2026-03-11T09:00:00+01:00", activity: .stationary, wifi: "home"), state: &state)
        var bin = state.bins[0]
        bin.songs[0].likes = 1
        let before = bin.soundSignature, evidenceBefore = bin.evidenceSignature
        let index = engine.catalog.index()
        let played = try #require(index.tracks.first { id in !bin.songs.contains { $0.trackId == id.id } }).id
        bin.songs.append(BinSong(trackId: played))
        #expect(bin.soundSignature == before, "played without feedback")
        #expect(bin.evidenceSignature != evidenceBefore, "the songs did change (the profile's signature sees it)")
        var liked = bin
        liked.songs[liked.songs.count - 1].likes = 1
        #expect(liked.soundSignature != before)
        var disliked = bin
        disliked.songs[0].dislikes = 1
        #expect(disliked.soundSignature != before)
        var rated = bin
        rated.songs[rated.songs.count - 1].rating = 4
        #expect(rated.soundSignature != before)
        var other = bin
        other.prior = "workout"
        #expect(other.soundSignature != before)
    }

    @Test("A merge leaves the ranking cache as a rebuild from scratch would make it; a dropped rating forces the rebuild")
    func mergeKeepsTheRankingCache() throws {
        var state = engine.newUser("u-1")
        _ = engine.pick(phone("2026-03-11T03:00:00+01:00", activity: .stationary, wifi: "home"), state: &state)
        _ = engine.pick(phone("2026-03-11T14:00:00+01:00", activity: .automotive, wifi: "none"), state: &state)
        try #require(state.bins.count == 2)
        let shared = state.bins[0].songs[0]
        // Evidence in both bins, on a song they share and on songs of their own.
        state.bins[0].songs[0].likes = 2
        state.bins[0].songs[1].dislikes = 1
        state.bins[1].songs.append(BinSong(trackId: shared.trackId, likes: 1))
        state.bins[1].songs[0].likes = 3
        state.evidenceVersion &+= 1
        let index = engine.catalog.index()
        engine.refreshRankingCache(&state, index: index)
        func contents(_ c: RankingCache) -> [String] {
            c.binEvidence.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.map { "\($0.row) \($0.sum) \($0.n)" })" }
                + c.own.pairs.sorted { $0.key < $1.key }.map { "own \($0.key) \($0.value.sum) \($0.value.n)" }
        }
        var merged = state
        engine.merge(1, into: 0, state: &merged)
        #expect(merged.evidenceVersion == state.evidenceVersion, "the evidence is the same: no rebuild")
        var rebuilt = merged
        rebuilt.evidenceVersion &+= 1
        engine.refreshRankingCache(&rebuilt, index: index)
        #expect(contents(merged.rankingCache) == contents(rebuilt.rankingCache))
        #expect(merged.rankingCache.binEvidence.count == 1)
        // A rating on the shared song in the dropped bin is lost in the merge: the cache is rebuilt.
        var rated = state
        rated.bins[1].songs[rated.bins[1].songs.count - 1].rating = 5
        rated.evidenceVersion &+= 1
        engine.refreshRankingCache(&rated, index: index)
        let version = rated.evidenceVersion
        engine.merge(1, into: 0, state: &rated)
        #expect(rated.evidenceVersion != version)
    }

    @Test(
        "The context signal of a rated track adds up its bins' evidence weighted by their similarity, in bin order, after a merge and a new bin too"
    )
    func contextSignalFollowsTheBins() throws {
        var state = engine.newUser("u-1")
        _ = engine.pick(phone("2026-03-11T03:00:00+01:00", activity: .stationary, wifi: "home"), state: &state)
        _ = engine.pick(phone("2026-03-11T14:00:00+01:00", activity: .automotive, wifi: "none"), state: &state)
        _ = engine.pick(phone("2026-03-11T19:00:00+01:00", activity: .walking, wifi: "park"), state: &state)
        try #require(state.bins.count == 3)
        // A track rated in two bins (the first and the last), and tracks rated in one.
        let shared = state.bins[0].songs[0]
        state.bins[0].songs[0].likes = 2
        state.bins[1].songs[0].likes = 3
        state.bins[2].songs.append(BinSong(trackId: shared.trackId, dislikes: 1))
        state.bins[2].songs[0].rating = 4
        state.evidenceVersion &+= 1
        let index = engine.catalog.index()
        let n = RankerModel.signals.count, slot = RankerModel.signals.firstIndex(of: "own_ctx")!
        var probe = state
        let x = engine.features(of: phone("2026-03-11T15:00:00+01:00", activity: .automotive, wifi: "none"), state: &probe)

        // The signal as docs/scoring.md defines it: Σ_b sim_b Σ (r − 3)/2 over the bin's ratings of
        // the track, divided by 1 + Σ_b sim_b n_b, bins in order.
        func expected(_ state: UserState, _ sims: [Float], row: Int) -> Float {
            var num: Float = 0, den: Float = 0
            for (b, bin) in state.bins.enumerated() where sims[b] > 0 {
                for song in bin.songs where index.row(of: song) == row {
                    let e = Recommender.evidence(song)
                    guard e.n > 0 else { continue }
                    num += sims[b] * (e.sum - 3 * e.n) / 2
                    den += sims[b] * e.n
                }
            }
            return den > 0 ? num / (den + 1) : 0
        }
        func check(_ state: inout UserState, _ sims: [Float], _ comment: Comment) throws {
            let rated = Set(state.bins.flatMap { $0.songs.filter { Recommender.evidence($0).n > 0 }.compactMap { index.row(of: $0) } })
            try #require(rated.count >= 3)
            let rows = rated.sorted() + [index.count - 1]
            let scored = engine.scoreRows(x, binIndex: nil, similarities: sims, state: &state, rows: rows)
            let got = rows.indices.map { scored.signals[$0 * n + slot] }
            #expect(got == rows.map { expected(state, sims, row: $0) }, comment)
            #expect(got.contains { $0 != 0 }, comment)
        }
        try check(&state, [0.5, 0.25, 0.125], "three bins")
        try check(&state, [0, 0.25, 0.125], "a bin of no similarity counts nothing")
        // The last bin merged into the first: the evidence is the same, the bins' indices are not.
        engine.merge(2, into: 0, state: &state)
        try #require(state.bins.count == 2)
        try check(&state, [0.25, 0.5], "after a merge")
        // A new bin in a new context.
        _ = engine.pick(phone("2026-03-12T08:00:00+01:00", activity: .running, wifi: "gym"), state: &state)
        try #require(state.bins.count == 3)
        try check(&state, [0.125, 0.5, 0.25], "after a new bin")
    }

    @Test("A small bin that never recurs is folded into its nearest bin after the idle time")
    func idleSmallBinsFold() {
        var state = engine.newUser("u-1")
        // A context seen four times (more than fold_max_observations), one seen once.
        for minute in ["00", "05", "10", "15"] {
            _ = engine.pick(phone("2026-03-02T09:\(minute):00+01:00", activity: .stationary, wifi: "home"), state: &state)
        }
        _ = engine.pick(phone("2026-03-02T15:00:00+01:00", activity: .automotive, wifi: "none"), state: &state)
        #expect(state.bins.count == 2)
        #expect(state.bins.map(\.observations) == [4, 1])
        // Three weeks later, on a Monday again, only the first context comes back.
        _ = engine.pick(phone("2026-03-23T09:00:00+01:00", activity: .stationary, wifi: "home"), state: &state)
        #expect(state.bins.map(\.number) == [1], "the driving bin (1 snapshot, idle 21 days) was folded")
        #expect(state.mergedInto == [2: 1])
        #expect(state.bins[0].observations == 6, "the folded bin's snapshot counts in the survivor")
    }

    @Test("Labels name time and values as a person would, and differ between a user's bins")
    func labelsAreReadableAndDistinct() {
        var state = engine.newUser("u-1")
        let a = engine.pick(phone("2026-03-11T09:00:00+01:00", activity: .walking, wifi: "none"), state: &state).pick
        let b = engine.pick(phone("2026-03-11T14:00:00+01:00", activity: .walking, wifi: "none"), state: &state).pick
        _ = engine.pick(phone("2026-03-14T09:00:00+01:00", activity: .walking, wifi: "none"), state: &state)
        #expect(a.bin.label.hasPrefix("weekday morning"))
        #expect(a.bin.label.contains("walking"))
        #expect(b.bin.label.hasPrefix("weekday afternoon"))
        let labels = state.bins.map(\.label)
        #expect(Set(labels).count == labels.count, "every bin of a user has its own label: \(labels)")
        #expect(labels.allSatisfy { !$0.contains("tags.") && !$0.contains(".h") })
    }

    @Test("Labels are those of the reference labeller (arrays joined, parts sorted with their texts) on bins that tie and collide")
    func labelsEqualTheReference() {
        let d = FeatureLayout.dimension
        var vocabulary = FeatureVocabulary()
        for key in ["label:home", "pl-1", "label:gym", "label:home2", "label:"] { _ = vocabulary.placeSlot(key, adding: true) }
        for (k, v) in [("wifi", "home"), ("wifi", "gym"), ("mood", "calm"), ("", ""), ("home", "")] { _ = vocabulary.tagSlot(key: k, value: v, adding: true) }
        var rng = SeededGenerator(seed: 11)
        func next() -> UInt64 { rng.next() }
        // Values on a grid: parts that tie on contrast, labels that collide between bins.
        let grid: [Float] = [0, 0.5, 0.6, 0.8, 1]
        // A few labelled slots (fixed ones, learned places, tags: texts that repeat) and the time
        // slots, so that many bins share their best parts.
        let labelled = BinLabeler.Slots.labelled
        let few = Array(labelled.prefix(3)) + labelled.filter { BinLabeler.text(slot: $0, vocabulary: vocabulary) != nil }.suffix(6)
        let time = ["time.tod_sin", "time.tod_cos", "time.weekend"].map { FeatureLayout.require($0) }
        // Four kinds of bin, each three times, one of the copies changed in one slot: copies share
        // their labels' parts, so later bins need more parts or their number.
        var templates: [(centroid: [Float], observed: [Float])] = []
        for _ in 0..<4 {
            var centroid = [Float](repeating: 0, count: d), observed = [Float](repeating: 0, count: d)
            for i in few + time where next() % 2 == 0 {
                centroid[i] = grid[Int(next() % 5)]
                observed[i] = grid[2 + Int(next() % 3)]
            }
            templates.append((centroid, observed))
        }
        var bins: [Bin] = []
        for number in 1...12 {
            var (centroid, observed) = templates[number % 4]
            if number > 8 {
                let i = few[Int(next() % UInt64(few.count))]
                centroid[i] = grid[Int(next() % 5)]
                observed[i] = grid[2 + Int(next() % 3)]
            }
            bins.append(
                Bin(
                    number: number, label: "", centroid: centroid, spread: centroid, observed: observed, observations: 1,
                    songs: [], prior: nil, createdAt: Date(timeIntervalSince1970: 0), updatedAt: Date(timeIntervalSince1970: 0)))
        }
        var extended = 0
        for round in 0..<6 {
            for i in bins.indices {
                let expected = Self.referenceLabel(binIndex: i, bins: bins, vocabulary: vocabulary)
                #expect(BinLabeler.label(binIndex: i, bins: bins, vocabulary: vocabulary) == expected, "round \(round), bin \(i)")
                #expect(BinLabeler.valueParts(binIndex: i, bins: bins, vocabulary: vocabulary) == Self.referenceParts(binIndex: i, bins: bins, vocabulary: vocabulary))
                let parts = Self.referenceParts(binIndex: i, bins: bins, vocabulary: vocabulary)
                let head = BinLabeler.timePart(centroid: bins[i].centroid, observed: bins[i].observed)
                if expected != BinLabeler.compose(head, parts.prefix(2)) { extended += 1 }
                bins[i].label = expected
            }
        }
        #expect(extended > 5, "labels collided and were made longer: \(extended) \(bins.map(\.label))")
        for (head, parts) in [(nil, [String]()), ("morning", []), (nil, ["", "x"]), ("", [""]), ("night", ["a", "", "b"])] as [(String?, [String])] {
            let words = (head.map { [$0] } ?? []) + parts
            #expect(BinLabeler.compose(head, parts[...]) == (words.isEmpty ? "any time" : words.joined(separator: " · ")))
        }
    }

    /// The labeller as it was written before it read the bins through pointers (the reference).
    static func referenceLabel(binIndex: Int, bins: [Bin], vocabulary: FeatureVocabulary) -> String {
        let bin = bins[binIndex]
        let head = BinLabeler.timePart(centroid: bin.centroid, observed: bin.observed)
        let parts = referenceParts(binIndex: binIndex, bins: bins, vocabulary: vocabulary)
        func taken(_ label: String) -> Bool { bins.indices.contains { $0 != binIndex && bins[$0].label == label } }
        var count = min(2, parts.count)
        while true {
            let words = (head.map { [$0] } ?? []) + parts.prefix(count)
            let label = words.isEmpty ? "any time" : words.joined(separator: " · ")
            if !taken(label) { return label }
            if count < parts.count {
                count += 1
                continue
            }
            return label + " · " + Bin.id(bin.number)
        }
    }

    static func referenceParts(binIndex: Int, bins: [Bin], vocabulary: FeatureVocabulary) -> [String] {
        let observed = bins[binIndex].observed, centroid = bins[binIndex].centroid
        var candidates: [(text: String, contrast: Float, slot: Int)] = []
        var seen: [String] = []
        for i in BinLabeler.Slots.labelled where observed[i] >= 0.5 && centroid[i] >= 0.6 {
            guard let text = BinLabeler.text(slot: i, vocabulary: vocabulary), !seen.contains(text) else { continue }
            seen.append(text)
            var other: Float = 0, n: Float = 0
            for k in bins.indices where k != binIndex && bins[k].observed[i] >= 0.5 {
                other += bins[k].centroid[i]
                n += 1
            }
            candidates.append((text, centroid[i] - (n > 0 ? other / n : 0), i))
        }
        candidates.sort { ($0.contrast, $1.slot) > ($1.contrast, $0.slot) }
        return candidates.map(\.text)
    }

    @Test("The session's current bin is preferred while the context persists (stickiness), less as time passes")
    func stickiness() {
        func run(stickiness: Float, at time: String) -> Int {
            var config = engine.config
            config.stickiness = stickiness
            let e = engine.with(config: config)
            var state = e.newUser("u-1")
            _ = e.pick(phone("2026-03-11T09:00:00+01:00", activity: .stationary, wifi: "home"), state: &state)
            // A noisy reading later: the activity sensor says something else.
            _ = e.pick(phone(time, activity: .unknown, wifi: "home"), state: &state)
            return state.bins.count
        }
        #expect(run(stickiness: 0, at: "2026-03-11T09:10:00+01:00") == 2, "without stickiness the reading is a new context")
        #expect(run(stickiness: 0.3, at: "2026-03-11T09:10:00+01:00") == 1, "10 minutes on, the session's bin holds it")
        #expect(run(stickiness: 0.3, at: "2026-03-11T13:00:00+01:00") == 2, "4 hours on, the bonus has decayed")
    }

    @Test("At the model's stickiness, a reading that differs in one tag ten or twenty minutes on stays in the session's bin")
    func modelStickinessHoldsAPersistingContext() {
        // The bonus is the prior log-odds that the context persisted, in distance units (docs/scoring.md,
        // "Choosing the bin"): κ ln(π / (1 − π)) ≈ 0.1 for π ≈ 0.9 ten minutes on, not 0.036.
        #expect(engine.config.stickiness >= 0.1)
        func bins(at time: String, power: String, noise: String) -> Int {
            var state = engine.newUser("u-1")
            let first = Snapshot(
                user: "u-1", at: Fixtures.at("2026-03-11T09:00:00+01:00"), motion: Motion(activity: .stationary),
                tags: ["wifi": "home", "power": "battery", "noise": "quiet"])
            let later = Snapshot(
                user: "u-1", at: Fixtures.at(time), motion: Motion(activity: .stationary),
                tags: ["wifi": "home", "power": power, "noise": noise])
            _ = engine.pick(first, state: &state)
            _ = engine.pick(later, state: &state)
            return state.bins.count
        }
        #expect(bins(at: "2026-03-11T09:10:00+01:00", power: "battery", noise: "loud") == 1, "10 minutes on, one tag changed: the same context")
        #expect(bins(at: "2026-03-11T09:20:00+01:00", power: "battery", noise: "loud") == 1, "20 minutes on, likewise")
        #expect(bins(at: "2026-03-11T09:10:00+01:00", power: "ac", noise: "loud") == 2, "two tags changed: a new context")
        #expect(bins(at: "2026-03-11T13:00:00+01:00", power: "battery", noise: "loud") == 2, "4 hours on, the bonus has decayed")
    }

    @Test("A rating replaces the user's earlier rating of the track in the bin; 3 is neither like nor dislike")
    func ratingsUpsert() throws {
        var state = engine.newUser("u-1")
        let (pick, record) = engine.pick(Fixtures.library(), state: &state)
        let track = pick.track.id
        func rate(_ stars: Int, _ id: String) throws -> [Int]? {
            _ = engine.feedback(
                FeedbackEvent(id: id, user: "u-1", at: pick.at, track: track, signal: .rate, rating: stars, pickId: pick.pickId),
                pick: record, state: &state)
            let bin = try #require(state.binIndex(number: record.binNumber))
            return state.bins[bin].songs.first { $0.trackId == track }.map { [$0.likes, $0.dislikes, $0.rating] }
        }
        #expect(try rate(5, "r-1") == [1, 0, 5])
        #expect(try rate(2, "r-2") == [0, 1, 2], "the 5 stopped counting")
        #expect(try rate(3, "r-3") == [0, 0, 3])
        #expect(try rate(4, "r-4") == [1, 0, 4])
    }

    @Test("Explore 0 makes picks deterministic; the same seed gives the same picks with exploration")
    func explorationIsSeeded() {
        var config = engine.config
        config.exploration = 1
        let e = engine.with(config: config)
        var s1 = e.newUser("u-1"), s2 = e.newUser("u-1")
        let a = e.pick(Fixtures.library(), state: &s1, top: 10).pick
        let b = e.pick(Fixtures.library(), state: &s2, top: 10).pick
        #expect(a.track == b.track)
        #expect(a.track.id != a.ranked[0].id, "an exploration draw plays one of the next best")
        #expect(a.ranked.map(\.id).contains(a.track.id))
    }

    @Test("A liked track from another context of the user is ranked by the user's taste")
    func tasteAcrossBins() throws {
        var config = engine.config
        config.exploration = 0
        config.repeatWindow = 0  // the liked track was just played: allow it again
        let e = engine.with(config: config).with(community: SharedCommunity())
        var state = e.newUser("u-1")
        let (gymPick, gymRecord) = e.pick(Fixtures.gym(), state: &state)
        for i in 0..<3 {
            _ = e.feedback(
                FeedbackEvent(id: "like-\(i)", user: "u-1", at: gymPick.at, track: gymPick.track.id, signal: .like, pickId: gymPick.pickId),
                pick: gymRecord, state: &state)
        }
        let libraryPick = e.pick(Fixtures.library(), state: &state, top: 200).pick
        let position = libraryPick.ranked.firstIndex { $0.id == gymPick.track.id }
        #expect(position != nil, "the user's liked track is a candidate in another context")
    }

    @Test("The community's co-likes give collaborative scores: a track liked by people who like yours")
    func collaborativeScores() {
        var c = Community()
        c.record(user: "a", row: 1, like: true, dislike: false, attributes: [])
        c.record(user: "a", row: 2, like: true, dislike: false, attributes: [])
        c.record(user: "b", row: 1, like: true, dislike: false, attributes: [])
        c.record(user: "b", row: 3, like: true, dislike: false, attributes: [])
        // Row 1 has 2 likers, rows 2 and 3 one each: cos(1, 2) = 1 / √2.
        let s = c.neighbourScores(of: [1], liked: true)
        #expect(abs(s[2]! - 1 / Float(2).squareRoot()) < 1e-6)
        #expect(abs(s[3]! - 1 / Float(2).squareRoot()) < 1e-6)
        #expect(s[1] == nil, "the profile's own tracks are left out")
        #expect(c.stats(of: 1).likers == 2 && c.stats(of: 1).likes == 2 && c.maxLikes == 2)
    }
}
