import Foundation
import SoundtrackCatalog
import SoundtrackContext

extension Recommender {
    /// Onboarding: the user names one song they want to hear now; that song and the current
    /// snapshot make a bin, and songs similar to it fill the bin.
    ///
    /// The context goes to the best bin when one fits (score at or above the creation threshold),
    /// otherwise to a new bin centred on the snapshot. The chosen song joins it as liked (choosing
    /// it is a like); the songs of `library` most similar to it come next, then the catalog's nearest
    /// tracks by audio features and genres, up to ``EngineConfig/seedTracksPerNewBin`` songs in all.
    /// Those songs join without likes: the user's feedback on them decides, through the usual loop,
    /// whether they stay (likes put them first) or not (dislikes sink them, and three in a row start
    /// another bin for this context).
    ///
    /// The returned pick plays the chosen song (`source` = `onboarding`), so feedback can name it.
    /// - Parameters:
    ///   - snapshot: the current snapshot (its user must be `state.user`).
    ///   - song: the track id the user chose; it must be in the catalog.
    ///   - library: track ids of the user's own library (e.g. saved tracks); preferred over the
    ///     catalog when similar enough. Ids missing from the catalog are ignored.
    ///   - state: the user's state, changed in place.
    ///
    /// The song must be in the catalog: the rules refuse another (``Rules``, `unknownTrack` of `song`).
    public func onboard(_ snapshot: Snapshot, song: String, library: [String] = [], state: inout UserState) -> (pick: Pick, record: PickRecord) {
        precondition(snapshot.user == state.user, "snapshot of another user")
        let index = catalog.index()
        guard let songRow = index.row(of: song) else {
            preconditionFailure("onboarding to a song the catalog lacks: the rules refuse it (unknownTrack)")
        }
        let at = snapshot.at.date
        var rng = SeededGenerator(seed: seed, user: state.user, counter: state.pickCounter)
        let x = features(of: snapshot, state: &state)
        beginSession(at: at, state: &state)

        let fill = onboardingSongs(like: songRow, library: library, count: config.seedTracksPerNewBin - 1, index: index, state: state)
        let ranking = rank(x, state: &state)
        let binIdx: Int
        let created: Bool
        if let best = ranking.first, best.score >= config.createBinBelow, let i = state.binIndex(number: best.bin) {
            binIdx = i
            created = false
            let number = state.bins[i].number
            if let s = state.bins[i].songIndex(song) {
                state.bins[i].songs[s].likes += 1
            } else {
                state.bins[i].songs.append(BinSong(trackId: song, likes: 1))
            }
            state.changes.songs.insert(number)
            for id in fill where state.bins[i].songIndex(id) == nil {
                state.bins[i].songs.append(BinSong(trackId: id))
                state.changes.songs.insert(number)
            }
            pull(binIndex: i, toward: x, at: at, state: &state)
        } else {
            let seeds = [BinSong(trackId: song, likes: 1)] + fill.map { BinSong(trackId: $0) }
            binIdx = createBin(x, at: at, nearest: nil, seedSongs: seeds, state: &state, rng: &rng)
            created = true
        }
        let score = rank(x, state: &state).first { $0.bin == state.bins[binIdx].number }?.score ?? 1
        let bin = state.bins[binIdx]

        let counter = state.pickCounter
        let pickId = Self.pickId(seed: seed, user: state.user, counter: counter)
        state.pickCounter += 1
        state.changes.counters = true
        remember(track: song, state: &state)
        state.session.currentBin = bin.number
        state.session.dislikeStreak = 0
        state.session.lastAt = at

        // The index may hold only what similarity needs; titles come from the catalog.
        let meta = catalog.track(id: song) ?? index.tracks[songRow]
        let summary = Pick.TrackSummary(id: song, title: meta.title, artist: meta.artist)
        let alternatives = self.alternatives(ranking, besides: bin.number, state: &state)  // avoids the recent tracks, the song among them
        var pick = Pick(
            pickId: pickId, user: state.user, at: snapshot.at,
            bin: .init(id: bin.id, label: bin.label, score: score, created: created),
            track: summary, ranked: [summary], alternatives: alternatives,
            why: explain(binIndex: binIdx, x: x, state: &state), source: "onboarding", blend: ranker.version)
        pick.volume = learnedVolume(binIndex: binIdx, state: state)
        let record = PickRecord(
            pickId: pickId, user: state.user, at: at, binNumber: bin.number, trackId: song, features: x, ranking: ranking)
        return (pick, record)
    }

    /// The songs that fill an onboarding bin: library tracks similar to the chosen one first (those
    /// scoring at least as well as the catalog's `count`-th nearest track), then the catalog's nearest.
    func onboardingSongs(like row: Int, library: [String], count: Int, index: CatalogIndex, state: UserState) -> [String] {
        guard count > 0 else { return [] }
        var excluded: Set<Int> = [row]
        for id in state.recentTracks { if let r = index.row(of: id) { excluded.insert(r) } }
        let nearest = index.similar(toTrack: row, k: count, excluding: excluded)
        var out: [String] = []
        if !library.isEmpty, let floor = nearest.last?.score {
            let rows = Set(library.compactMap { index.row(of: $0) }).subtracting(excluded)
            let scored = index.similar(toTrack: row, k: index.count, excluding: excluded).filter { rows.contains($0.row) && $0.score >= floor * 0.9 }
            for hit in scored.prefix(count) {
                out.append(index.id(ofRow: hit.row))
                excluded.insert(hit.row)
            }
        }
        for hit in nearest where out.count < count && !excluded.contains(hit.row) {
            out.append(index.id(ofRow: hit.row))
        }
        return out
    }
}
