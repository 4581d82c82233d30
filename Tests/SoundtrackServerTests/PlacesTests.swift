import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SoundtrackContext
import SoundtrackTestSupport
import Testing

@testable import SoundtrackServer
@testable import SoundtrackStore

/// Places a person names (issue 42, item 4): listed and named over HTTP and through the CLI, a
/// snapshot's label at a learned place naming it, and the name used in labels and `why`.
@Suite struct PlacesTests {
    /// A snapshot at coordinates without a place label (so the coordinates teach a place), or with `label`.
    static func snapshot(user: String, minute: Int, label: String? = nil) -> String {
        Doc.snapshot(user: user, at: String(format: "2026-03-14T07:%02d:00+01:00", minute))
            .replacingOccurrences(of: #", "place": "library""#, with: label.map { #", "place": "\#($0)""# } ?? "")
    }

    @Test("GET and PUT /v1/users/{id}/places: own key or admin, 404 for a place the person lacks, 400 naming a bad name; labels and why use the name")
    func overHTTP() async throws {
        let f = try Fixture()
        let store = f.service.store
        try await f.api.buildApplication().test(.router) { client in
            let key = f.keys["u-1"]!
            var r = try await client.send(.post, "/v1/picks", key: key, body: Self.snapshot(user: "u-1", minute: 0))
            #expect(r.status == .ok, "\(r.text)")
            r = try await client.send(.get, "/v1/users/u-1/places", key: key)
            #expect(r.text == #"{"places":[{"id":"pl-1","name":null,"lat":42.027,"lon":-93.647,"count":1}]}"#, "\(r.text)")
            let before = try await client.send(.get, "/v1/users/u-1/bins", key: key).text
            #expect(before.contains("place #1"), "\(before)")

            r = try await client.send(.put, "/v1/users/u-1/places/pl-1", key: key, body: #"{"name": "  home "}"#)
            #expect(r.text == #"{"id":"pl-1","name":"home","lat":42.027,"lon":-93.647,"count":1}"#, "\(r.text)")
            let after = try await client.send(.get, "/v1/users/u-1/bins", key: key).text
            #expect(after.contains("home") && !after.contains("place #1"), "\(after)")
            r = try await client.send(.post, "/v1/picks", key: key, body: Self.snapshot(user: "u-1", minute: 5))
            #expect(r.json["bin"]?["label"]?.stringValue?.contains("home") == true && !r.text.contains("place #1"), "\(r.text)")
            // `why` names the place's slot as the vocabulary does.
            var vocabulary = FeatureVocabulary(places: ["pl-1"], tags: [])
            #expect(vocabulary.displayName(slot: FeatureLayout.require("place.p0")) == "place #1")
            vocabulary.placeNames = ["pl-1": "home"]
            #expect(vocabulary.displayName(slot: FeatureLayout.require("place.p0")) == "place: home")
            let stored = try await store.database.read { db in try String.fetchAll(db, sql: "SELECT name FROM places WHERE user_id = 'u-1'") }
            #expect(stored == ["home"])

            // Another person's key, a place the person lacks, and bad names (nothing changes).
            #expect(try await client.send(.get, "/v1/users/u-1/places", key: f.keys["u-2"]).status == .forbidden)
            #expect(try await client.send(.put, "/v1/users/u-1/places/pl-1", key: f.keys["u-2"], body: #"{"name": "x"}"#).status == .forbidden)
            r = try await client.send(.put, "/v1/users/u-1/places/pl-9", key: key, body: #"{"name": "gym"}"#)
            #expect(r.status == .notFound && r.errorCode == "unknown_place" && r.errorField == "place", "\(r.text)")
            let long = String(repeating: "é", count: 65)
            for (body, field) in [
                (#"{"name": " "}"#, "name"), (#"{"name": "\#(long)"}"#, "name"), (#"{"name": "a\u0007b"}"#, "name"), (#"{"nom": "x"}"#, "nom"), (#"{"name": 3}"#, "name"),
                ("{}", "name")
            ] {
                r = try await client.send(.put, "/v1/users/u-1/places/pl-1", key: key, body: body)
                #expect(r.status == .badRequest && r.errorField == field, "\(body): \(r.text)")
            }
            #expect(try await client.send(.get, "/v1/users/u-1/places", key: f.admin).text.contains(#""name":"home""#))
            r = try await client.send(.put, "/v1/users/u-1/places/pl-1", key: f.admin, body: #"{"name": null}"#)
            #expect(r.status == .ok && r.json["name"] == .null, "\(r.text)")

            // A label sent at a learned place without a name names it; a later label does not rename it.
            let key2 = f.keys["u-2"]!
            _ = try await client.send(.post, "/v1/picks", key: key2, body: Self.snapshot(user: "u-2", minute: 0))
            _ = try await client.send(.post, "/v1/picks", key: key2, body: Self.snapshot(user: "u-2", minute: 1, label: "Gym"))
            _ = try await client.send(.post, "/v1/picks", key: key2, body: Self.snapshot(user: "u-2", minute: 2, label: "office"))
            r = try await client.send(.get, "/v1/users/u-2/places", key: key2)
            #expect(r.text == #"{"places":[{"id":"pl-1","name":"gym","lat":42.027,"lon":-93.647,"count":1}]}"#, "\(r.text)")
        }
    }

    @Test("soundtrack places list and name: a table or JSON; an unknown place or a bad name exits 2 naming it; bins show the name")
    func throughTheCLI() async throws {
        let (dir, db) = try await CLI.smallDatabase(user: "u-1")
        let file = dir.appendingPathComponent("s.json")
        try Data(Self.snapshot(user: "u-1", minute: 0).utf8).write(to: file)
        #expect(try await CLI.run(["pick", "--db", db, file.path]).status == 0)
        var r = try await CLI.run(["places", "list", "u-1", "--db", db])
        #expect(r.status == 0 && r.stdout == "pl-1  (no name)  42.027, -93.647  1 snapshots\n", "\(r.stdout)\(r.stderr)")
        r = try await CLI.run(["places", "name", "u-1", "pl-1", "home", "--json", "--db", db])
        #expect(r.status == 0 && r.stdout == #"{"id":"pl-1","name":"home","lat":42.027,"lon":-93.647,"count":1}"# + "\n", "\(r.stdout)\(r.stderr)")
        r = try await CLI.run(["bins", "--user", "u-1", "--db", db])
        #expect(r.stdout.contains("home") && !r.stdout.contains("place #1"), "\(r.stdout)")
        r = try await CLI.run(["places", "name", "u-1", "pl-9", "gym", "--db", db])
        #expect(r.status == 2 && r.stderr.contains("place: expected a place of user 'u-1'"), "\(r.stderr)")
        r = try await CLI.run(["places", "name", "u-1", "pl-1", "  ", "--db", db])
        #expect(r.status == 2 && r.stderr.contains("name: expected a name of 1...64 characters"), "\(r.stderr)")
        r = try await CLI.run(["places", "list", "nobody", "--db", db])
        #expect(r.status == 2 && r.stderr.contains("nobody"), "\(r.stderr)")
        r = try await CLI.run(["places", "list", "u-1", "--json", "--db", db])
        #expect(r.stdout.contains(#""name":"home""#), "\(r.stdout)")
    }
}
