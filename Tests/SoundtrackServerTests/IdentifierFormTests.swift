import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SoundtrackContext
import SoundtrackEngine
import SoundtrackTestSupport
import Testing

@testable import SoundtrackServer
@testable import SoundtrackStore

/// Ids that are the same text in different Unicode forms are one id (NFC): one user, one account,
/// one cache entry, whichever form a request or a command uses (issue 41, finding 1).
@Suite struct IdentifierFormTests {
    /// Pairs of canonically equivalent ids whose bytes differ: composed and decomposed letters,
    /// and singletons (the Ångström and Kelvin signs) that normalise to other letters.
    static let pairs: [(String, String)] = {
        var out = [("caf\u{E9}", "cafe\u{301}"), ("\u{C5}sa", "\u{212B}sa"), ("\u{212A}arl", "Karl")]
        // Generated: a base letter with one or two combining marks, against its composed form.
        var rng = SeededGenerator(seed: 41, user: "nfc", counter: 0)
        let bases = Array("aeiouncyAEIOUNCY"), marks: [Character] = ["\u{300}", "\u{301}", "\u{302}", "\u{303}", "\u{308}", "\u{327}"]
        while out.count < 24 {
            let base = bases[Int(rng.next() % UInt64(bases.count))], mark = marks[Int(rng.next() % UInt64(marks.count))]
            let decomposed = "id-" + String(base) + String(mark) + "-\(out.count)"
            let composed = decomposed.precomposedStringWithCanonicalMapping
            if Array(composed.utf8) != Array(decomposed.utf8) { out.append((composed, decomposed)) }
        }
        return out
    }()

    static func path(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? id
    }

    @Test("Over HTTP: the second form of an id is the same user (409 on creation); its key reaches it in either form, another user's key neither")
    func httpFormsAreOneUser() async throws {
        let f = try Fixture(users: ["other"])
        try await f.api.buildApplication().test(.router) { client in
            for (a, b) in Self.pairs {
                var r = try await client.send(.post, "/v1/users", key: f.admin, body: JSONValue.object([("id", .string(b))]).serialized())
                #expect(r.status == .created, "\(r.text)")
                r = try await client.send(.post, "/v1/users", key: f.admin, body: JSONValue.object([("id", .string(a))]).serialized())
                #expect(r.status == .conflict, "\(a.unicodeScalars.map { String($0.value, radix: 16) }): \(r.text)")
                var rng = SystemRandomNumberGenerator()
                let (secret, record) = APIKeys.generate(role: .user, user: Identifier.normalized(b), label: nil, at: Date(), using: &rng)
                try f.service.store.insertKey(record)
                for form in [a, b] {
                    let mine = try await client.send(.get, "/v1/users/\(Self.path(form))/bins", key: secret)
                    #expect(mine.status == .ok, "\(mine.text)")
                    let theirs = try await client.send(.get, "/v1/users/\(Self.path(form))/bins", key: f.keys["other"])
                    #expect(theirs.status == .forbidden)
                }
                // Feedback sent in the other form lands on the one account.
                let event =
                    #"{"id": "e-\#(a)", "user": "\#(a)", "at": "2026-03-14T07:45:02+01:00", "track": "\#(try f.track)", "signal": "like", "snapshot": {"user": "\#(a)", "at": "2026-03-14T07:45:00+01:00", "tags": {"m": "x"}}}"#
                r = try await client.send(.post, "/v1/feedback", key: secret, body: event)
                #expect(r.status == .ok, "\(r.text)")
            }
        }
        // One row a pair, in NFC, and every event under it.
        let users = try f.service.store.users().map(\.id)
        for (a, b) in Self.pairs {
            let nfc = Identifier.normalized(a)
            #expect(users.filter { $0 == nfc }.count == 1)
            #expect(users.allSatisfy { Array($0.utf8) != Array(b.utf8) || Array(b.utf8) == Array(nfc.utf8) })
            #expect(try f.service.store.rowCounts(user: nfc)["feedback"] == 1)
        }
    }

    @Test("Through the CLI: users add in the other form is refused as the same user; the id is stored in NFC")
    func cliFormsAreOneUser() async throws {
        let (_, db) = try await CLI.smallDatabase(user: "u-0")
        for (a, b) in Self.pairs.prefix(6) {
            let first = try await CLI.run(["users", "add", b, "--db", db])
            #expect(first.status == 0, "\(first.stderr)")
            let second = try await CLI.run(["users", "add", a, "--db", db])
            #expect(second.status == 2 && second.stderr.contains("exists"), "\(second.stderr)")
            let shown = try await CLI.run(["users", "show", a, "--db", db])
            #expect(shown.status == 0)
            #expect(Array((try JSONParser.parse(shown.stdout)["id"]?.stringValue ?? "").utf8) == Array(Identifier.normalized(b).utf8))
        }
    }
}
