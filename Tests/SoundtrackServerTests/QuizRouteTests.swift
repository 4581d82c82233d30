import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SoundtrackContext
import SoundtrackEngine
import SoundtrackTestSupport
import Testing

@testable import SoundtrackServer
@testable import SoundtrackStore

/// `GET /v1/users/{id}/quiz` and `POST /v1/users/{id}/quiz/{quiz}/answers` (issue 43, item 5):
/// rounds issued and answered once, timed by the server's clock, one person never answering
/// another's round, bad bodies named.
@Suite struct QuizRouteTests {
    /// A fixture whose `u-1` liked a song a morning in the library and an evening at the gym on
    /// four days (eight liked songs in two bins), before the service first loads them.
    static func fixture() throws -> Fixture {
        let f = try Fixture()
        for day in 11...14 {
            for (place, hour) in [("library", "09"), ("gym", "18")] {
                let at = Timestamp(rfc3339: "2026-03-\(day)T\(hour):00:00+01:00")!
                let snapshot = Snapshot(
                    user: "u-1", at: at, location: Location(lat: 52.5, lon: 13.4, speedMps: 0, place: place),
                    motion: Motion(activity: place == "gym" ? .running : .stationary, heartRateBpm: place == "gym" ? 150 : 65))
                let p = try f.service.pick(snapshot)
                _ = try f.service.feedback(FeedbackEvent(id: "e-\(day)-\(place)", user: "u-1", at: p.at, track: p.track.id, signal: .like, pickId: p.pickId))
            }
        }
        return f
    }

