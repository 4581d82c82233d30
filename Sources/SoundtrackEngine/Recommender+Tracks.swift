import Foundation
import SoundtrackCatalog
import SoundtrackContext

extension Recommender {
    // MARK: - Tracks

    /// Up to `count` tracks from a bin: liked songs first, Thompson sampling on like/dislike counts
    /// within each tier with some exploration, and no track of the repeat window. A bin that runs dry
    /// is refilled with similar catalog tracks, which join it as new songs. Returns the ids and where
    /// the first one came from (`bin`, or `catalog` for a refill).
    func chooseTracks(binIndex: Int, count: Int, state: inout UserState, rng: inout SeededGenerator) -> ([String], String) {
        var ids = rankSongs(binIndex: binIndex, count: count, state: state, rng: &rng)
        var source = "bin"
        if ids.count < count {
            if ids.isEmpty { source = "catalog" }
            let recent = Set(state.recentTracks.suffix(config.repeatWindow))
            let refill = similarCatalogTracks(
                for: state.bins[binIndex], count: max(count - ids.count, config.seedTracksPerNewBin),
                avoiding: recent.union(ids), rng: &rng)
            let number = state.bins[binIndex].number
            for id in refill where state.bins[binIndex].songIndex(id) == nil {
                state.bins[binIndex].songs.append(BinSong(trackId: id))
                state.changes.songs.insert(number)
            }
            ids += refill.prefix(count - ids.count)
        }
        return (ids, source)
    }

    /// The bin's songs outside `avoiding`, ordered for playing: tier (liked first, unless this is an
    /// exploration draw), then a Thompson sample of Beta(1 + likes, 1 + dislikes).
    func rankSongs(binIndex: Int, count: Int, state: UserState, rng: inout SeededGenerator) -> [String] {
        struct Candidate {
            var tier: Int
            var sample: Double
            var index: Int
        }
        @inline(__always) func before(_ a: Candidate, _ b: Candidate) -> Bool {
            a.tier != b.tier ? a.tier > b.tier : a.sample > b.sample
        }
        guard count > 0 else { return [] }
        let explore = rng.unit() < 0.15
        let window = config.repeatWindow
        return state.bins.withUnsafeBufferPointer { bins in
            bins[binIndex].songs.withUnsafeBufferPointer { songs in
                // The `count` best in (tier, sample) order, earlier songs first on ties.
                withUnsafeTemporaryAllocation(of: Candidate.self, capacity: count) { buffer in
                    var best = TopK(buffer: buffer)
                    for i in songs.indices where !state.isRecent(songs[i], window: window) {
                        let likes = songs[i].likes, dislikes = songs[i].dislikes
                        best.offer(Candidate(
                            tier: (!explore && likes > dislikes) ? 1 : 0,
                            sample: rng.beta(counts: 1 + likes, 1 + dislikes), index: i), before: before)
                    }
                    return (0..<best.count).map { songs[best[$0].index].trackId }
                }
            }
        }
    }

    /// Catalog tracks whose audio profile and genres fit the bin (its liked songs, else all its songs,
    /// else its prior), for a bin that ran dry.
    func similarCatalogTracks(for bin: Bin, count: Int, avoiding: Set<String>, rng: inout SeededGenerator) -> [String] {
        let index = catalog.index()
        guard index.count > 0 else { return [] }
        let liked = bin.songs.filter { $0.likes > $0.dislikes }.compactMap { index.row(of: $0.trackId) }
        let members = bin.songs.compactMap { index.row(of: $0.trackId) }
        var excluded = Set(members)
        for id in avoiding { if let r = index.row(of: id) { excluded.insert(r) } }
        let basis = liked.isEmpty ? members : liked
        let profile: AudioProfile
        var genres = Set<String>()
        if !basis.isEmpty {
            profile = index.profile(ofRows: basis)
            var counts: [String: Int] = [:]
            for r in basis { for g in index.tracks[r].genres { counts[g, default: 0] += 1 } }
            genres = Set(counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(5).map(\.key))
        } else if let name = bin.prior, let prior = priors.contexts.first(where: { $0.name == name }) {
            profile = prior.profile
            genres = Set(prior.genres)
        } else if let prior = priors.contexts.first(where: { $0.name == "default" }) ?? priors.contexts.first {
            profile = prior.profile
            genres = Set(prior.genres)
        } else {
            return []
        }
        var rows = index.similar(to: profile, genres: genres, k: count * 4, excluding: excluded).map(\.row)
        rows.shuffle(using: &rng)
        return rows.prefix(count).map { index.tracks[$0].id }
    }

    /// The pick's alternatives: the best-ranked bins other than `chosen`, each with its best tracks.
    func alternatives(_ ranking: [RankedBin], besides chosen: Int, state: inout UserState) -> [Pick.Alternative] {
        var out: [Pick.Alternative] = []
        out.reserveCapacity(config.alternatives)
        for rb in ranking where rb.bin != chosen {
            guard out.count < config.alternatives else { break }
            guard let i = state.binIndex(number: rb.bin) else { continue }
            out.append(Pick.Alternative(
                bin: .init(id: Bin.id(rb.bin), label: state.bins[i].label, score: rb.score, created: false),
                tracks: topTracks(ofBin: i, count: config.tracksPerAlternative, state: &state)))
        }
        return out
    }

    /// A bin's best tracks by mean like rate `(likes+1)/(likes+dislikes+2)`, earlier songs first on ties,
    /// for a pick's alternatives.
    func topTracks(ofBin binIndex: Int, count: Int, state: inout UserState) -> [String] {
        guard count > 0 else { return [] }
        // Read first: a mutating access to a bin of a state that shares its bins (the copies that
        // `--read-only` picks from) would copy every bin even when the order is already known.
        if state.bins[binIndex].rateOrder == nil { state.bins[binIndex].orderSongsByRate() }
        let window = config.repeatWindow
        return state.bins.withUnsafeBufferPointer { bins in
            var out: [String] = []
            out.reserveCapacity(count)
            bins[binIndex].songs.withUnsafeBufferPointer { songs in
                for i in bins[binIndex].rateOrder! where !state.isRecent(songs[Int(i)], window: window) {
                    out.append(songs[Int(i)].trackId)
                    if out.count == count { break }
                }
            }
            return out
        }
    }

}
