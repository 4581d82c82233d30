import Foundation
import SoundtrackCatalog
import SoundtrackContext

extension Quiz {
    /// Draws a round from a person's bins and the feedback they hold (docs/scoring.md, "Quiz").
    ///
    /// A song is *liked in a bin* when the bin holds it with at least one like (a like, a
    /// completed play, a rating of 4 or 5) and more likes than dislikes. Questions alternate
    /// between the two kinds, starting with ``Kind/likedIn``, each about a song no other question
    /// of the round is about; a kind that has no question left gives its turn to the other:
    /// - ``Kind/likedIn``: a bin and a song liked in it (bins not asked yet first). Wrong choices:
    ///   up to two of the person's own songs not liked in that bin (disliked there, or liked only in
    ///   other bins), the rest catalog tracks the person has not liked anywhere.
    /// - ``Kind/whereHeard``: a liked song whose bin of most likes is unique (its right answer), with
    ///   three other bins where it has no like as the wrong choices; a person with fewer than four
    ///   bins gets none of these.
    /// Choices have distinct ids and texts and the right one's place is drawn at random.
    ///
    /// - Parameters:
    ///   - number: the person's count of rounds issued, this one included; with `seed` and the
    ///     user it seeds the draw, so the same history and number give the same round.
    ///   - state: the person's state (their bins and songs).
    ///   - catalog: titles and artists, and the tracks wrong choices are drawn from.
    ///   - seed: the engine's seed.
    ///   - at: the time of issue.
    /// - Throws: ``RuleError/tooLittleHistory(user:likedSongs:bins:)`` when the person has liked
    ///   fewer than ``minimumLikedSongs`` songs or in fewer than ``minimumBins`` bins (or the
    ///   catalog is too small to give every question its wrong choices).
    public static func draw(number: Int64, state: UserState, catalog: any CatalogSource, seed: UInt64, at: Date) throws(RuleError) -> Quiz {
        var rng = SeededGenerator(seed: seed ^ 0x7175_697a, user: state.user, counter: number)  // "quiz"
        let id = "qz-" + String(String(rng.next(), radix: 16).suffix(12)).leftPadded(to: 12)
        var drawer = QuizDrawer(state: state, catalog: catalog)
        let tooLittle = RuleError.tooLittleHistory(user: state.user, likedSongs: drawer.likedSongs.count, bins: drawer.likedBins)
        guard drawer.likedSongs.count >= minimumLikedSongs, drawer.likedBins >= minimumBins else { throw tooLittle }
        var questions: [Question] = []
        for slot in 0..<questionCount {
            let kinds: [Kind] = slot % 2 == 0 ? [.likedIn, .whereHeard] : [.whereHeard, .likedIn]
            guard let q = drawer.next(kinds[0], rng: &rng) ?? drawer.next(kinds[1], rng: &rng) else { throw tooLittle }
            questions.append(q)
        }
        return Quiz(id: id, number: number, user: state.user, issuedAt: at, questions: questions)
    }
}

extension String {
    fileprivate func leftPadded(to n: Int) -> String {
        count >= n ? self : String(repeating: "0", count: n - count) + self
    }
}

/// What a round is drawn from: the person's liked songs by bin, and the questions left.
struct QuizDrawer {
    let state: UserState
    let catalog: any CatalogSource
    /// Every song liked in some bin, in the order first met (bins by position, songs in bin order).
    private(set) var likedSongs: [String] = []
    /// How many bins hold a song liked there.
    private(set) var likedBins = 0
    /// Songs with a like in any bin: never a wrong choice drawn from the catalog.
    private var withLikes: Set<String> = []
    /// The ``Quiz/Kind/likedIn`` questions left: (bin position, song).
    private var likedPairs: [(bin: Int, song: String)] = []
    /// The ``Quiz/Kind/whereHeard`` questions left: (song, the position of its bin of most likes).
    private var whereSongs: [(song: String, bin: Int)] = []
    private var shuffled = false
    private var usedSongs: Set<String> = []
    private var askedBins: Set<Int> = []
    private var texts: [String: String] = [:]

    init(state: UserState, catalog: any CatalogSource) {
        self.state = state
        self.catalog = catalog
        var seen = Set<String>()
        for (b, bin) in state.bins.enumerated() {
            var any = false
            for s in bin.songs {
                if s.likes > 0 { withLikes.insert(s.trackId) }
                guard Self.liked(s) else { continue }
                any = true
                likedPairs.append((b, s.trackId))
                if seen.insert(s.trackId).inserted { likedSongs.append(s.trackId) }
            }
            if any { likedBins += 1 }
        }
        for song in likedSongs {
            let likes = state.bins.map { bin in bin.songIndex(song).map { bin.songs[$0].likes } ?? 0 }
            guard let top = likes.indices.max(by: { likes[$0] < likes[$1] }) else { continue }
            let unique = likes.enumerated().allSatisfy { $0.offset == top || $0.element < likes[top] }
            if unique, likes.filter({ $0 == 0 }).count >= Quiz.choiceCount - 1 { whereSongs.append((song, top)) }
        }
        let ids = Array(withLikes.union(state.bins.flatMap { $0.songs.map(\.trackId) }))
        for (id, track) in catalog.tracks(ids: ids) { texts[id] = Self.text(track) }
    }