    /// The right answers of a stored round.
    static func answers(_ f: Fixture, _ quiz: String) throws -> [Int] {
        let text = try f.service.store.database.read { db in try String.fetchOne(db, sql: "SELECT answers FROM quizzes WHERE id = ?", arguments: [quiz]) }
        guard case let .array(items) = try JSONParser.parse(try #require(text)) else { return [] }
        return items.compactMap { $0.numberValue.map(Int.init) }
    }

    /// A count the database gives.
    static func count(_ f: Fixture, _ sql: String) throws -> Int {
        try f.service.store.database.read { db in try Int.fetchOne(db, sql: sql) ?? -1 }
    }

    static func body(_ choices: [Int]) -> String { #"{"answers": [\#(choices.map(String.init).joined(separator: ", "))]}"# }

    @Test("A round issued, answered once with the server's timing, the best kept; a second answer is a 409")
    func issueAndAnswer() async throws {
        let f = try Self.fixture()
        try await f.api.buildApplication().test(.router) { client in
            let key = f.keys["u-1"]!
            var r = try await client.send(.get, "/v1/users/u-1/quiz", key: key)
            #expect(r.status == .ok, "\(r.text)")
            let quiz = try #require(r.json["quiz"]?.stringValue)
            #expect(r.json["user"] == .string("u-1") && r.json["time_limit_seconds"] == .number(20) && r.json["questions"]?.arrayCount == 5)
            #expect(r.json["issued_at"] == .string("2026-03-08T20:00:00Z"))
            #expect(!r.text.contains("\"answer\""), "the answers stay on the server")
            let right = try Self.answers(f, quiz)
            // Ten seconds later by the server's clock: two a question, 950 points each right one.
            f.clock.setWall(1_773_000_010)
            var choices = right
            choices[4] = choices[4] % 4 + 1
            r = try await client.send(.post, "/v1/users/u-1/quiz/\(quiz)/answers", key: key, body: Self.body(choices))
            #expect(r.status == .ok, "\(r.text)")
            #expect(r.json["score"] == .number(3800) && r.json["correct"] == .number(4) && r.json["best"] == .number(3800) && r.json["new_best"] == .bool(true), "\(r.text)")
            #expect(r.json["results"]?[0]?["seconds"] == .number(2) && r.json["results"]?[4]?["points"] == .number(0), "\(r.text)")
            // Once.
            r = try await client.send(.post, "/v1/users/u-1/quiz/\(quiz)/answers", key: key, body: Self.body(right))
            #expect(r.status == .conflict && r.errorCode == "conflict" && r.errorField == "quiz", "\(r.text)")
            // Another round, answered late (over 20 s a question): right answers, no points; the best stays.
            r = try await client.send(.get, "/v1/users/u-1/quiz", key: f.admin)
            let late = try #require(r.json["quiz"]?.stringValue)
            #expect(late != quiz)
            f.clock.setWall(1_773_000_200)
            r = try await client.send(.post, "/v1/users/u-1/quiz/\(late)/answers", key: f.admin, body: Self.body(try Self.answers(f, late)))
            #expect(r.json["correct"] == .number(5) && r.json["score"] == .number(0) && r.json["best"] == .number(3800) && r.json["new_best"] == .bool(false), "\(r.text)")
            #expect(try f.service.store.quizBest(user: "u-1") == 3800)
        }
    }

    @Test("One person cannot see or answer another's round: 403 under the other's path, 404 under their own")
    func anotherPerson() async throws {
        let f = try Self.fixture()
        try await f.api.buildApplication().test(.router) { client in
            let r1 = try await client.send(.get, "/v1/users/u-1/quiz", key: f.keys["u-1"])
            let quiz = try #require(r1.json["quiz"]?.stringValue)
            let right = Self.body(try Self.answers(f, quiz))
            let other = f.keys["u-2"]!
            #expect(try await client.send(.get, "/v1/users/u-1/quiz", key: other).status == .forbidden)
            var r = try await client.send(.post, "/v1/users/u-1/quiz/\(quiz)/answers", key: other, body: right)
            #expect(r.status == .forbidden, "\(r.text)")
            r = try await client.send(.post, "/v1/users/u-2/quiz/\(quiz)/answers", key: other, body: right)
            #expect(r.status == .notFound && r.errorCode == "unknown_quiz" && r.errorField == "quiz", "\(r.text)")
            // Not even an admin answers it under another person's path.
            r = try await client.send(.post, "/v1/users/u-2/quiz/\(quiz)/answers", key: f.admin, body: right)
            #expect(r.status == .notFound && r.errorCode == "unknown_quiz", "\(r.text)")
            #expect(try Self.count(f, "SELECT count(*) FROM quizzes WHERE answered_at IS NOT NULL") == 0)
            // Its person still can.
            r = try await client.send(.post, "/v1/users/u-1/quiz/\(quiz)/answers", key: f.keys["u-1"], body: right)
            #expect(r.status == .ok && r.json["correct"] == .number(5), "\(r.text)")
        }
    }

    @Test("Too little history is a 409 naming the counts, not an empty round; an unknown user a 404")
    func tooLittleHistory() async throws {
        let f = try Fixture()
        try await f.api.buildApplication().test(.router) { client in
            var r = try await client.send(.get, "/v1/users/u-2/quiz", key: f.keys["u-2"])
            #expect(r.status == .conflict && r.errorCode == "too_little_history" && r.errorField == "user", "\(r.text)")
            #expect(r.json["error"]?["message"]?.stringValue?.contains("got 'u-2' with 0 liked songs in 0 bins") == true, "\(r.text)")
            r = try await client.send(.get, "/v1/users/nobody/quiz", key: f.admin)
            #expect(r.status == .notFound && r.errorCode == "unknown_user", "\(r.text)")
            r = try await client.send(.post, "/v1/users/nobody/quiz/qz-1/answers", key: f.admin, body: Self.body([1, 2, 3, 4, 1]))
            #expect(r.status == .notFound && r.errorCode == "unknown_user", "\(r.text)")
            #expect(try Self.count(f, "SELECT count(*) FROM quizzes") == 0)
        }
    }

    @Test("A bad body or round id is a 400 naming the field, and answers nothing")
    func badInput() async throws {
        let f = try Self.fixture()
        try await f.api.buildApplication().test(.router) { client in
            let key = f.keys["u-1"]!
            let quiz = try #require(try await client.send(.get, "/v1/users/u-1/quiz", key: key).json["quiz"]?.stringValue)
            let path = "/v1/users/u-1/quiz/\(quiz)/answers"
            for (body, field) in [
                ("{}", "answers"), (#"{"answers": [1, 2, 3]}"#, "answers"), (#"{"answers": [1, 2, 3, 4, 1, 2]}"#, "answers"),
                (#"{"answers": [1, 2, 9, 4, 1]}"#, "answers[2]"), (#"{"answers": [1, 2, 3, 0, 1]}"#, "answers[3]"),
                (#"{"answers": [1.5, 2, 3, 4, 1]}"#, "answers[0]"), (#"{"answers": [1, "2", 3, 4, 1]}"#, "answers[1]"),
                (#"{"answers": "1,2,3,4,1"}"#, "answers"), (#"{"answers": [1, 2, 3, 4, 1], "speed": 1}"#, "speed")
            ] {
                let r = try await client.send(.post, path, key: key, body: body)
                #expect(r.status == .badRequest && r.errorCode == "bad_request" && r.errorField == field, "\(body): \(r.text)")
            }
            var r = try await client.send(.post, path, key: key, body: "[1, 2")
            #expect(r.status == .badRequest, "\(r.text)")
            r = try await client.send(.post, "/v1/users/u-1/quiz/%ZZ/answers", key: key, body: Self.body([1, 2, 3, 4, 1]))
            #expect(r.status == .badRequest && r.errorField == "quiz", "\(r.text)")
            r = try await client.send(.post, "/v1/users/u-1/quiz/qz-000000000000/answers", key: key, body: Self.body([1, 2, 3, 4, 1]))
            #expect(r.status == .notFound && r.errorCode == "unknown_quiz", "\(r.text)")
            #expect(try await client.send(.get, "/v1/users/u-1/quiz", key: nil).status == .unauthorized)
            #expect(try await client.send(.put, "/v1/users/u-1/quiz", key: key).status == .methodNotAllowed)
            #expect(try Self.count(f, "SELECT count(*) FROM quizzes WHERE answered_at IS NOT NULL") == 0)
        }
    }

    @Test("Forgetting a person deletes their rounds and best score")
    func forget() async throws {
        let f = try Self.fixture()
        try await f.api.buildApplication().test(.router) { client in
            let quiz = try #require(try await client.send(.get, "/v1/users/u-1/quiz", key: f.keys["u-1"]).json["quiz"]?.stringValue)
            _ = try await client.send(.post, "/v1/users/u-1/quiz/\(quiz)/answers", key: f.keys["u-1"], body: Self.body([1, 1, 1, 1, 1]))
            #expect(try f.service.store.rowCounts(user: "u-1")["quiz_players"] == 1)
            #expect(try await client.send(.delete, "/v1/users/u-1", key: f.admin).status == .noContent)
            #expect(try f.service.store.rowCounts(user: "u-1").values.allSatisfy { $0 == 0 })
            #expect(try await client.send(.get, "/v1/users/u-1/quiz", key: f.admin).status == .notFound)
        }
    }
}
