import Foundation
import Hummingbird
import SoundtrackContext
import SoundtrackEngine

/// The music quiz: `GET /v1/users/{id}/quiz`, `POST /v1/users/{id}/quiz/{quiz}/answers`
/// (docs/scoring.md, "Quiz").
extension SoundtrackAPI {
    /// `GET /v1/users/{id}/quiz`: a new round for the person (their own key or an admin key), drawn
    /// from their current state and stored with its right answers and the server's time of issue;
    /// the answers are not in the response. 409 `too_little_history` for a person who has liked too little.
    func getQuiz(_ request: Request, context: APIRequestContext, id: String) throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.authorize(user: id)
        return Self.json(try live.issueQuiz(user: id, at: configuration.clock.now()).json)
    }

    /// `POST /v1/users/{id}/quiz/{quiz}/answers` with `{"answers": [1, 3, 2, 4, 1]}`: grades a round
    /// of the path's person once, timed by the server (the time from issue to now, shared evenly
    /// among the questions, so a client cannot claim a speed); the results, the score and the
    /// person's best. Another person's round is not found (404 `unknown_quiz`), a round answered
    /// before is a 409 `conflict`, a bad body a 400 naming the field.
    func postQuizAnswers(_ request: Request, context: APIRequestContext, id: String, quiz: String) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.authorize(user: id)
        let r = try JSONObjectReader(Self.parseJSON(try await readBody(request)), base: "")
        try r.rejectUnknown(["answers"])
        let choices = try Quiz.choices(try r.requiredArray("answers"))
        return Self.json(try live.store.answerQuiz(user: id, quiz: quiz, choices: choices, seconds: nil, at: configuration.clock.now()).json)
    }

    /// A round's id from a URL path segment (``pathID(_:field:noun:)``'s rules).
    /// - Throws: 400 naming `quiz`.
    static func quizID(_ raw: String) throws -> String {
        try pathID(raw, field: "quiz", noun: "quiz id")
    }
}
