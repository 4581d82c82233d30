import Foundation
import GRDB
import SoundtrackContext
import SoundtrackEngine
import SoundtrackRules
import Testing

@testable import SoundtrackStore

/// The quiz's rounds and best scores in the store (schema v20): issued and answered once, graded,
/// the best kept, another person's round not found, every row forgotten with the person.
@Suite("Quiz store")
struct QuizStoreTests {
    static let issued = Date(timeIntervalSince1970: 1_773_000_000)

    /// A round of fixed questions (the store keeps whatever the draw gives): the right answers 1, 2, 3, 4, 1.
    static func round(_ number: Int64, user: String = "u-1", at: Date = issued) -> Quiz {
        let choices = (1...4).map { Quiz.Choice(id: "c-\($0)", text: "choice \($0)") }
        let questions = [1, 2, 3, 4, 1].enumerated().map { i, a in
            Quiz.Question(kind: .likedIn, text: "question \(i + 1)", subject: "b-1", choices: choices, answer: a)
        }
        return Quiz(id: "qz-\(user)-\(number)", number: number, user: user, issuedAt: at, questions: questions)
    }

    static func store(users: [String] = ["u-1", "u-2"]) throws -> Store {
        let store = try Store.inMemory()
        for u in users { try store.addUser(NewUser(id: u), at: issued) }
        return store
    }

    static func count(_ store: Store, _ sql: String) throws -> Int {
        try store.database.read { db in try Int.fetchOne(db, sql: sql) ?? -1 }
    }

