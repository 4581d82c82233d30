import Foundation
import GRDB
import SoundtrackContext
import SoundtrackEngine

/// The music quiz's rounds and best scores (schema v20: `quizzes`, `quiz_players`; docs/scoring.md, "Quiz").
extension Store {
    /// Issues a person a round drawn from `state` (``Quiz/draw(number:state:catalog:seed:at:)``,
    /// with the engine's `seed` and the time of issue `at`), as ``issueQuiz(user:draw:)`` stores it.
    /// - Throws: ``RuleError/unknownUser(_:)``, ``RuleError/tooLittleHistory(user:likedSongs:bins:)``;
    ///   database errors.
    public func issueQuiz(user: String, state: UserState, seed: UInt64, at: Date) throws -> Quiz {
        try issueQuiz(user: user) { number, catalog in
            try Quiz.draw(number: number, state: state, catalog: catalog, seed: seed, at: at)
        }
    }

    /// Issues a person a round, in one write transaction: counts it (the person's rounds issued,
    /// which number and seed it), calls `draw` with its number and the catalog, stores what it
    /// returns with its right answers, and deletes the person's rounds older than the newest
    /// ``Quiz/keptRounds``. A `draw` that throws leaves nothing written.
    /// - Parameter draw: the round of a number (``Quiz/draw(number:state:catalog:seed:at:)``);
    ///   its `user` must be `user`.
    /// - Returns: the round stored.
    /// - Throws: ``RuleError/unknownUser(_:)``; what `draw` throws; database errors.
    public func issueQuiz(user: String, draw: (_ number: Int64, _ catalog: any CatalogSource) throws -> Quiz) throws -> Quiz {
        try database.write { db in
            guard try Self.userExists(db, user) else { throw RuleError.unknownUser(user) }
            let issued = try Int64.fetchOne(db, sql: "SELECT issued FROM quiz_players WHERE user_id = ?", arguments: [user]) ?? 0
            let reads = CatalogReads(db: db, index: catalogIndex)
            let quiz = try draw(issued + 1, reads)
            try reads.check()
            precondition(quiz.user == user && quiz.number == issued + 1, "a round of another user or number")
            try db.execute(
                sql: """
                    INSERT INTO quiz_players (user_id, issued) VALUES (?, ?)
                    ON CONFLICT (user_id) DO UPDATE SET issued = excluded.issued
                    """, arguments: [user, quiz.number])
            try db.execute(
                sql: "INSERT INTO quizzes (user_id, id, number, issued_at, questions, answers) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [
                    user, quiz.id, quiz.number, quiz.issuedAt.timeIntervalSince1970, quiz.questionsJSON.serialized(),
                    JSONValue.array(quiz.questions.map { .number(Double($0.answer)) }).serialized()
                ])
            try db.execute(
                sql: "DELETE FROM quizzes WHERE user_id = ? AND number <= ?", arguments: [user, quiz.number - Int64(Quiz.keptRounds)])
            return quiz
        }
    }

    /// Answers a person's round, once, in one write transaction: grades the choices, stores them
    /// with the round's score, and keeps the score as the person's best when it beats it.
    /// - Parameters:
    ///   - quiz: the round's id; only a round of `user` is found.
    ///   - choices: one choice (1…4) a question, in order.
    ///   - seconds: the seconds each answer took as the caller measured them (the CLI's own clock,
    ///     one question at a time); `nil`: the time from issue to `at`, shared evenly
    ///     (``Quiz/evenSeconds(issuedAt:answeredAt:count:)``): what the HTTP service uses, so a
    ///     client cannot claim a speed.
    ///   - at: the time of the answers.
    /// - Throws: ``RuleError/unknownUser(_:)``, ``RuleError/unknownQuiz(_:user:)`` (no such round of
    ///   the user's), ``RuleError/quizAnswered(_:)``, ``InputError`` (`answers`) for a count of
    ///   choices or times other than the round's questions; database errors.
    public func answerQuiz(user: String, quiz: String, choices: [Int], seconds: [Double]?, at: Date) throws -> Quiz.Outcome {
        try database.write { db in
            guard try Self.userExists(db, user) else { throw RuleError.unknownUser(user) }
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT issued_at, answers, answered_at FROM quizzes WHERE user_id = ? AND id = ?", arguments: [user, quiz])
            else { throw RuleError.unknownQuiz(quiz, user: user) }
            guard (row["answered_at"] as Double?) == nil else { throw RuleError.quizAnswered(quiz) }
            let answers = try Self.integers(row["answers"], table: "quizzes", column: "answers")
            guard choices.count == answers.count, seconds == nil || seconds?.count == answers.count else {
                throw InputError(path: "answers", expected: "\(answers.count) choices, one a question", got: "\(choices.count)")
            }
            let issuedAt = Date(timeIntervalSince1970: row["issued_at"])
            let times = seconds ?? Quiz.evenSeconds(issuedAt: issuedAt, answeredAt: at, count: answers.count)
            let results = Quiz.grade(answers: answers, choices: choices, seconds: times)
            let score = results.reduce(0) { $0 + $1.points }
            try db.execute(
                sql: "UPDATE quizzes SET answered_at = ?, choices = ?, seconds = ?, score = ? WHERE user_id = ? AND id = ?",
                arguments: [
                    at.timeIntervalSince1970, JSONValue.array(choices.map { .number(Double($0)) }).serialized(),
                    JSONValue.array(times.map { .number($0) }).serialized(), score, user, quiz
                ])
            try db.execute(
                sql: "UPDATE quiz_players SET best = ?, best_quiz = ?, best_at = ? WHERE user_id = ? AND (best IS NULL OR best < ?)",
                arguments: [score, quiz, at.timeIntervalSince1970, user, score])
            let newBest = db.changesCount > 0
            let best = try Int.fetchOne(db, sql: "SELECT best FROM quiz_players WHERE user_id = ?", arguments: [user]) ?? score
            return Quiz.Outcome(quiz: quiz, user: user, answeredAt: at, results: results, best: best, newBest: newBest)
        }
    }

    /// A person's best quiz score, `nil` before their first answered round.
    /// - Throws: ``RuleError/unknownUser(_:)``; database errors.
    public func quizBest(user: String) throws -> Int? {
        try database.read { db in
            guard try Self.userExists(db, user) else { throw RuleError.unknownUser(user) }
            return try Int.fetchOne(db, sql: "SELECT best FROM quiz_players WHERE user_id = ?", arguments: [user])
        }
    }

    /// A JSON array of integers as a column holds it (``intList(_:)``).
    private static func integers(_ text: String, table: String, column: String) throws -> [Int] {
        guard let ints = intList(text) else {
            throw StoreError.corrupt(table: table, column: column, row: 0, expected: "a JSON array of integers")
        }
        return ints
    }
}