    /// Liked in a bin: at least one like and more likes than dislikes there.
    static func liked(_ s: BinSong) -> Bool { s.likes >= 1 && s.likes > s.dislikes }

    static func text(_ track: Track) -> String { "\(track.title) — \(track.artist)" }

    /// The next question of a kind, or `nil` when none is left.
    mutating func next(_ kind: Quiz.Kind, rng: inout SeededGenerator) -> Quiz.Question? {
        if !shuffled {
            Self.shuffle(&likedPairs, rng: &rng)
            Self.shuffle(&whereSongs, rng: &rng)
            shuffled = true
        }
        switch kind {
        case .likedIn:
            // Bins not asked yet first, then any.
            for anyBin in [false, true] {
                while let i = likedPairs.firstIndex(where: { !usedSongs.contains($0.song) && (anyBin || !askedBins.contains($0.bin)) }) {
                    let (bin, song) = likedPairs.remove(at: i)
                    if let q = likedIn(bin: bin, song: song, rng: &rng) {
                        usedSongs.insert(song)
                        askedBins.insert(bin)
                        return q
                    }
                }
            }
        case .whereHeard:
            while let i = whereSongs.firstIndex(where: { !usedSongs.contains($0.song) }) {
                let (song, bin) = whereSongs.remove(at: i)
                if let q = whereHeard(song: song, bin: bin, rng: &rng) {
                    usedSongs.insert(song)
                    return q
                }
            }
        }
        return nil
    }

    /// "Which of these songs did you like in “label”?"
    private func likedIn(bin b: Int, song: String, rng: inout SeededGenerator) -> Quiz.Question? {
        let bin = state.bins[b]
        guard let right = texts[song] else { return nil }
        var chosen = [Quiz.Choice(id: song, text: right)]
        // The person's own songs not liked here: disliked here, or liked only elsewhere.
        var own: [String] = bin.songs.filter { $0.likes == 0 && $0.dislikes >= 1 }.map(\.trackId)
        for id in likedSongs where id != song && !own.contains(id) {
            if bin.songIndex(id).map({ bin.songs[$0].likes == 0 }) ?? true { own.append(id) }
        }
        Self.shuffle(&own, rng: &rng)
        for id in own where chosen.count < 3 {
            if let text = texts[id], !chosen.contains(where: { $0.id == id || $0.text == text }) { chosen.append(.init(id: id, text: text)) }
        }
        // Catalog tracks the person has not liked anywhere.
        let index = catalog.index()
        var tries = 0
        while chosen.count < Quiz.choiceCount, index.count > 0, tries < 256 {
            tries += 1
            let id = index.id(ofRow: Int(rng.next() % UInt64(index.count)))
            guard !withLikes.contains(id), !chosen.contains(where: { $0.id == id }), let track = catalog.track(id: id) else { continue }
            let text = Self.text(track)
            if !chosen.contains(where: { $0.text == text }) { chosen.append(.init(id: id, text: text)) }
        }
        guard chosen.count == Quiz.choiceCount else { return nil }
        return Self.question(.likedIn, "Which of these songs did you like in “\(bin.label)”?", subject: bin.id, chosen, rng: &rng)
    }

    /// "Where do you usually hear “song”?"
    private func whereHeard(song: String, bin top: Int, rng: inout SeededGenerator) -> Quiz.Question? {
        guard let songText = texts[song] else { return nil }
        var others = state.bins.indices.filter { i in i != top && (state.bins[i].songIndex(song).map { state.bins[i].songs[$0].likes == 0 } ?? true) }
        Self.shuffle(&others, rng: &rng)
        var chosen = [Quiz.Choice(id: state.bins[top].id, text: state.bins[top].label)]
        for i in others where chosen.count < Quiz.choiceCount {
            let label = state.bins[i].label
            if !chosen.contains(where: { $0.text == label }) { chosen.append(.init(id: state.bins[i].id, text: label)) }
        }
        guard chosen.count == Quiz.choiceCount else { return nil }
        return Self.question(.whereHeard, "Where do you usually hear “\(songText)”?", subject: song, chosen, rng: &rng)
    }

    /// A question whose right choice is `chosen[0]`, the choices in a random order.
    private static func question(_ kind: Quiz.Kind, _ text: String, subject: String, _ chosen: [Quiz.Choice], rng: inout SeededGenerator) -> Quiz.Question {
        var order = Array(chosen.indices)
        shuffle(&order, rng: &rng)
        return Quiz.Question(kind: kind, text: text, subject: subject, choices: order.map { chosen[$0] }, answer: order.firstIndex(of: 0)! + 1)
    }

    /// Fisher–Yates with the seeded generator (the same order in every process).
    static func shuffle<T>(_ a: inout [T], rng: inout SeededGenerator) {
        guard a.count > 1 else { return }
        for i in stride(from: a.count - 1, to: 0, by: -1) {
            a.swapAt(i, Int(rng.next() % UInt64(i + 1)))
        }
    }
}
