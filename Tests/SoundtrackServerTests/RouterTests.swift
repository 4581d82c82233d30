import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SoundtrackContext
import SoundtrackProviders
import SoundtrackServer
import Testing

@testable import SoundtrackStore

/// The router driven in process: auth, every error path, limits, and the happy paths.
@Suite struct RouterTests {
    @Test func openRoutesNeedNoKey() async throws {
        let f = try Fixture()
        try await f.api.buildApplication().test(.router) { client in
            #expect(try await client.send(.get, "/healthz").status == .ok)
            let ready = try await client.send(.get, "/readyz")
            #expect(ready.status == .ok)
            #expect(ready.json["status"]?.stringValue == "ready")
            let doc = try await client.send(.get, "/openapi.json")
            #expect(doc.status == .ok)
            #expect(doc.json["openapi"]?.stringValue == "3.1.0")
            let notFound = try await client.send(.get, "/v1/nothing-here")
            #expect(notFound.status == .notFound)
            #expect(notFound.errorCode == "not_found")
        }
    }

    @Test func authentication() async throws {
        var f = try Fixture()
        f.keys["revoked"] = nil
        let keys = f.keys, admin = f.admin
        let body = Doc.snapshot(user: "u-1")
        try await f.api.buildApplication().test(.router) { client in
            // No key.
            var r = try await client.send(.post, "/v1/picks", body: body)
            #expect(r.status == .unauthorized)
            #expect(r.errorCode == "unauthorized")
            #expect(r.headers[.wwwAuthenticate] == "Bearer")
            // Not a bearer key, a malformed key, a well-formed unknown key.
            for header in ["Basic dTp4", "Bearer nonsense", "Bearer stk_0123456789ab_" + String(repeating: "0", count: 48)] {
                r = try await client.execute(
                    uri: "/v1/picks", method: .post, headers: [.authorization: header], body: ByteBuffer(string: body))
                #expect(r.status == .unauthorized, "\(header)")
                #expect(r.errorCode == "unauthorized")
            }
            // Two Authorization fields, even with the user's own key in each: refused, not the first taken.
            var twice = HTTPFields()
            twice.append(HTTPField(name: .authorization, value: "Bearer \(keys["u-1"]!)"))
            twice.append(HTTPField(name: .authorization, value: "Bearer \(keys["u-1"]!)"))
            r = try await client.execute(uri: "/v1/picks", method: .post, headers: twice, body: ByteBuffer(string: body))
            #expect(r.status == .unauthorized)
            // Another user's key.
            r = try await client.send(.post, "/v1/picks", key: keys["u-2"], body: body)
            #expect(r.status == .forbidden)
            #expect(r.errorCode == "forbidden")
            // The user's own key.
            r = try await client.send(.post, "/v1/picks", key: keys["u-1"], body: body)
            #expect(r.status == .ok)
            #expect(r.json["pick_id"]?.stringValue?.hasPrefix("p-") == true)
            #expect(r.json["user"]?.stringValue == "u-1")
            // An admin key reaches every user.
            r = try await client.send(.post, "/v1/picks", key: admin, body: Doc.snapshot(user: "u-2"))
            #expect(r.status == .ok)
            // A user key cannot manage users.
            r = try await client.send(.post, "/v1/users", key: keys["u-1"], body: #"{"id": "u-9"}"#)
            #expect(r.status == .forbidden)
            r = try await client.send(.delete, "/v1/users/u-2", key: keys["u-1"])
            #expect(r.status == .forbidden)
            // Bins: own yes, other no.
            #expect(try await client.send(.get, "/v1/users/u-1/bins", key: keys["u-1"]).status == .ok)
            #expect(try await client.send(.get, "/v1/users/u-2/bins", key: keys["u-1"]).status == .forbidden)
            #expect(try await client.send(.get, "/v1/users/u-2/bins", key: admin).status == .ok)
        }
    }

    @Test func revokedKeyStopsWorking() async throws {
        let f = try Fixture { $0.keyCacheSeconds = 0 }
        let key = f.keys["u-1"]!
        let store = f.service.store
        try await f.api.buildApplication().test(.router) { client in
            #expect(try await client.send(.get, "/v1/users/u-1/bins", key: key).status == .ok)
            let id = try #require(try store.keys().first { $0.user == "u-1" }?.id)
            #expect(try store.revokeKey(id: id, at: Date()))
            let r = try await client.send(.get, "/v1/users/u-1/bins", key: key)
            #expect(r.status == .unauthorized)
        }
    }

    @Test func keysInUseAreRevalidatedInBulkAndRevokedOnesLeave() async throws {
        let f = try Fixture { $0.keyCacheSeconds = 10 }
        let key = f.keys["u-1"]!, other = f.keys["u-2"]!
        let store = f.service.store, auth = f.api.authenticator, clock = f.clock
        try await f.api.buildApplication().test(.router) { client in
            // Looked up at t = 0; the first request also starts a background revalidation.
            #expect(try await client.send(.get, "/v1/users/u-1/bins", key: key).status == .ok)
            #expect(try await client.send(.get, "/v1/users/u-2/bins", key: other).status == .ok)
            try await waitUntil { auth.lastRevalidation != nil }
            // t = 6: one query revalidates every cached key.
            clock.advance(6)
            auth.revalidate()
            let id = try #require(try store.keys().first { $0.user == "u-1" }?.id)
            #expect(try store.revokeKey(id: id, at: Date()))
            // t = 12: past 10 s since the lookup, but 6 s since the revalidation: no lookup, still served
            // (a revoked key may work for up to keyCacheSeconds).
            clock.advance(6)
            #expect(try await client.send(.get, "/v1/users/u-1/bins", key: key).status == .ok)
            // The next revalidation drops the revoked key and keeps the other.
            auth.revalidate()
            #expect(try await client.send(.get, "/v1/users/u-1/bins", key: key).status == .unauthorized)
            #expect(try await client.send(.get, "/v1/users/u-2/bins", key: other).status == .ok)
        }
    }

    @Test("Another method on an existing path gets 405 with Allow; a body not declared as JSON gets 415; /readyz says 503 once draining")
    func methodsMediaTypesAndDraining() async throws {
        let f = try Fixture()
        let key = f.keys["u-1"]!, admin = f.admin
        try await f.api.buildApplication().test(.router) { client in
            var r = try await client.send(.get, "/v1/users", key: admin)
            #expect(r.status == .methodNotAllowed)
            #expect(r.headers[.allow] == "POST")
            #expect(r.errorCode == "method_not_allowed")
            r = try await client.send(.put, "/v1/users/u-1", key: admin)
            #expect(r.status == .methodNotAllowed)
            #expect(r.headers[.allow] == "DELETE")
            r = try await client.send(.get, "/v1/picks", key: key)
            #expect(r.headers[.allow] == "POST")
            r = try await client.send(.get, "/v1/nothing", key: key)
            #expect(r.status == .notFound)
            #expect(r.errorCode == "not_found")
            for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"] {
                let t = try await client.execute(
                    uri: "/v1/picks", method: .post, headers: [.authorization: "Bearer \(key)", .contentType: type],
                    body: ByteBuffer(string: Doc.snapshot(user: "u-1")))
                #expect(t.status == .unsupportedMediaType, "\(type)")
                #expect(t.errorCode == "unsupported_media_type")
            }
            let ok = try await client.execute(
                uri: "/v1/picks", method: .post, headers: [.authorization: "Bearer \(key)", .contentType: "application/json; charset=utf-8"],
                body: ByteBuffer(string: Doc.snapshot(user: "u-1")))
            #expect(ok.status == .ok)
            #expect(try await client.send(.get, "/readyz").status == .ok)
            f.api.beginDraining()
            r = try await client.send(.get, "/readyz")
            #expect(r.status == .serviceUnavailable)
            #expect(r.errorCode == "unavailable")
            #expect(try await client.send(.get, "/healthz").status == .ok)
        }
    }

