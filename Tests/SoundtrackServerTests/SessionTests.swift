import Foundation
import HTTPTypes
import HummingbirdTesting
import SoundtrackContext
import SoundtrackServer
import SoundtrackTestSupport
import Testing

/// Listening sessions of groups (issue 43, item 1): open, join, leave, group picks that leave out
/// what the session played, a member's feedback that teaches only that member and counts as a vote.
@Suite struct SessionTests {
    @Test func aGroupListensTogether() async throws {
        let f = try Fixture(users: ["u-1", "u-2", "u-3", "u-4"]) { $0.sessionIDs = { "s-1" } }
        let admin = f.admin, key1 = f.keys["u-1"]!, key2 = f.keys["u-2"]!, key3 = f.keys["u-3"]!, key4 = f.keys["u-4"]!
        try await f.api.buildApplication().test(.router) { client in
            // u-1 opens a session with u-2 and u-3 (201): u-1 joins, the others are invited.
            var r = try await client.send(.post, "/v1/sessions", key: key1, body: #"{"members": ["u-1", "u-2", "u-3"]}"#)
            #expect(r.status == .created, "\(r.text)")
            let id = try #require(r.json["id"]?.stringValue)
            #expect(id == "s-1")
            #expect(r.json["track"] == .null && r.json["skipped"] == .bool(false))
            #expect(r.json["members"]?.arrayCount == 1 && r.json["invited"]?.arrayCount == 2)
            // Nobody is ranked for before joining: a pick needs two members who joined.
            r = try await client.send(.post, "/v1/sessions/\(id)/picks", key: key1, body: Doc.snapshot(user: "u-1"))
            #expect(r.status == .badRequest && r.errorField == "members", "\(r.text)")
            // u-4, not invited, cannot join with its own key; u-2 and u-3 accept.
            r = try await client.send(.post, "/v1/sessions/\(id)/members", key: key4, body: #"{"user": "u-4"}"#)
            #expect(r.status == .forbidden, "\(r.text)")
            for (user, key) in [("u-2", key2), ("u-3", key3)] {
                r = try await client.send(.post, "/v1/sessions/\(id)/members", key: key, body: #"{"user": "\#(user)"}"#)
                #expect(r.status == .ok, "\(r.text)")
            }
            #expect(r.json["members"]?.arrayCount == 3 && r.json["invited"]?.arrayCount == 0)
            // A pick in u-1's snapshot: one track, ranked from the three members' rankings.
            r = try await client.send(.post, "/v1/sessions/\(id)/picks?top=3", key: key1, body: Doc.snapshot(user: "u-1"))
            #expect(r.status == .ok, "\(r.text)")
            #expect(r.json["session"]?.stringValue == id && r.json["ranked"]?.arrayCount == 3)
            #expect(r.json["aggregation"]?.stringValue == "multiplicative")
            let first = try #require(r.json["track"]?["id"]?.stringValue)
            // The next pick leaves out what the session played.
            r = try await client.send(.post, "/v1/sessions/\(id)/picks", key: key1, body: Doc.snapshot(user: "u-1"))
            let second = try #require(r.json["track"]?["id"]?.stringValue)
            #expect(second != first)
            // A group pick counts as one pick, not one a member.
            #expect(try await client.send(.get, "/metrics").text.contains("soundtrack_picks_total 2"))
            // The session keeps the shared context, nothing of the sender's own: no coordinates.
            let stored = try #require(try f.service.store.groupSession(id: id))
            #expect(stored.snapshot?.user == id && stored.snapshot?.location?.lat == nil && stored.snapshot?.location?.place == "library")
            #expect(stored.track == second && stored.played == [first, second])
            // u-2 skips: a vote, and an event of u-2 alone.
            r = try await client.send(.post, "/v1/sessions/\(id)/feedback", key: admin, body: #"{"id": "g-1", "user": "u-2", "signal": "skip"}"#)
            #expect(r.status == .ok, "\(r.text)")
            #expect(r.json["event"]?["status"]?.stringValue == "applied" && r.json["vote_counted"] == .bool(true))
            #expect(r.json["session"]?["votes"]?["u-2"]?.stringValue == "skip" && r.json["session"]?["skipped"] == .bool(false))
            #expect(try f.service.bins(user: "u-2").count == 1)
            #expect(try f.service.bins(user: "u-1").isEmpty && f.service.bins(user: "u-3").isEmpty)
            // u-3 skips too: most members did, the track is skipped.
            r = try await client.send(.post, "/v1/sessions/\(id)/feedback", key: admin, body: #"{"id": "g-2", "user": "u-3", "signal": "dislike"}"#)
            #expect(r.json["session"]?["skipped"] == .bool(true), "\(r.text)")
            // Feedback from a non-member, and a member's feedback given with another's key, are refused.
            r = try await client.send(.post, "/v1/sessions/\(id)/feedback", key: admin, body: #"{"id": "g-3", "user": "u-4", "signal": "like"}"#)
            #expect(r.status == .badRequest && r.errorField == "user", "\(r.text)")
            r = try await client.send(.post, "/v1/sessions/\(id)/feedback", key: key4, body: #"{"id": "g-3", "user": "u-2", "signal": "like"}"#)
            #expect(r.status == .forbidden)
            // u-3 changes its mind: a like; the track is no longer skipped.
            r = try await client.send(.post, "/v1/sessions/\(id)/feedback", key: key3, body: #"{"id": "g-2b", "user": "u-3", "signal": "like"}"#)
            #expect(r.json["session"]?["skipped"] == .bool(false), "\(r.text)")
            // An admin adds u-4; joining twice is a conflict.
            r = try await client.send(.post, "/v1/sessions/\(id)/members", key: admin, body: #"{"user": "u-4"}"#)
            #expect(r.status == .ok && r.json["members"]?.arrayCount == 4, "\(r.text)")
            r = try await client.send(.post, "/v1/sessions/\(id)/members", key: key4, body: #"{"user": "u-4"}"#)
            #expect(r.status == .conflict && r.errorField == "user", "\(r.text)")
            // Members leave; the session ends below two.
            for user in ["u-4", "u-3"] {
                r = try await client.send(.delete, "/v1/sessions/\(id)/members/\(user)", key: admin)
                #expect(r.status == .ok && r.json["ended"] == .bool(false), "\(r.text)")
            }
            r = try await client.send(.delete, "/v1/sessions/\(id)/members/u-2", key: admin)
            #expect(r.json["ended"] == .bool(true), "\(r.text)")
            r = try await client.send(.get, "/v1/sessions/\(id)", key: admin)
            #expect(r.status == .notFound && r.errorCode == "unknown_session")
        }
    }

    @Test func badGroupsAreRefusedNamingTheirField() async throws {
        let f = try Fixture(users: ["u-1", "u-2", "u-3"])
        let admin = f.admin, key3 = f.keys["u-3"]!
        try await f.api.buildApplication().test(.router) { client in
            for (body, message) in [
                (#"{"members": ["u-1"]}"#, "got one member"), (#"{"members": ["u-1", "u-1"]}"#, "got 'u-1' twice"),
                (#"{"members": ["u-1", "zed"]}"#, "got 'zed' (an unknown user)"), (#"{"members": []}"#, "got 0 members")
            ] {
                let r = try await client.send(.post, "/v1/sessions", key: admin, body: body)
                #expect(r.status == .badRequest && r.errorField == "members" && r.text.contains(message), "\(r.text)")
            }
            // A user's key opens only a session it is a member of.
            var r = try await client.send(.post, "/v1/sessions", key: key3, body: #"{"members": ["u-1", "u-2"]}"#)
            #expect(r.status == .forbidden)
            r = try await client.send(.post, "/v1/sessions", key: admin, body: #"{"members": ["u-1", "u-2"]}"#)
            let id = try #require(r.json["id"]?.stringValue)
            r = try await client.send(.get, "/v1/sessions/\(id)", key: key3)
            #expect(r.status == .forbidden)
            // Feedback before any pick has no track to be about; a pick from a non-member's phone is refused.
            r = try await client.send(.post, "/v1/sessions/\(id)/feedback", key: admin, body: #"{"id": "g-1", "user": "u-1", "signal": "like"}"#)
            #expect(r.status == .badRequest && r.errorField == "session", "\(r.text)")
            r = try await client.send(.post, "/v1/sessions/%ZZ/picks", key: admin, body: Doc.snapshot(user: "u-1"))
            #expect(r.status == .badRequest && r.errorField == "session", "\(r.text)")
            r = try await client.send(.post, "/v1/sessions/\(id)/picks", key: admin, body: Doc.snapshot(user: "u-3"))
            #expect(r.status == .badRequest && r.errorField == "user", "\(r.text)")
            r = try await client.send(.post, "/v1/sessions/nope/picks", key: admin, body: Doc.snapshot(user: "u-1"))
            #expect(r.status == .notFound && r.errorCode == "unknown_session")
            // Forgetting a member ends a session of two.
            r = try await client.send(.delete, "/v1/users/u-2", key: admin)
            #expect(r.status == .ok || r.status == .noContent, "\(r.text)")
            r = try await client.send(.get, "/v1/sessions/\(id)", key: admin)
            #expect(r.status == .notFound)
        }
    }

    @Test func aPickOrVoteThatCameSecondDoesNotOverwriteTheFirst() throws {
        let f = try Fixture(users: ["u-1", "u-2"])
        let store = f.service.store
        _ = try store.createGroupSession(id: "s-9", members: ["u-1", "u-2"], joined: ["u-1", "u-2"], at: Date())
        let context = Snapshot(user: "s-9", at: Timestamp(rfc3339: "2026-03-14T07:42:10+01:00")!)
        try store.recordGroupPick(id: "s-9", context: context, track: "t-1", previous: nil, window: 20)
        // A second pick that read the session before the first was recorded is refused.
        #expect(throws: RuleError.sessionMoved(session: "s-9")) {
            try store.recordGroupPick(id: "s-9", context: context, track: "t-2", previous: nil, window: 20)
        }
        // A vote on a track another pick replaced is not counted.
        try store.recordGroupPick(id: "s-9", context: context, track: "t-3", previous: "t-1", window: 20)
        let stale = try store.recordGroupVote(id: "s-9", user: "u-1", skip: true, track: "t-1")
        #expect(!stale.counted && stale.session.votes.isEmpty && !stale.session.skipped)
        let vote = try store.recordGroupVote(id: "s-9", user: "u-1", skip: true, track: "t-3")
        #expect(vote.counted && vote.session.votes == ["u-1": "skip"] && !vote.session.skipped)
        #expect(try store.recordGroupVote(id: "s-9", user: "u-2", skip: true, track: "t-3").session.skipped)
        #expect(try store.groupSession(id: "s-9")?.played == ["t-1", "t-3"])
    }
}
