import Foundation
import SoundtrackCatalog
import SoundtrackContext
import Testing

@testable import SoundtrackEngine

/// The music quiz's draw and scoring (docs/scoring.md, "Quiz"): a round from a person's bins and
/// the feedback they hold, with a seeded generator.
@Suite("Quiz")
struct QuizTests {
    static let catalog = IndexCatalog(Fixtures.catalog)
    static func track(_ i: Int) -> String { Fixtures.catalog.tracks[i].id }

    static func bin(_ number: Int, _ label: String, _ songs: [BinSong]) -> Bin {
        let zero = [Float](repeating: 0, count: FeatureLayout.dimension)
        let at = Date(timeIntervalSince1970: 1_773_000_000)
        return Bin(
            number: number, label: label, centroid: zero, spread: zero, observed: zero, observations: 3, songs: songs, prior: nil,
            createdAt: at, updatedAt: at)
    }

    static func state(_ bins: [Bin]) -> UserState {
        Fixtures.engine().newUser("u-1").with(bins: bins)
    }

    /// Four bins: each with two songs liked there (one of them also liked less in another bin), a
    /// song disliked there, and seeded songs without feedback.
    static let fourBins: UserState = state([
        bin(
            1, "weekday morning · home", [.init(trackId: track(0), likes: 3), .init(trackId: track(1), likes: 1), .init(trackId: track(2), dislikes: 2), .init(trackId: track(20))]),
        bin(
            2, "weekday afternoon · gym · workout",
            [.init(trackId: track(3), likes: 2), .init(trackId: track(4), likes: 4, dislikes: 1), .init(trackId: track(0), likes: 1), .init(trackId: track(5), dislikes: 1)]),
        bin(3, "weekday morning · car", [.init(trackId: track(6), likes: 1), .init(trackId: track(7), likes: 2), .init(trackId: track(8), likes: 1, dislikes: 3)]),
        bin(4, "weekday evening · rainy · speaker", [.init(trackId: track(9), likes: 5), .init(trackId: track(10), likes: 1), .init(trackId: track(21))])
    ])

    static let at = Date(timeIntervalSince1970: 1_773_000_500)

    static func draw(_ state: UserState = fourBins, number: Int64 = 1, seed: UInt64 = 42) throws -> Quiz {
        try Quiz.draw(number: number, state: state, catalog: catalog, seed: seed, at: at)
    }

    static func likes(_ state: UserState, bin id: String, song: String) -> (likes: Int, dislikes: Int) {
        let bin = state.bins.first { $0.id == id }!
        return bin.songIndex(song).map { (bin.songs[$0].likes, bin.songs[$0].dislikes) } ?? (0, 0)
    }

    @Test("The same history, seed and number give the same round; another number or seed another")
    func deterministic() throws {
        let a = try Self.draw(), b = try Self.draw()
        #expect(a == b)
        #expect(a.id.hasPrefix("qz-") && a.id.count == 15)
        #expect(try Self.draw(number: 2) != a)
        #expect(try Self.draw(seed: 7) != a)
        #expect(try Self.draw(number: 2).id != a.id)
    }

