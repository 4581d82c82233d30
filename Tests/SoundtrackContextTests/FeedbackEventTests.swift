import Foundation
import Testing

@testable import SoundtrackContext

func feedbackError(_ text: String, strict: Bool = false) -> String? {
    do {
        _ = try FeedbackEvent.decode(Data(text.utf8), strict: strict)
        return nil
    } catch {
        return error.description
    }
}

/// A feedback event document: the required fields, then `extra`, with `omit` left out.
func feedbackJSON(_ extra: String = #""pick_id": "p-7f3a""#, omit: String? = nil) -> String {
    let base: [(String, String)] = [
        ("id", #""ev-000913""#), ("user", #""u-1""#), ("at", #""2026-03-14T07:45:02+01:00""#),
        ("track", #""spotify:track:4uLU6hMCjMI75M1A2tKUQC""#), ("signal", #""dislike""#)
    ]
    let members = base.filter { $0.0 != omit }.map { "\"\($0.0)\": \($0.1)" } + (extra.isEmpty ? [] : [extra])
    return "{" + members.joined(separator: ", ") + "}"
}

@Suite("Feedback event decoding")
struct FeedbackEventTests {
    @Test func decodesAnEventWithAPick() throws {
        let e = try FeedbackEvent.decode(Data(feedbackJSON(#""played_ms": 21000, "pick_id": "p-7f3a""#).utf8), strict: true)
        #expect(
            e
                == FeedbackEvent(
                    id: "ev-000913", user: "u-1", at: ts("2026-03-14T07:45:02+01:00"),
                    track: "spotify:track:4uLU6hMCjMI75M1A2tKUQC", signal: .dislike, playedMs: 21000, pickId: "p-7f3a"))
    }

    @Test func decodesAnEventWithASnapshot() throws {
        let e = try FeedbackEvent.decode(Data(feedbackJSON(#""snapshot": {"user": "u-1", "at": "2026-03-14T07:42:10+01:00", "tags": {"platform": "ios"}}"#).utf8))
        #expect(e.pickId == nil)
        #expect(e.snapshot == Snapshot(user: "u-1", at: ts("2026-03-14T07:42:10+01:00"), tags: ["platform": "ios"]))
    }

    @Test(
        arguments: [
            (Signal.like, nil, true, false), (.complete, nil, true, false), (.dislike, nil, false, true), (.skip, nil, false, true),
            (.rate, 5, true, false), (.rate, 4, true, false), (.rate, 3, false, false), (.rate, 2, false, true), (.rate, 1, false, true)
        ] as [(Signal, Int?, Bool, Bool)])
    func signalPolarity(signal: Signal, rating: Int?, like: Bool, dislike: Bool) {
        let e = FeedbackEvent(id: "e", user: "u", at: ts("2026-03-14T07:42:10+01:00"), track: "t", signal: signal, rating: rating, pickId: "p")
        #expect(e.isLike == like)
        #expect(e.isDislike == dislike)
    }

    @Test func ratingsDecodeBothWaysAndAreChecked() throws {
        let text = feedbackJSON().replacingOccurrences(of: #""signal": "dislike""#, with: #""signal": "rate", "rating": 4"#)
        let e = try FeedbackEvent.decode(Data(text.utf8))
        #expect(e.signal == .rate && e.rating == 4 && e.isLike)
        #expect(try FeedbackEvent(json: e.json()) == e)
        // The general path (a field order the fast path does not take first) agrees.
        #expect(try FeedbackEvent(json: JSONParser.parse(Data(text.utf8))) == e)
        for (bad, message) in [
            (#""signal": "rate", "rating": 6"#, "rating: expected an integer in 1...5, got 6"),
            (#""signal": "rate", "rating": 2.5"#, "rating: expected an integer in 1...5, got 2.5"),
            (#""signal": "rate", "rating": "4""#, #"rating: expected an integer in 1...5, got "4""#),
            (#""signal": "rate""#, "rating: expected stars 1...5 (a rate signal needs them), got nothing"),
            (#""signal": "like", "rating": 4"#, "rating: expected no rating (only a rate signal has one), got 4")
        ] {
            let doc = feedbackJSON().replacingOccurrences(of: #""signal": "dislike""#, with: bad)
            #expect(throws: InputError.self) { try FeedbackEvent.decode(Data(doc.utf8)) }
            do {
                _ = try FeedbackEvent.decode(Data(doc.utf8))
            } catch {
                #expect(error.description == message)
            }
        }
    }

    @Test(arguments: [
        (feedbackJSON(omit: "id"), "id: expected a non-empty string of at most 128 characters without control characters, got nothing"),
        (feedbackJSON(omit: "user"), "user: expected a non-empty string of at most 128 characters without control characters, got nothing"),
        (feedbackJSON(omit: "at"), "at: expected an RFC 3339 timestamp with an offset (like 2026-03-14T07:42:10+01:00), got nothing"),
        (feedbackJSON(omit: "track"), "track: expected a non-empty string of at most 1024 characters, got nothing"),
        (feedbackJSON(omit: "signal"), "signal: expected one of like, dislike, skip, complete, rate, got nothing"),
        (
            feedbackJSON(#""id": 913"#, omit: "id"),
            "id: expected a non-empty string of at most 128 characters without control characters, got a number"
        ),
        (feedbackJSON(#""track": """#, omit: "track"), #"track: expected a non-empty string of at most 1024 characters, got """#),
        (feedbackJSON(#""track": null"#, omit: "track"), "track: expected a non-empty string of at most 1024 characters, got null"),
        (feedbackJSON(#""signal": "love""#, omit: "signal"), #"signal: expected one of like, dislike, skip, complete, rate, got "love""#),
        (feedbackJSON(#""signal": "Like""#, omit: "signal"), #"signal: expected one of like, dislike, skip, complete, rate, got "Like""#),
        (
            feedbackJSON(#""at": "2026-03-14T07:45:02""#, omit: "at"),
            #"at: expected an RFC 3339 timestamp with an offset (like 2026-03-14T07:42:10+01:00), got "2026-03-14T07:45:02""#
        ),
        (feedbackJSON(#""pick_id": "p", "played_ms": -1"#), "played_ms: expected an integer in 0...9007199254740992 (2^53), got -1"),
        (feedbackJSON(#""pick_id": "p", "played_ms": 2.5"#), "played_ms: expected an integer in 0...9007199254740992 (2^53), got 2.5"),
        (feedbackJSON(#""pick_id": "p", "played_ms": "21000""#), "played_ms: expected an integer in 0...9007199254740992 (2^53), got a string"),
        (feedbackJSON(#""pick_id": "p", "played_ms": 1e300"#), "played_ms: expected an integer in 0...9007199254740992 (2^53), got 1e+300"),
        (feedbackJSON(#""pick_id": "p", "played_ms": 9007199254740994"#), "played_ms: expected an integer in 0...9007199254740992 (2^53), got 9007199254740994"),
        (feedbackJSON(""), "pick_id: expected a pick_id or a snapshot (the context of the feedback), got neither"),
        (
            feedbackJSON(#""pick_id": null, "snapshot": null"#),
            "pick_id: expected a pick_id or a snapshot (the context of the feedback), got neither"
        ),
        (
            feedbackJSON(#""pick_id": 7"#),
            "pick_id: expected a non-empty string of at most 128 characters without control characters, got a number"
        ),
        (
            feedbackJSON(#""pick_id": """#),
            #"pick_id: expected a non-empty string of at most 128 characters without control characters, got """#
        ),
        (
            feedbackJSON(#""snapshot": {"user": "u-2", "at": "2026-03-14T07:42:10+01:00"}"#),
            "snapshot.user: expected u-1 (the event's user), got u-2"
        ),
        (
            feedbackJSON(#""snapshot": {"at": "2026-03-14T07:42:10+01:00"}"#),
            "snapshot.user: expected a non-empty string of at most 128 characters without control characters, got nothing"
        ),
        (
            feedbackJSON(#""snapshot": {"user": "u-1", "at": "2026-03-14T07:42:10+01:00", "weather": {"cloud_pct": 140}}"#),
            "snapshot.weather.cloud_pct: expected a number in 0...100, got 140"
        ),
        (feedbackJSON(#""snapshot": "ctx""#), "snapshot: expected an object, got a string"),
        ("[]", "input: expected an object, got an array")
    ])
    func rejectsBadEvents(text: String, message: String) {
        #expect(feedbackError(text) == message)
    }

    @Test func strictModeRejectsUnknownFields() {
        let text = feedbackJSON(#""pick_id": "p", "device": "iPhone""#)
        #expect(feedbackError(text) == nil)
        #expect(feedbackError(text, strict: true) == #"device: expected one of the fields id, user, at, track, signal, rating, played_ms, pick_id, snapshot, got "device""#)
        let nested = feedbackJSON(#""snapshot": {"user": "u-1", "at": "2026-03-14T07:42:10+01:00", "battery": 0.5}"#)
        #expect(feedbackError(nested) == nil)
        #expect(
            feedbackError(nested, strict: true)
                == "snapshot.battery: expected one of the fields user, at, location, weather, calendar, bluetooth, motion, audio, tags, got \"battery\"")
    }

    @Test func roundTripsThroughJSON() throws {
        let snapshot = try Snapshot.decode(Data(formatsExample.utf8))
        let e = FeedbackEvent(
            id: "ev-1", user: "u-1042", at: ts("2026-03-14T07:45:02+01:00"), track: "t-1", signal: .complete,
            playedMs: 0, pickId: "p-1", snapshot: snapshot)
        #expect(try FeedbackEvent.decode(Data(e.json().serialized().utf8), strict: true) == e)
        let minimal = FeedbackEvent(id: "ev-2", user: "u", at: ts("2026-03-14T07:45:02Z"), track: "t", signal: .like, pickId: "p")
        #expect(minimal.json().serialized() == #"{"id":"ev-2","user":"u","at":"2026-03-14T07:45:02Z","track":"t","signal":"like","pick_id":"p"}"#)
        #expect(try FeedbackEvent(json: minimal.json()) == minimal)
    }
}