    @Test func badInputNamesTheField() async throws {
        let f = try Fixture()
        let key = f.keys["u-1"]!, admin = f.admin
        try await f.api.buildApplication().test(.router) { client in
            var r = try await client.send(.post, "/v1/picks", key: key, body: "{not json")
            #expect(r.status == .badRequest)
            #expect(r.errorCode == "bad_request")
            r = try await client.send(.post, "/v1/picks", key: key, body: Doc.snapshot(user: "u-1", lat: 123.5))
            #expect(r.status == .badRequest)
            #expect(r.errorField == "location.lat")
            #expect(r.json["error"]?["message"]?.stringValue?.contains("location.lat") == true)
            r = try await client.send(.post, "/v1/picks", key: key, body: #"{"user": "u-1"}"#)
            #expect(r.status == .badRequest)
            #expect(r.errorField == "at")
            r = try await client.send(.post, "/v1/picks?top=0", key: key, body: Doc.snapshot(user: "u-1"))
            #expect(r.status == .badRequest)
            #expect(r.errorField == "top")
            r = try await client.send(.post, "/v1/picks?learn=maybe", key: key, body: Doc.snapshot(user: "u-1"))
            #expect(r.errorField == "learn")
            // Unknown user (an admin key reaches it, but it does not exist).
            r = try await client.send(.post, "/v1/picks", key: admin, body: Doc.snapshot(user: "ghost"))
            #expect(r.status == .notFound)
            #expect(r.errorCode == "unknown_user")
            r = try await client.send(.get, "/v1/users/ghost/bins", key: admin)
            #expect(r.errorCode == "unknown_user")
            // Feedback: wrong type, a missing context, an unknown pick.
            r = try await client.send(.post, "/v1/feedback", key: key, body: "42")
            #expect(r.status == .badRequest)
            r = try await client.send(.post, "/v1/feedback", key: key, body: #"{"id": "e1", "user": "u-1", "at": "2026-03-14T07:45:02+01:00", "track": "x", "signal": "meh"}"#)
            #expect(r.errorField == "signal")
            r = try await client.send(.post, "/v1/feedback", key: key, body: Doc.event(id: "e1", user: "u-1", track: try f.track, pickId: "p-nope"))
            #expect(r.status == .badRequest)
            #expect(r.errorField == "pick_id")
            // An unknown track is named before the pick (it does not depend on the user's past).
            r = try await client.send(.post, "/v1/feedback", key: key, body: Doc.event(id: "e1", user: "u-1", track: "t", pickId: "p-nope"))
            #expect(r.status == .badRequest)
            #expect(r.errorField == "track")
            r = try await client.send(.post, "/v1/feedback", key: key, body: "[]")
            #expect(r.status == .badRequest)
            // One event is read by the fast decoder: malformed JSON and a bad nested field still name the place.
            r = try await client.send(.post, "/v1/feedback", key: key, body: " {not json")
            #expect(r.status == .badRequest)
            #expect(r.errorCode == "bad_request")
            let badSnapshot = Doc.event(id: "e2", user: "u-1", track: "t", snapshot: true).replacingOccurrences(of: "42.0267", with: "123.5")
            r = try await client.send(.post, "/v1/feedback", key: key, body: "\n  " + badSnapshot)
            #expect(r.status == .badRequest)
            #expect(r.errorField == "snapshot.location.lat")
            // Users.
            r = try await client.send(.post, "/v1/users", key: admin, body: #"{"id": "u-9", "age": 7}"#)
            #expect(r.errorField == "age")
            r = try await client.send(.post, "/v1/users", key: admin, body: #"{"id": "u-1"}"#)
            #expect(r.status == .conflict)
            #expect(r.errorCode == "conflict")
            r = try await client.send(.post, "/v1/users", key: admin, body: #"{"email": "x@y.z"}"#)
            #expect(r.errorField == "id")
            r = try await client.send(.delete, "/v1/users/ghost", key: admin)
            #expect(r.status == .notFound)
            #expect(r.errorCode == "unknown_user")
        }
    }

    @Test func sizeLimit() async throws {
        let f = try Fixture { $0.maxBodyBytes = 4096 }
        let key = f.keys["u-1"]!
        try await f.api.buildApplication().test(.router) { client in
            let big = Doc.snapshot(user: "u-1").replacingOccurrences(of: "focused", with: String(repeating: "x", count: 5000))
            let r = try await client.send(.post, "/v1/picks", key: key, body: big)
            #expect(r.status == .contentTooLarge)
            #expect(r.errorCode == "payload_too_large")
            #expect(try await client.send(.post, "/v1/picks", key: key, body: Doc.snapshot(user: "u-1")).status == .ok)
        }
    }

    @Test func rateLimit() async throws {
        let f = try Fixture { $0.userRate = RateLimit(perSecond: 1, burst: 3) }
        let key = f.keys["u-1"]!, other = f.keys["u-2"]!
        let clock = f.clock
        try await f.api.buildApplication().test(.router) { client in
            for _ in 0..<3 {
                #expect(try await client.send(.get, "/v1/users/u-1/bins", key: key).status == .ok)
            }
            let r = try await client.send(.get, "/v1/users/u-1/bins", key: key)
            #expect(r.status == .tooManyRequests)
            #expect(r.errorCode == "rate_limited")
            #expect(r.headers[.retryAfter] == "1")
            // Another key has its own bucket.
            #expect(try await client.send(.get, "/v1/users/u-2/bins", key: other).status == .ok)
            clock.advance(1.01)
            #expect(try await client.send(.get, "/v1/users/u-1/bins", key: key).status == .ok)
        }
    }

    @Test func pickThenFeedbackIsCommittedAndIdempotent() async throws {
        let f = try Fixture()
        let key = f.keys["u-1"]!, key2 = f.keys["u-2"]!
        let store = f.service.store
        let track = try f.track
        try await f.api.buildApplication().test(.router) { client in
            let pick = try await client.send(.post, "/v1/picks?top=3", key: key, body: Doc.snapshot(user: "u-1"))
            #expect(pick.status == .ok)
            #expect(pick.json["ranked"]?.arrayCount == 3)
            // The hand-written encoder writes what the JSON tree would: the body is its own canonical form.
            #expect(pick.text == pick.json.serialized())
            #expect(pick.headers[.contentType] == "application/json; charset=utf-8")
            let pickId = try #require(pick.json["pick_id"]?.stringValue)
            let picked = try #require(pick.json["track"]?["id"]?.stringValue)
            var r = try await client.send(.post, "/v1/feedback", key: key, body: Doc.event(id: "ev-1", user: "u-1", track: picked, pickId: pickId))
            #expect(r.status == .ok)
            #expect(r.json["status"]?.stringValue == "applied")
            // Acknowledged means committed.
            #expect(try store.feedbackCount(user: "u-1") == 1)
            r = try await client.send(.post, "/v1/feedback", key: key, body: Doc.event(id: "ev-1", user: "u-1", track: picked, pickId: pickId))
            #expect(r.json["status"]?.stringValue == "duplicate")
            #expect(try store.feedbackCount(user: "u-1") == 1)
            // The same id from another user is a conflict naming the field.
            r = try await client.send(.post, "/v1/feedback", key: key2, body: Doc.event(id: "ev-1", user: "u-2", track: track, snapshot: true))
            #expect(r.status == .conflict)
            #expect(r.errorCode == "conflict")
            #expect(r.errorField == "id")
            // A batch: applied, duplicate, and one rejected (unknown track) without sinking the others.
            let batch =
                "["
                + [
                    Doc.event(id: "ev-2", user: "u-1", track: track, signal: "dislike", snapshot: true),
                    Doc.event(id: "ev-1", user: "u-1", track: picked, pickId: pickId),
                    Doc.event(id: "ev-3", user: "u-1", track: "no-such-track", snapshot: true),
                    Doc.event(id: "ev-4", user: "u-1", track: track, signal: "skip", snapshot: true)
                ].joined(separator: ",") + "]"
            r = try await client.send(.post, "/v1/feedback", key: key, body: batch)
            #expect(r.status == .ok)
            #expect(r.json["applied"]?.numberValue == 2)
            #expect(r.json["duplicates"]?.numberValue == 1)
            #expect(r.json["rejected"]?.numberValue == 1)
            #expect(r.json["results"]?[2]?["error"]?["field"]?.stringValue == "[2].track")
            #expect(try store.feedbackCount(user: "u-1") == 3)
            // A batch naming another user is refused whole.
            let mixed = "[" + Doc.event(id: "ev-5", user: "u-1", track: track, snapshot: true) + "," + Doc.event(id: "ev-6", user: "u-2", track: track, snapshot: true) + "]"
            r = try await client.send(.post, "/v1/feedback", key: key, body: mixed)
            #expect(r.status == .forbidden)
            #expect(r.errorField == "[1].user")
            #expect(try store.feedbackCount(user: "u-1") == 3)
            // Bins reflect the feedback.
            r = try await client.send(.get, "/v1/users/u-1/bins", key: key)
            #expect((r.json.arrayCount ?? 0) >= 1)
        }
        // After shutdown, the picks are in the database too.
        #expect(try store.user("u-1")?.picks == 1)
    }

    /// Found by scripts/api-fuzz.sh (schemathesis): an id of 128 characters but 129 code points
    /// passed validation and failed the users table's CHECK, a 500.
    @Test func userIdsAndRegionsAreCountedAsTheStoreCountsThem() async throws {
        let f = try Fixture()
        let admin = f.admin
        let store = f.service.store
        let modifier = "5\u{1F3FB}"  // one character, two code points
        #expect(modifier.count == 1 && modifier.unicodeScalars.count == 2)
        let longId = modifier + String(repeating: "*", count: 127)
        let longRegion = String(repeating: "e\u{301}", count: 33)  // 33 characters, 66 code points
        try await f.api.buildApplication().test(.router) { client in
            var r = try await client.send(.post, "/v1/users", key: admin, body: #"{"id": "\#(longId)"}"#)
            #expect(r.status == .badRequest)
            #expect(r.json["error"]?["field"]?.stringValue == "id")
            r = try await client.send(.post, "/v1/users", key: admin, body: #"{"id": "u-r", "region": "\#(longRegion)"}"#)
            #expect(r.status == .badRequest)
            #expect(r.json["error"]?["field"]?.stringValue == "region")
            // A control character (a NUL first made SQLite's length() 0: the table's CHECK failed, a 500).
            for region in [#"\u0000RK"#, #"R\u0007K"#, #"RK\u0085"#] {
                r = try await client.send(.post, "/v1/users", key: admin, body: #"{"id": "u-c", "region": "\#(region)"}"#)
                #expect(r.status == .badRequest && r.json["error"]?["field"]?.stringValue == "region", "\(region): \(r.text)")
            }
            // At the limit, both are stored.
            let idAtLimit = modifier + String(repeating: "*", count: 126)
            r = try await client.send(.post, "/v1/users", key: admin, body: #"{"id": "\#(idAtLimit)", "region": "\#(String(longRegion.dropLast()))"}"#)
            #expect(r.status == .created)
            #expect(try store.userExists(idAtLimit))
        }
    }

    @Test func usersCreateAndForget() async throws {
        let f = try Fixture()
        let admin = f.admin
        let store = f.service.store
        try await f.api.buildApplication().test(.router) { client in
            var r = try await client.send(.post, "/v1/users", key: admin, body: #"{"id": "u-9", "email": "Ana@Example.org", "age": 24, "region": "DE"}"#)
            #expect(r.status == .created)
            #expect(r.json["id"]?.stringValue == "u-9")
            let stored = try #require(try store.user("u-9"))
            #expect(r.json["email_hash"]?.stringValue == stored.emailHash && stored.emailHash?.count == 64)
            #expect(r.json["email_hash_scheme"]?.stringValue == "hmac-sha256" && stored.emailHashScheme == .hmacSHA256)
            #expect(r.json["email_sha256"] == .null, "deprecated: only a legacy hash shows there")
            #expect(!r.text.contains("Ana@Example.org"))
            r = try await client.send(.post, "/v1/picks", key: admin, body: Doc.snapshot(user: "u-9"))
            #expect(r.status == .ok)
            let pickId = try #require(r.json["pick_id"]?.stringValue)
            let track = try #require(r.json["track"]?["id"]?.stringValue)
            r = try await client.send(.post, "/v1/feedback", key: admin, body: Doc.event(id: "ev-9", user: "u-9", track: track, pickId: pickId))
            #expect(r.status == .ok)
            r = try await client.send(.delete, "/v1/users/u-9", key: admin)
            #expect(r.status == .noContent)
            #expect(try store.rowCounts(user: "u-9").values.allSatisfy { $0 == 0 })
            r = try await client.send(.post, "/v1/picks", key: admin, body: Doc.snapshot(user: "u-9"))
            #expect(r.errorCode == "unknown_user")
            r = try await client.send(.delete, "/v1/users/u-9", key: admin)
            #expect(r.errorCode == "unknown_user")
            // The id can be used again, starting from nothing.
            r = try await client.send(.post, "/v1/users", key: admin, body: #"{"id": "u-9"}"#)
            #expect(r.status == .created)
            r = try await client.send(.get, "/v1/users/u-9/bins", key: admin)
            #expect(r.json.arrayCount == 0)
        }
        #expect(try store.rowCounts(user: "u-9")["picks"] == 0)
    }

    @Test("PUT /v1/users/{id}/email sets, re-keys and removes a user's email hash; admin only; errors name the field")
    func setEmailThroughTheAPI() async throws {
        let f = try Fixture()
        let admin = f.admin, key = f.keys["u-1"]!
        let store = f.service.store
        // A legacy row, as an old database holds it: the unkeyed SHA-256 of the address.
        try await store.database.write { db in
            try db.execute(
                sql: "UPDATE users SET email_hash = ?, email_hash_scheme = 'sha256' WHERE id = 'u-2'",
                arguments: [Hashing.sha256Hex("ana@example.org")])
        }
        try await f.api.buildApplication().test(.router) { client in
            var r = try await client.send(.put, "/v1/users/u-2/email", key: admin, body: #"{"email": " Ana@Example.org "}"#)
            #expect(r.status == .ok, "\(r.text)")
            #expect(r.json["id"]?.stringValue == "u-2")
            #expect(r.json["email_hash_scheme"]?.stringValue == "hmac-sha256")
            let keyed = try #require(r.json["email_hash"]?.stringValue)
            #expect(keyed != Hashing.sha256Hex("ana@example.org") && !r.text.contains("example.org"))
            #expect(try store.user("u-2")?.emailHash == keyed)
            #expect(try store.emailMatches("ana@example.org", user: "u-2"))
            // Removed with null.
            r = try await client.send(.put, "/v1/users/u-2/email", key: admin, body: #"{"email": null}"#)
            #expect(r.status == .ok)
            #expect(r.json["email_hash"] == .null)
            #expect(try store.user("u-2")?.emailHash == nil)
            // Errors: a user key, an unknown user, no email field, not an address, not a string.
            r = try await client.send(.put, "/v1/users/u-1/email", key: key, body: #"{"email": "a@b.c"}"#)
            #expect(r.status == .forbidden)
            r = try await client.send(.put, "/v1/users/ghost/email", key: admin, body: #"{"email": "a@b.c"}"#)
            #expect(r.status == .notFound && r.errorCode == "unknown_user")
            r = try await client.send(.put, "/v1/users/u-1/email", key: admin, body: #"{"mail": "a@b.c"}"#)
            #expect(r.status == .badRequest && r.errorField == "email", "\(r.text)")
            r = try await client.send(.put, "/v1/users/u-1/email", key: admin, body: #"{"email": "no-at-sign"}"#)
            #expect(r.status == .badRequest && r.errorField == "email", "\(r.text)")
            r = try await client.send(.put, "/v1/users/u-1/email", key: admin, body: #"{"email": 42}"#)
            #expect(r.status == .badRequest && r.errorField == "email", "\(r.text)")
            r = try await client.send(.get, "/v1/users/u-1/email", key: admin)
            #expect(r.status == .methodNotAllowed && r.headers[.allow] == "PUT")
        }
    }

    @Test("Feedback and picks in flight while their user is deleted get 200 or 404, never a 500; the user is gone after")
    func feedbackRacingAUserDeletion() async throws {
        let f = try Fixture(users: [])
        let admin = f.admin
        let store = f.service.store
        let track = try f.track
        let (served, refused) = try await f.api.buildApplication().test(.router) { client in
            var served = 0, refused = 0
            for round in 0..<6 {
                let user = "race-\(round)"
                var r = try await client.send(.post, "/v1/users", key: admin, body: #"{"id": "\#(user)"}"#)
                #expect(r.status == .created)
                r = try await client.send(.post, "/v1/picks", key: admin, body: Doc.snapshot(user: user))
                let pickId = try #require(r.json["pick_id"]?.stringValue)
                // 60 requests at once and the deletion among them: in round 0 before any of them
                // has answered, in round r once 10·r have answered (so that some are served for sure
                // and the others meet the deletion at every stage).
                let statuses = try await withThrowingTaskGroup(of: (String, HTTPResponse.Status, String?).self) { group in
                    var statuses: [(String, HTTPResponse.Status, String?)] = []
                    let delete: @Sendable () async throws -> (String, HTTPResponse.Status, String?) = {
                        let r = try await client.send(.delete, "/v1/users/\(user)", key: admin)
                        return ("delete", r.status, r.errorCode)
                    }
                    if round == 0 { group.addTask(operation: delete) }
                    for i in 0..<60 {
                        group.addTask {
                            switch i % 3 {
                            case 0:
                                let r = try await client.send(.post, "/v1/picks", key: admin, body: Doc.snapshot(user: user))
                                return ("pick", r.status, r.errorCode)
                            case 1:
                                let body = Doc.event(id: "e-\(round)-\(i)", user: user, track: track, signal: "dislike", pickId: pickId)
                                let r = try await client.send(.post, "/v1/feedback", key: admin, body: body)
                                return ("feedback", r.status, r.errorCode)
                            default:
                                let body = "[" + Doc.event(id: "b-\(round)-\(i)", user: user, track: track, snapshot: true) + "]"
                                let r = try await client.send(.post, "/v1/feedback", key: admin, body: body)
                                return ("batch", r.status, r.errorCode)
                            }
                        }
                    }
                    if round > 0 {
                        for _ in 0..<(10 * round) { if let s = try await group.next() { statuses.append(s) } }
                        group.addTask(operation: delete)
                    }
                    for try await s in group { statuses.append(s) }
                    return statuses
                }
                #expect(statuses.count == 61)
                served += statuses.filter { $0.0 != "delete" && $0.0 != "batch" && $0.1 == .ok }.count
                refused += statuses.filter { $0.1 == .notFound || $0.1 == .badRequest }.count
                for (kind, status, code) in statuses {
                    switch kind {
                    case "delete": #expect(status == .noContent, "round \(round): delete \(status) \(code ?? "")")
                    case "batch": #expect(status == .ok, "round \(round): a batch answers 200 with per-event results, got \(status)")
                    default:
                        // Before the deletion: served; after it: the user (or its pick) is unknown.
                        let ok = status == .ok || (status == .notFound && code == "unknown_user") || (status == .badRequest && code == "bad_request")
                        #expect(ok, "round \(round): \(kind) \(status) \(code ?? "")")
                    }
                }
                #expect(try store.rowCounts(user: user).values.allSatisfy { $0 == 0 }, "round \(round)")
                r = try await client.send(.get, "/v1/users/\(user)/bins", key: admin)
                #expect(r.errorCode == "unknown_user")
            }
            return (served, refused)
        }
        // The requests did meet the deletion from both sides.
        #expect(served > 0 && refused > 0, "served \(served), refused \(refused)")
    }

    @Test func metricsCountRoutesPicksAndBins() async throws {
        let f = try Fixture()
        let key = f.keys["u-1"]!
        try await f.api.buildApplication().test(.router) { client in
            _ = try await client.send(.post, "/v1/picks", key: key, body: Doc.snapshot(user: "u-1"))
            _ = try await client.send(.post, "/v1/picks", body: Doc.snapshot(user: "u-1"))
            let r = try await client.send(.get, "/metrics")
            #expect(r.status == .ok)
            let text = r.text
            #expect(text.contains(#"soundtrack_http_requests_total{route="/v1/picks",method="POST",status="200"} 1"#))
            #expect(text.contains(#"soundtrack_http_requests_total{route="/v1/picks",method="POST",status="401"} 1"#))
            #expect(text.contains("soundtrack_http_request_duration_seconds_bucket"))
            #expect(text.contains("soundtrack_picks_total 1"))
            #expect(text.contains("soundtrack_bins_created_total 1"))
            #expect(text.contains("soundtrack_bin_switches_total"))
        }
    }

    @Test("At trace level, no route, error or provider failure logs a coordinate, an email, a key, a calendar title or a device name")
    func traceLogsOfEveryRouteHoldNothingSensitive() async throws {
        let providerLogs = CapturedLogs()
        /// A weather provider that always answers 500 (its URL, with the coordinates, is what gets logged).
        struct Failing: HTTPTransport {
            func send(_ request: SoundtrackProviders.HTTPRequest, timeout: Double) async throws(TransportFailure) -> SoundtrackProviders.HTTPResponse {
                SoundtrackProviders.HTTPResponse(status: 500)
            }
        }
        let client = ProviderHTTPClient(transport: Failing(), policy: RetryPolicy(maxAttempts: 2, baseDelay: 0, maxDelay: 0), logger: providerLogs.logger, sleep: { _ in })
        let weather = WeatherService(providers: [
            OpenWeatherClient(baseURL: URL(string: "http://127.0.0.1:9/data/2.5")!, apiKey: "OWKEY-123456", client: client),
            OpenMeteoClient(baseURL: URL(string: "http://127.0.0.1:9")!, client: client)
        ])
        let f = try Fixture { $0.enricher = SnapshotEnricher(weather: weather, googleCalendar: nil, storedEvents: nil) }
        let key = f.keys["u-1"]!, admin = f.admin
        let track = try f.track
        let bare = #"{"user":"u-1","at":"2026-03-14T07:42:10+01:00","location":{"lat":42.0267,"lon":-93.6465}}"#
        try await f.api.buildApplication().test(.router) { client in
            var r = try await client.send(.post, "/v1/picks", key: key, body: bare)
            #expect(r.json["enriched"]?.serialized().contains(#""section":"weather""#) == true, "\(r.text)")
            r = try await client.send(.post, "/v1/picks?top=5", key: key, body: Doc.snapshot(user: "u-1"))
            let pickId = r.json["pick_id"]?.stringValue ?? ""
            _ = try await client.send(.post, "/v1/picks", key: key, body: Doc.snapshot(user: "u-1", lat: 142.0267))
            _ = try await client.send(.post, "/v1/picks", key: "stk_nope_nope", body: Doc.snapshot(user: "u-1"))
            _ = try await client.send(.post, "/v1/picks", key: f.keys["u-2"]!, body: Doc.snapshot(user: "u-1"))
            _ = try await client.send(.post, "/v1/feedback", key: key, body: Doc.event(id: "e-1", user: "u-1", track: track, pickId: pickId, snapshot: true))
            _ = try await client.send(.post, "/v1/feedback", key: key, body: "[" + Doc.event(id: "e-2", user: "u-1", track: "nope", snapshot: true) + "]")
            _ = try await client.send(.post, "/v1/users", key: admin, body: #"{"id": "u-7", "email": "ana.secret@example.org", "age": 24, "region": "DE"}"#)
            _ = try await client.send(.post, "/v1/users", key: admin, body: #"{"id": "u-7", "email": "ana.secret@example.org"}"#)
            _ = try await client.send(.get, "/v1/users/u-1/bins", key: key)
            _ = try await client.send(.delete, "/v1/users/u-7", key: admin)
            _ = try await client.send(.get, "/v1/users", key: admin)
            _ = try await client.execute(
                uri: "/v1/picks", method: .post, headers: [.authorization: "Bearer \(key)", .contentType: "text/plain"],
                body: ByteBuffer(string: Doc.snapshot(user: "u-1")))
            for path in ["/healthz", "/readyz", "/metrics", "/openapi.json", "/nope"] { _ = try await client.send(.get, path) }
        }
        let logs = f.logs.text + "\n" + providerLogs.text
        #expect(providerLogs.text.contains("lat=REDACTED"), "\(providerLogs.text)")
        for secret in ["42.0267", "93.6465", "142.0267", "oncology", "Confidential", "AirPods", "ana.secret", "example.org", "OWKEY", key, admin] {
            #expect(!logs.contains(secret), "\(secret) reached the logs")
        }
    }

    @Test func sensitiveFieldsNeverReachTheLogs() async throws {
        let f = try Fixture()
        let key = f.keys["u-1"]!
        let track = try f.track
        try await f.api.buildApplication().test(.router) { client in
            _ = try await client.send(.post, "/v1/picks", key: key, body: Doc.snapshot(user: "u-1"))
            _ = try await client.send(.post, "/v1/picks", key: key, body: Doc.snapshot(user: "u-1", lat: 142.0267))
            _ = try await client.send(.post, "/v1/feedback", key: key, body: Doc.event(id: "e-1", user: "u-1", track: track, snapshot: true))
            _ = try await client.send(.post, "/v1/feedback", key: key, body: Doc.event(id: "e-2", user: "u-1", track: "nope", snapshot: true))
        }
        let logs = f.logs.text
        for secret in ["42.0267", "93.6465", "oncology", "Confidential", "AirPods", key] {
            #expect(!logs.contains(secret), "\(secret) reached the logs")
        }
    }
}