    @Test("Five questions of four distinct choices, the right one in place, about five different songs", arguments: Array(Int64(1)...Int64(40)))
    func shape(number: Int64) throws {
        let state = Self.fourBins
        let quiz = try Self.draw(number: number)
        #expect(quiz.questions.count == 5 && quiz.user == "u-1" && quiz.issuedAt == Self.at)
        var songs = Set<String>()
        for (i, q) in quiz.questions.enumerated() {
            #expect(q.choices.count == 4)
            #expect(Set(q.choices.map(\.id)).count == 4 && Set(q.choices.map(\.text)).count == 4, "\(q)")
            #expect((1...4).contains(q.answer))
            let right = q.choices[q.answer - 1]
            // The kinds alternate (a person of four bins has questions of both left).
            #expect(q.kind == (i % 2 == 0 ? .likedIn : .whereHeard), "\(quiz.questions.map(\.kind))")
            switch q.kind {
            case .likedIn:
                let label = state.bins.first { $0.id == q.subject }!.label
                #expect(q.text == "Which of these songs did you like in “\(label)”?")
                let (l, d) = Self.likes(state, bin: q.subject, song: right.id)
                #expect(l >= 1 && l > d, "the right song is liked in the bin")
                for c in q.choices where c.id != right.id {
                    #expect(Self.likes(state, bin: q.subject, song: c.id).likes == 0, "a wrong choice has no like in the bin")
                }
                let track = Self.catalog.track(id: right.id)!
                #expect(right.text == "\(track.title) — \(track.artist)")
                #expect(songs.insert(right.id).inserted)
            case .whereHeard:
                let counts = state.bins.map { Self.likes(state, bin: $0.id, song: q.subject).likes }
                let top = state.bins[counts.firstIndex(of: counts.max()!)!]
                #expect(right.id == top.id && right.text == top.label)
                #expect(counts.filter { $0 == counts.max()! }.count == 1)
                for c in q.choices where c.id != right.id {
                    #expect(Self.likes(state, bin: c.id, song: q.subject).likes == 0, "a wrong bin has no like of the song")
                }
                #expect(songs.insert(q.subject).inserted)
            }
        }
    }

    @Test("The right answer's place is drawn: over 40 rounds it takes every place")
    func answersMove() throws {
        let places = try (1...40).flatMap { try Self.draw(number: Int64($0)).questions.map(\.answer) }
        #expect(Set(places) == [1, 2, 3, 4])
    }

    @Test("Liked songs whose wrong choices come from the person: disliked there or liked elsewhere, at most two")
    func ownDistractors() throws {
        var offered = 0
        for n in 1...20 {
            for q in try Self.draw(number: Int64(n)).questions where q.kind == .likedIn {
                let own = q.choices.filter { c in c.id != q.choices[q.answer - 1].id && Self.fourBins.bins.contains { $0.songIndex(c.id) != nil } }
                #expect(own.count <= 2)
                offered += own.count
            }
        }
        // The person's own songs are offered as wrong choices, not only catalog tracks.
        #expect(offered > 0)
    }

    @Test("Fewer than four bins: only questions of songs liked in a bin")
    func threeBins() throws {
        let state = Self.state(Array(Self.fourBins.bins.prefix(3)))
        let quiz = try Self.draw(state)
        #expect(quiz.questions.allSatisfy { $0.kind == .likedIn })
        #expect(Set(quiz.questions.map { $0.choices[$0.answer - 1].id }).count == 5)
    }

    @Test("Too little history: fewer than 5 liked songs, or all in one bin, is a typed error with the counts")
    func tooLittleHistory() throws {
        // Four liked songs in two bins (a song with more dislikes than likes does not count).
        let four = Self.state([
            Self.bin(1, "home", [.init(trackId: Self.track(0), likes: 1), .init(trackId: Self.track(1), likes: 2), .init(trackId: Self.track(2), likes: 1, dislikes: 1)]),
            Self.bin(2, "gym", [.init(trackId: Self.track(3), likes: 1), .init(trackId: Self.track(0), likes: 1), .init(trackId: Self.track(4))])
        ])
        #expect(throws: RuleError.tooLittleHistory(user: "u-1", likedSongs: 3, bins: 2)) { try Self.draw(four) }
        let oneBin = Self.state([Self.bin(1, "home", (0..<8).map { .init(trackId: Self.track($0), likes: 1) })])
        #expect(throws: RuleError.tooLittleHistory(user: "u-1", likedSongs: 8, bins: 1)) { try Self.draw(oneBin) }
        #expect(throws: RuleError.tooLittleHistory(user: "u-1", likedSongs: 0, bins: 0)) { try Self.draw(Self.state([])) }
        let error = RuleError.tooLittleHistory(user: "u-1", likedSongs: 3, bins: 2)
        #expect(error.field == "user" && error.description.contains("at least 5 songs liked, in at least 2 bins") && error.description.contains("3 liked songs in 2 bins"))
        // Exactly the minimum: a round.
        let five = Self.state([
            Self.bin(1, "home", [.init(trackId: Self.track(0), likes: 1), .init(trackId: Self.track(1), likes: 1), .init(trackId: Self.track(2), likes: 1)]),
            Self.bin(2, "gym", [.init(trackId: Self.track(3), likes: 1), .init(trackId: Self.track(4), likes: 1)])
        ])
        #expect(try Self.draw(five).questions.count == 5)
    }

