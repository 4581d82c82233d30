import Foundation
import HummingbirdTesting
import SoundtrackContext
import SoundtrackServer
import Testing

/// `GET /v1/users/{id}/export` (issue 42, item 6): the person's own key or admin; what the service
/// answered is in it, its queued writes committed first.
@Suite struct ExportRouteTests {
    @Test func ownKeyOrAdminAndWhatTheServiceAnsweredIsInIt() async throws {
        let f = try Fixture()
        let key = f.keys["u-1"]!, other = f.keys["u-2"]!, admin = f.admin
        try await f.api.buildApplication().test(.router) { client in
            var r = try await client.send(.post, "/v1/picks", key: key, body: Doc.snapshot(user: "u-1"))
            let pickId = try #require(r.json["pick_id"]?.stringValue)
            r = try await client.send(.get, "/v1/users/u-1/export", key: key)
            #expect(r.status == .ok, "\(r.text)")
            #expect(r.json["format"]?.stringValue == "soundtrack-person" && r.json["user"]?.stringValue == "u-1")
            #expect(r.json["tables"]?["picks"]?[0]?["id"]?.stringValue == pickId, "the pick answered before is committed and exported")
            #expect(r.json["sha256"]?.stringValue?.count == 64)
            #expect(!r.text.contains("Confidential oncology appointment"), "no raw snapshot: keep_raw_snapshots is off")
            #expect(try await client.send(.get, "/v1/users/u-1/export", key: other).status == .forbidden)
            #expect(try await client.send(.get, "/v1/users/u-1/export", key: admin).status == .ok)
            #expect(try await client.send(.get, "/v1/users/nobody/export", key: admin).status == .notFound)
        }
    }
}
