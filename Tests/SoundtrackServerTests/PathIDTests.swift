import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SoundtrackContext
import SoundtrackEngine
import SoundtrackServer
import Testing

/// Ids in URL paths are percent-decoded: every id `POST /v1/users` accepts is reachable and
/// deletable through the API (issue 21, finding 2).
@Suite struct PathIDTests {
    /// RFC 3986's unreserved characters but `.`, left as they are; everything else is escaped
    /// (`.` too, so that `.` and `..` are never dot segments).
    static let unescaped = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_~")

    static func path(_ id: String) -> String { id.addingPercentEncoding(withAllowedCharacters: unescaped)! }

    /// Random ids: ASCII, punctuation that means something in a URL, dots, and non-ASCII (accents,
    /// CJK, emoji, a combining mark), 1 to 40 characters, no control characters.
    static func randomIDs(count: Int, seed: UInt64) -> [String] {
        let pieces: [String] = [
            "a", "Z", "7", " ", "/", "%", "?", "#", "'", "\"", ".", "..", "+", "&", "=", ";", ":", "@", "é", "ß", "日本", "😀",
            "e\u{301}", "ü", "%2F", "%zz", "\\", "{", "}"
        ]
        var rng = SeededGenerator(seed: seed, user: "path-ids", counter: 0)
        var out: [String] = [".", "..", "a b", "a/b", "%2e%2e", "x%20y", "o'neil", "ünïcödé"]
        while out.count < count {
            var s = ""
            for _ in 0..<(1 + Int(rng.next() % 12)) { s += pieces[Int(rng.next() % UInt64(pieces.count))] }
            if s.count <= 40, !out.contains(s) { out.append(s) }
        }
        return out
    }

    @Test("Every id that POST /v1/users accepts answers GET …/bins and DELETE through its percent-encoded path")
    func everyCreatedIDIsReachable() async throws {
        let f = try Fixture(users: [])
        let ids = Self.randomIDs(count: 60, seed: 21)
        try await f.api.buildApplication().test(.router) { client in
            for id in ids {
                let body = JSONValue.object([("id", .string(id))]).serialized()
                let created = try await client.send(.post, "/v1/users", key: f.admin, body: body)
                #expect(created.status == .created, "\(id): \(created.text)")
                #expect(created.json["id"]?.stringValue == id)
                let path = "/v1/users/\(Self.path(id))"
                let bins = try await client.send(.get, "\(path)/bins", key: f.admin)
                #expect(bins.status == .ok, "\(id) → \(path): \(bins.text)")
                let deleted = try await client.send(.delete, path, key: f.admin)
                #expect(deleted.status == .noContent, "\(id) → \(path): \(deleted.text)")
                let gone = try await client.send(.get, "\(path)/bins", key: f.admin)
                #expect(gone.status == .notFound, "\(id): \(gone.text)")
            }
            // Only the decoded id counts: a user literally named `%2e%2e` is not `..`.
            #expect(try await client.send(.post, "/v1/users", key: f.admin, body: #"{"id": "%2e%2e"}"#).status == .created)
            #expect(try await client.send(.delete, "/v1/users/%2E%2E", key: f.admin).status == .notFound)
            #expect(try await client.send(.delete, "/v1/users/%252e%252e", key: f.admin).status == .noContent)
        }
    }

    @Test("A path id that is not percent-encoded UTF-8, or not an id once decoded, is a 400 naming id")
    func malformedPathIDs() async throws {
        let f = try Fixture()
        try await f.api.buildApplication().test(.router) { client in
            for bad in ["%zz", "%ff", "%C3", "a%00b", String(repeating: "x", count: 129)] {
                let r = try await client.send(.get, "/v1/users/\(bad)/bins", key: f.admin)
                #expect(r.status == .badRequest, "\(bad): \(r.text)")
                #expect(r.errorField == "id", "\(bad): \(r.text)")
            }
        }
    }
}