    @Test("Points: 1000 at once, 500 at the 20 s limit, 0 after it or when wrong")
    func points() {
        #expect(Quiz.points(correct: true, seconds: 0) == 1000)
        #expect(Quiz.points(correct: true, seconds: -3) == 1000)
        #expect(Quiz.points(correct: true, seconds: 10) == 750)
        #expect(Quiz.points(correct: true, seconds: 2.5) == 938)
        #expect(Quiz.points(correct: true, seconds: 20) == 500)
        #expect(Quiz.points(correct: true, seconds: 20.001) == 0)
        #expect(Quiz.points(correct: false, seconds: 1) == 0)
        let quiz = try! Self.draw()
        let answers = quiz.questions.map(\.answer)
        let wrong = answers.map { $0 % 4 + 1 }
        let results = quiz.grade(choices: [answers[0], wrong[1], answers[2], answers[3], answers[4]], seconds: [0, 1, 10, 20, 30])
        #expect(results.map(\.points) == [1000, 0, 750, 500, 0])
        #expect(results.map(\.correct) == [true, false, true, true, true])
        // A round shown whole: the time from issue to the answers shared evenly, never below 0.
        #expect(quiz.evenSeconds(answeredAt: Self.at.addingTimeInterval(50)) == [10, 10, 10, 10, 10])
        #expect(quiz.evenSeconds(answeredAt: Self.at.addingTimeInterval(-5)) == [0, 0, 0, 0, 0])
    }

    @Test("Answers read: five choices 1-4, errors naming the field")
    func choices() throws {
        #expect(try Quiz.choices([1, 2, 3, 4, 1].map { .number($0) }) == [1, 2, 3, 4, 1])
        #expect(throws: InputError(path: "answers", expected: "5 choices, one a question", got: "4")) { try Quiz.choices([1, 2, 3, 4].map { .number($0) }) }
        #expect(throws: InputError(path: "answers[2]", expected: "a choice 1, 2, 3 or 4", got: "5")) { try Quiz.choices([1, 2, 5, 4, 1].map { .number($0) }) }
        #expect(throws: InputError.self) { try Quiz.choices([.number(1), .number(2), .number(2.5), .number(4), .number(1)]) }
        #expect(throws: InputError.self) { try Quiz.choices([.number(1), .string("2"), .number(3), .number(4), .number(1)]) }
        #expect(try Quiz.choice(" 3 ", field: "answers[0]") == 3)
        #expect(throws: InputError(path: "answers[1]", expected: "a choice 1, 2, 3 or 4", got: "\"0\"")) { try Quiz.choice("0", field: "answers[1]") }
        #expect(throws: InputError(path: "answers[1]", expected: "a choice 1, 2, 3 or 4", got: "nothing")) { try Quiz.choice("", field: "answers[1]") }
    }

    @Test("The round as JSON has no answers")
    func json() throws {
        let quiz = try Self.draw()
        let json = quiz.json
        #expect(json["quiz"] == .string(quiz.id) && json["time_limit_seconds"] == .number(20))
        guard case let .array(questions)? = json["questions"] else { throw QuizJSONHasNoQuestions() }
        #expect(questions.count == 5 && questions.allSatisfy { $0["answer"] == nil && $0["choices"] != nil })
    }

    struct QuizJSONHasNoQuestions: Error {}
}

extension UserState {
    /// The state with other bins.
    fileprivate func with(bins: [Bin]) -> UserState {
        var s = self
        s.bins = bins
        return s
    }
}
