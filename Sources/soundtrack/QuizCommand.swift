import ArgumentParser
import Foundation
import SoundtrackContext
import SoundtrackEngine
import SoundtrackRules

/// `soundtrack quiz`: a quiz from the person's own music (docs/scoring.md, "Quiz").
struct QuizCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quiz",
        abstract: "A quiz from the person's own music: five questions from their bins and feedback, four choices each.",
        discussion: """
            Without options the round is played here: each question with its choices 1-4, one answer a line on \
            standard input; a right answer within 20 s scores up to 1000 points (1000 at once, 500 at 20 s), a \
            wrong or late one 0; the score and the person's best come at the end. --json issues a round as JSON \
            for an app (without its answers); --answers QUIZ:C1,C2,C3,C4,C5 answers it, the time from issue to \
            the answers shared evenly among the questions. A person who has liked fewer than 5 songs, or in \
            fewer than 2 bins, gets no round (exit 2). Rules: docs/scoring.md, "Quiz".
            """)

    @OptionGroup var store: StoreOptions
    @Argument(help: "The user id.", transform: Identifier.normalized) var user: String
    @Flag(help: "Print the round as JSON instead of playing it (with --answers: the results as JSON).") var json = false
    @Option(help: "Answer a round issued with --json: its id, a colon and one choice 1-4 a question (qz-0123456789ab:1,3,2,4,1).")
    var answers: String?
    @Option(help: "The seed of the rounds' draws: the same seed, history and round number give the same round.")
    var seed: UInt64 = 42

    func run() throws {
        let service = try store.open(engine: RankingOptions.Values(seed: seed), loadBundledCatalog: false, existing: true)
        if let answers {
            let (quiz, choices) = try Self.parseAnswers(answers)
            let outcome = try service.answerQuiz(user: user, quiz: quiz, choices: choices, at: Date())
            print(json ? outcome.json.serialized() : Self.summary(outcome))
        } else if json {
            print(try service.issueQuiz(user: user, at: Date()).json.serialized())
        } else {
            try play(service)
        }
    }

    /// Plays a round on standard input and output, timing each question by the clock.
    func play(_ service: SoundtrackService, now: () -> Date = Date.init) throws {
        let quiz = try service.issueQuiz(user: user, at: now())
        print("Quiz \(quiz.id) for \(user): \(quiz.questions.count) questions, answer 1-\(Quiz.choiceCount).")
        print("A right answer within \(Int(Quiz.timeLimit)) s scores up to \(Quiz.maxPoints) points: the faster, the more.")
        var choices: [Int] = [], seconds: [Double] = []
        for (i, q) in quiz.questions.enumerated() {
            print("\nQuestion \(i + 1) of \(quiz.questions.count): \(q.text)")
            for (j, c) in q.choices.enumerated() { print("  \(j + 1)) \(c.text)") }
            let shown = now()
            let choice = try Self.ask(field: "answers[\(i)]")
            let t = max(0, now().timeIntervalSince(shown))
            choices.append(choice)
            seconds.append(t)
            print(Self.verdict(q, choice: choice, seconds: t))
        }
        let outcome = try service.answerQuiz(user: user, quiz: quiz.id, choices: choices, seconds: seconds, at: now())
        let right = outcome.results.filter(\.correct).count
        print("\nScore: \(outcome.score) points, \(right) of \(outcome.results.count) right. Best: \(outcome.best)\(outcome.newBest ? " (a new best)" : "").")
    }

    /// Reads answer lines until one is a choice 1…4 (a bad one is named and asked again).
    /// - Throws: ``InputError`` naming `field` at the end of the input.
    static func ask(field: String) throws -> Int {
        while true {
            print("Your answer (1-\(Quiz.choiceCount)): ", terminator: "")
            fflush(nil)  // the prompt, before the answer is read
            guard let line = readLine() else {
                print("")
                throw InputError(path: field, expected: "a choice 1, 2, 3 or 4", got: "the end of the input")
            }
            do {
                return try Quiz.choice(line[...], field: field)
            } catch {
                print("  \(error.description)")
            }
        }
    }

    /// `Right! +912 points (3.5 s)`, or why it scored nothing.
    static func verdict(_ q: Quiz.Question, choice: Int, seconds: Double) -> String {
        let time = String(format: "%.1f s", seconds)
        guard choice == q.answer else { return "Wrong: it was \(q.answer)) \(q.choices[q.answer - 1].text). 0 points (\(time))." }
        let points = Quiz.points(correct: true, seconds: seconds)
        return points > 0 ? "Right! +\(points) points (\(time))." : "Right, but after \(Int(Quiz.timeLimit)) s: 0 points (\(time))."
    }

    /// `qz-…:1,3,2,4,1` as the round's id and its choices.
    /// - Throws: ``InputError`` naming `answers` or `answers[i]`.
    static func parseAnswers(_ text: String) throws -> (quiz: String, choices: [Int]) {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
            throw InputError(
                path: "answers", expected: "QUIZ:C1,C2,C3,C4,C5 (a round's id from --json, a colon, one choice 1-4 a question)",
                got: JSONObjectReader.quote(String(text.prefix(80))))
        }
        let quiz = try JSONObjectReader.identifier(String(text[..<colon]), path: "answers")
        let parts = text[text.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == Quiz.questionCount else {
            throw InputError(path: "answers", expected: "\(Quiz.questionCount) choices, one a question", got: "\(parts.count)")
        }
        return (quiz, try parts.enumerated().map { i, p in try Quiz.choice(p, field: "answers[\(i)]") })
    }

    /// The results of `--answers` as text: a line a question, then the score and the best.
    static func summary(_ o: Quiz.Outcome) -> String {
        var lines = o.results.enumerated().map { i, r in
            let what = r.correct ? "right" : "wrong (the answer was \(r.answer))"
            return "  \(i + 1)  \(r.choice)  \(what)  \(String(format: "%.1f s", r.seconds))  \(r.points) points"
        }
        let right = o.results.filter(\.correct).count
        lines.insert("\(o.quiz): \(right) of \(o.results.count) right", at: 0)
        lines.append("Score: \(o.score) points. Best: \(o.best)\(o.newBest ? " (a new best)" : "").")
        return lines.joined(separator: "\n")
    }
}