    @Test("A round is stored with its right answers and numbered; a draw that throws writes nothing")
    func issue() throws {
        let store = try Self.store()
        let q = try store.issueQuiz(user: "u-1") { number, _ in Self.round(number) }
        #expect(q.number == 1 && q.id == "qz-u-1-1")
        let row = try #require(try store.database.read { db in try Row.fetchOne(db, sql: "SELECT * FROM quizzes") })
        #expect(row["answers"] as String == "[1,2,3,4,1]" && row["user_id"] as String == "u-1" && row["answered_at"] as Double? == nil)
        #expect((row["questions"] as String).contains("question 5") && !(row["questions"] as String).contains("answer"))
        #expect(throws: RuleError.tooLittleHistory(user: "u-1", likedSongs: 1, bins: 1)) {
            try store.issueQuiz(user: "u-1") { _, _ in throw RuleError.tooLittleHistory(user: "u-1", likedSongs: 1, bins: 1) }
        }
        #expect(try store.issueQuiz(user: "u-1") { number, _ in Self.round(number) }.number == 2, "the failed draw counted no round")
        #expect(try store.issueQuiz(user: "u-2") { number, _ in Self.round(number, user: "u-2") }.number == 1, "numbers are the person's")
        #expect(throws: RuleError.unknownUser("nobody")) { try store.issueQuiz(user: "nobody") { n, _ in Self.round(n, user: "nobody") } }
    }

    @Test("Answered once: graded by the times given, or by the time since issue shared evenly; the best kept")
    func answer() throws {
        let store = try Self.store()
        let first = try store.issueQuiz(user: "u-1") { n, _ in Self.round(n) }
        #expect(try store.quizBest(user: "u-1") == nil)
        // No times: 50 s from issue to the answers, 10 s a question.
        let o = try store.answerQuiz(user: "u-1", quiz: first.id, choices: [1, 2, 3, 1, 1], seconds: nil, at: Self.issued.addingTimeInterval(50))
        #expect(o.results.map(\.points) == [750, 750, 750, 0, 750] && o.score == 3000 && o.best == 3000 && o.newBest)
        #expect(o.results.map(\.seconds) == [10, 10, 10, 10, 10])
        #expect(o.json["score"] == .number(3000) && o.json["correct"] == .number(4) && o.json["new_best"] == .bool(true))
        // Once only, and the stored round says what was answered.
        #expect(throws: RuleError.quizAnswered(first.id)) {
            try store.answerQuiz(user: "u-1", quiz: first.id, choices: [1, 2, 3, 4, 1], seconds: nil, at: Self.issued)
        }
        let row = try #require(try store.database.read { db in try Row.fetchOne(db, sql: "SELECT choices, seconds, score FROM quizzes") })
        #expect(row["choices"] as String == "[1,2,3,1,1]" && row["seconds"] as String == "[10,10,10,10,10]" && row["score"] as Int == 3000)
        // A worse round leaves the best; a better one replaces it. Times measured by the caller.
        let second = try store.issueQuiz(user: "u-1") { n, _ in Self.round(n) }
        let worse = try store.answerQuiz(user: "u-1", quiz: second.id, choices: [2, 2, 2, 2, 2], seconds: [1, 1, 1, 1, 1], at: Self.issued)
        #expect(worse.score == 975 && worse.best == 3000 && !worse.newBest)
        let third = try store.issueQuiz(user: "u-1") { n, _ in Self.round(n) }
        let better = try store.answerQuiz(user: "u-1", quiz: third.id, choices: [1, 2, 3, 4, 1], seconds: [0, 0, 0, 0, 30], at: Self.issued)
        #expect(better.results.map(\.points) == [1000, 1000, 1000, 1000, 0] && better.best == 4000 && better.newBest)
        #expect(try store.quizBest(user: "u-1") == 4000)
        #expect(try Self.count(store, "SELECT count(*) FROM quiz_players WHERE best_quiz = '\(third.id)'") == 1)
    }

    @Test("Another person's round, an unknown round or user, and a wrong count of choices are refused and change nothing")
    func refusals() throws {
        let store = try Self.store()
        let mine = try store.issueQuiz(user: "u-1") { n, _ in Self.round(n) }
        #expect(throws: RuleError.unknownQuiz(mine.id, user: "u-2")) {
            try store.answerQuiz(user: "u-2", quiz: mine.id, choices: [1, 2, 3, 4, 1], seconds: nil, at: Self.issued)
        }
        #expect(throws: RuleError.unknownQuiz("qz-nothing", user: "u-1")) {
            try store.answerQuiz(user: "u-1", quiz: "qz-nothing", choices: [1, 2, 3, 4, 1], seconds: nil, at: Self.issued)
        }
        #expect(throws: RuleError.unknownUser("nobody")) {
            try store.answerQuiz(user: "nobody", quiz: mine.id, choices: [1, 2, 3, 4, 1], seconds: nil, at: Self.issued)
        }
        #expect(throws: InputError.self) { try store.answerQuiz(user: "u-1", quiz: mine.id, choices: [1, 2, 3], seconds: nil, at: Self.issued) }
        #expect(try Self.count(store, "SELECT count(*) FROM quizzes WHERE answered_at IS NOT NULL") == 0)
        #expect(try store.answerQuiz(user: "u-1", quiz: mine.id, choices: [1, 2, 3, 4, 1], seconds: nil, at: Self.issued).score == 5000)
    }

    @Test("A person keeps the newest 50 rounds; the best score outlives the rounds")
    func keptRounds() throws {
        let store = try Self.store()
        let first = try store.issueQuiz(user: "u-1") { n, _ in Self.round(n) }
        _ = try store.answerQuiz(user: "u-1", quiz: first.id, choices: [1, 2, 3, 4, 1], seconds: [1, 1, 1, 1, 1], at: Self.issued)
        for _ in 0..<Quiz.keptRounds { _ = try store.issueQuiz(user: "u-1") { n, _ in Self.round(n) } }
        #expect(try Self.count(store, "SELECT count(*) FROM quizzes WHERE user_id = 'u-1'") == Quiz.keptRounds)
        #expect(try Self.count(store, "SELECT min(number) FROM quizzes WHERE user_id = 'u-1'") == 2)
        #expect(try store.quizBest(user: "u-1") == 4875)
    }

    @Test("Forget deletes the person's rounds and best score, and nobody else's")
    func forget() throws {
        let store = try Self.store()
        for u in ["u-1", "u-2"] {
            let q = try store.issueQuiz(user: u) { n, _ in Self.round(n, user: u) }
            _ = try store.answerQuiz(user: u, quiz: q.id, choices: [1, 1, 1, 1, 1], seconds: nil, at: Self.issued)
        }
        #expect(try store.rowCounts(user: "u-1")["quizzes"] == 1 && store.rowCounts(user: "u-1")["quiz_players"] == 1)
        #expect(try store.forget(user: "u-1"))
        #expect(try store.rowCounts(user: "u-1")["quizzes"] == 0 && store.rowCounts(user: "u-1")["quiz_players"] == 0)
        #expect(try store.rowCounts(user: "u-2")["quizzes"] == 1 && store.rowCounts(user: "u-2")["quiz_players"] == 1)
    }

    @Test("Every table keyed by a person has the person first in its primary key")
    func personFirstInKeys() throws {
        let store = try Self.store()
        let keys = try store.database.read { db in
            try ["quizzes", "quiz_players"].map { table in
                try Row.fetchAll(db, sql: "SELECT name, pk FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk", arguments: [table]).map { $0["name"] as String }
            }
        }
        #expect(keys == [["user_id", "id"], ["user_id"]])
    }

    @Test("Through the service: a round from a real history, answered; too little history refused")
    func throughTheService() throws {
        let service = try StoreTests.service(.memory)
        try service.store.addUser(NewUser(id: "u-1"), at: Self.issued)
        try service.store.addUser(NewUser(id: "u-2"), at: Self.issued)
        // Likes at the gym in the evening and in the library in the morning, on several days.
        for day in 11...14 {
            for (place, hour) in [("library", "09"), ("gym", "18")] {
                let p = try service.pick(StoreTests.snapshot(place, "2026-03-\(day)T\(hour):00:00+01:00"))
                _ = try service.feedback(FeedbackEvent(id: "e-\(day)-\(place)", user: "u-1", at: p.at, track: p.track.id, signal: .like, pickId: p.pickId))
            }
        }
        let quiz = try service.issueQuiz(user: "u-1", at: Self.issued)
        #expect(quiz.questions.count == 5 && quiz.number == 1)
        let outcome = try service.answerQuiz(user: "u-1", quiz: quiz.id, choices: quiz.questions.map(\.answer), at: Self.issued.addingTimeInterval(5))
        #expect(outcome.score == 5 * 975 && outcome.best == outcome.score)
        #expect(throws: RuleError.tooLittleHistory(user: "u-2", likedSongs: 0, bins: 0)) { try service.issueQuiz(user: "u-2", at: Self.issued) }
    }
}
