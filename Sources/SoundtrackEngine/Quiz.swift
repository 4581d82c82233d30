import Foundation
import SoundtrackContext

/// A round of the music quiz: five questions drawn from a person's own bins and feedback, each
/// with four choices of which one is right (docs/scoring.md, "Quiz").
///
/// A round is drawn by ``draw(number:state:catalog:seed:at:)`` and graded by ``grade(choices:seconds:)``;
/// the store keeps it with its right answers, the front ends show ``json`` (which leaves them out).
///
/// ```swift
/// let quiz = try Quiz.draw(number: 1, state: state, catalog: catalog, seed: 42, at: now)
/// let graded = quiz.grade(choices: [1, 3, 2, 4, 1], seconds: [2.5, 4, 3, 6, 1.5])
/// print(graded.map(\.points).reduce(0, +))
/// ```
public struct Quiz: Sendable, Equatable {
    /// Questions in a round.
    public static let questionCount = 5
    /// Choices of a question.
    public static let choiceCount = 4
    /// The seconds a question may take: a right answer after it scores 0.
    public static let timeLimit: Double = 20
    /// The points of a right answer given at once; one given at the time limit scores half.
    public static let maxPoints = 1000
    /// The fewest songs a person must have liked (in some bin) to get a round.
    public static let minimumLikedSongs = 5
    /// The fewest bins that must hold a song the person liked there.
    public static let minimumBins = 2
    /// The rounds kept a person: issuing one more deletes the oldest (the best score stays).
    public static let keptRounds = 50

    /// What a question asks.
    public enum Kind: String, Sendable, Equatable {
        /// "Which of these songs did you like in “<bin label>”?": the choices are songs.
        case likedIn = "liked_in"
        /// "Where do you usually hear “<song>”?": the choices are bins (their labels).
        case whereHeard = "where_heard"
    }

    /// One choice: a track (`spotify:track:…`) or a bin (`b-3`), and the text shown.
    public struct Choice: Sendable, Equatable {
        /// The track id or the bin id.
        public var id: String
        /// `Title — Artist`, or the bin's label.
        public var text: String

        /// Creates a choice.
        public init(id: String, text: String) {
            self.id = id
            self.text = text
        }
    }

    /// One question with its choices and the right one.
    public struct Question: Sendable, Equatable {
        /// What it asks.
        public var kind: Kind
        /// The question as shown.
        public var text: String
        /// What it is about: the bin's id (``Kind/likedIn``) or the track's id (``Kind/whereHeard``).
        public var subject: String
        /// Four choices with distinct ids and texts.
        public var choices: [Choice]
        /// The right choice, 1…4.
        public var answer: Int

        /// Creates a question.
        public init(kind: Kind, text: String, subject: String, choices: [Choice], answer: Int) {
            self.kind = kind
            self.text = text
            self.subject = subject
            self.choices = choices
            self.answer = answer
        }
    }

    /// How one answer fared.
    public struct Result: Sendable, Equatable {
        /// The choice given, 1…4.
        public var choice: Int
        /// The right choice, 1…4.
        public var answer: Int
        /// The seconds the answer counted as taking.
        public var seconds: Double
        /// The points it scored (``Quiz/points(correct:seconds:)``).
        public var points: Int

        /// Whether the choice was the right one.
        public var correct: Bool { choice == answer }

        /// Creates a result.
        public init(choice: Int, answer: Int, seconds: Double, points: Int) {
            self.choice = choice
            self.answer = answer
            self.seconds = seconds
            self.points = points
        }
    }

    /// The round's id, `qz-` and 12 hex digits: unique among the person's rounds.
    public var id: String
    /// The person's count of rounds issued, this one included: what seeds its draw.
    public var number: Int64
    /// The person.
    public var user: String
    /// When it was issued.
    public var issuedAt: Date
    /// The questions, ``questionCount`` of them.
    public var questions: [Question]

    /// Creates a round.
    public init(id: String, number: Int64, user: String, issuedAt: Date, questions: [Question]) {
        self.id = id
        self.number = number
        self.user = user
        self.issuedAt = issuedAt
        self.questions = questions
    }

    /// The points of one answer: `round(1000 × (1 − t / 40))` for a right one given within the
    /// time limit of 20 s (1000 at once, 500 at the limit), 0 for a wrong or a late one.
    public static func points(correct: Bool, seconds: Double) -> Int {
        guard correct, seconds <= timeLimit else { return 0 }
        let t = max(0, seconds)
        return Int((Double(maxPoints) * (1 - t / (2 * timeLimit))).rounded())
    }

    /// The seconds each question counts as taking when the round was shown whole (the app's
    /// round, `GET /v1/users/{id}/quiz` or `soundtrack quiz --json`): the time from issue to the
    /// answers (as the server's clock measures it, never below 0), shared evenly.
    public func evenSeconds(answeredAt: Date) -> [Double] {
        Self.evenSeconds(issuedAt: issuedAt, answeredAt: answeredAt, count: questions.count)
    }

    /// ``evenSeconds(answeredAt:)`` of a round of `count` questions issued at `issuedAt`.
    public static func evenSeconds(issuedAt: Date, answeredAt: Date, count: Int) -> [Double] {
        let elapsed = max(0, answeredAt.timeIntervalSince(issuedAt))
        return Array(repeating: elapsed / Double(max(1, count)), count: count)
    }

    /// Grades the answers: `choices` and `seconds` one a question, in order.
    public func grade(choices: [Int], seconds: [Double]) -> [Result] {
        precondition(choices.count == questions.count && seconds.count == questions.count, "one choice and one time a question")
        return Self.grade(answers: questions.map(\.answer), choices: choices, seconds: seconds)
    }

    /// Grades choices against the right answers (as the store keeps them), one a question.
    public static func grade(answers: [Int], choices: [Int], seconds: [Double]) -> [Result] {
        precondition(choices.count == answers.count && seconds.count == answers.count, "one choice and one time a question")
        return answers.indices.map { i in
            Result(choice: choices[i], answer: answers[i], seconds: seconds[i], points: points(correct: choices[i] == answers[i], seconds: seconds[i]))
        }
    }

    /// Reads the choices of an answer, one a question: each 1…4; errors name `field[i]`.
    /// - Throws: ``InputError`` naming the field (`answers`, `answers[2]`).
    public static func choices(_ values: [JSONValue], field: String = "answers") throws(InputError) -> [Int] {
        guard values.count == questionCount else {
            throw InputError(path: field, expected: "\(questionCount) choices, one a question", got: "\(values.count)")
        }
        var out: [Int] = []
        for (i, v) in values.enumerated() {
            guard case let .number(x) = v, x == x.rounded(), x >= 1, x <= Double(choiceCount) else {
                throw InputError(path: "\(field)[\(i)]", expected: "a choice 1, 2, 3 or 4", got: JSONObjectReader.describe(v))
            }
            out.append(Int(x))
        }
        return out
    }

    /// Reads one typed answer (`" 3 "`): a choice 1…4.
    /// - Throws: ``InputError`` naming `field`.
    public static func choice(_ text: Substring, field: String) throws(InputError) -> Int {
        let t = text.trimmingCharacters(in: .whitespaces)
        guard let n = Int(t), (1...choiceCount).contains(n) else {
            throw InputError(path: field, expected: "a choice 1, 2, 3 or 4", got: t.isEmpty ? "nothing" : JSONObjectReader.quote(String(t.prefix(40))))
        }
        return n
    }
}
