import Foundation
import SoundtrackContext

extension Quiz {
    /// What answering a round gave: each answer's result, the round's score and the person's best.
    public struct Outcome: Sendable, Equatable {
        /// The round's id.
        public var quiz: String
        /// The person.
        public var user: String
        /// When the answers were taken.
        public var answeredAt: Date
        /// One result a question, in order.
        public var results: [Result]
        /// The person's best score, this round's included.
        public var best: Int
        /// Whether this round set the best score (it beat every earlier one).
        public var newBest: Bool

        /// The round's score: the sum of its points.
        public var score: Int { results.reduce(0) { $0 + $1.points } }

        /// Creates an outcome.
        public init(quiz: String, user: String, answeredAt: Date, results: [Result], best: Int, newBest: Bool) {
            self.quiz = quiz
            self.user = user
            self.answeredAt = answeredAt
            self.results = results
            self.best = best
            self.newBest = newBest
        }

        /// `{"quiz", "user", "answered_at", "results": [{"number", "choice", "answer", "correct",
        /// "seconds", "points"}], "correct", "score", "best", "new_best"}`.
        public var json: JSONValue {
            .object([
                ("quiz", .string(quiz)), ("user", .string(user)), ("answered_at", .string(Timestamp(date: answeredAt, offsetSeconds: 0).rfc3339)),
                (
                    "results",
                    .array(
                        results.enumerated().map { i, r in
                            .object([
                                ("number", .number(Double(i + 1))), ("choice", .number(Double(r.choice))), ("answer", .number(Double(r.answer))),
                                ("correct", .bool(r.correct)), ("seconds", .number(Quiz.milliseconds(r.seconds))), ("points", .number(Double(r.points)))
                            ])
                        })
                ),
                ("correct", .number(Double(results.filter(\.correct).count))), ("score", .number(Double(score))),
                ("best", .number(Double(best))), ("new_best", .bool(newBest))
            ])
        }
    }

    /// Seconds rounded to the millisecond, for output.
    static func milliseconds(_ s: Double) -> Double { (s * 1000).rounded() / 1000 }

    /// The round as the person sees it, without the right answers: `{"quiz", "user", "issued_at",
    /// "time_limit_seconds", "questions": [{"number", "kind", "text", "about", "choices":
    /// [{"number", "id", "text"}]}]}`.
    public var json: JSONValue {
        .object([
            ("quiz", .string(id)), ("user", .string(user)), ("issued_at", .string(Timestamp(date: issuedAt, offsetSeconds: 0).rfc3339)),
            ("time_limit_seconds", .number(Self.timeLimit)), ("questions", questionsJSON)
        ])
    }

    /// The questions without their answers, as ``json`` holds them (and the store keeps them).
    public var questionsJSON: JSONValue {
        .array(
            questions.enumerated().map { i, q in
                .object([
                    ("number", .number(Double(i + 1))), ("kind", .string(q.kind.rawValue)), ("text", .string(q.text)), ("about", .string(q.subject)),
                    (
                        "choices",
                        .array(
                            q.choices.enumerated().map { j, c in
                                .object([("number", .number(Double(j + 1))), ("id", .string(c.id)), ("text", .string(c.text))])
                            })
                    )
                ])
            })
    }
}
