import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SoundtrackContext
import SoundtrackTestSupport
import Testing

@testable import SoundtrackServer
@testable import SoundtrackStore

/// A person's history (issue 42, item 5): their stored picks, newest first, each with the
/// feedback that named it, a page at a time; over HTTP and through the CLI.
@Suite struct HistoryTests {
    @Test("GET /v1/users/{id}/history: newest first with the feedback each pick got, paged by cursor; 403, 404 and 400s naming the parameter")
    func overHTTP() async throws {
        let f = try Fixture()
        let store = f.service.store
        try await f.api.buildApplication().test(.router) { client in
            let key = f.keys["u-1"]!
            var picks: [(id: String, track: String)] = []
            for minute in ["00", "10", "20"] {
                let r = try await client.send(.post, "/v1/picks", key: key, body: Doc.snapshot(user: "u-1", at: "2026-03-14T07:\(minute):00+01:00"))
                #expect(r.status == .ok, "\(r.text)")
                picks.append((r.json["pick_id"]?.stringValue ?? "", r.json["track"]?["id"]?.stringValue ?? ""))
            }
            let first = picks[0]
            let answer = Doc.event(id: "h-1", user: "u-1", track: first.track, signal: "dislike", pickId: first.id)
            #expect(try await client.send(.post, "/v1/feedback", key: key, body: answer).status == .ok)
            // Picks are committed in the background: wait until all three are stored.
            try await waitUntil { ((try? store.history(user: "u-1", limit: 10)) ?? []).count == 3 }

            var r = try await client.send(.get, "/v1/users/u-1/history", key: key)
            #expect(r.status == .ok, "\(r.text)")
            guard case .array(let entries)? = r.json["entries"] else { Issue.record("no entries: \(r.text)"); return }
            #expect(entries.map { $0["pick_id"]?.stringValue ?? "" } == picks.reversed().map(\.id))
            #expect(r.json["next_cursor"] == .null)
            let oldest = entries[2]
            #expect(oldest["at"] == .string("2026-03-14T06:00:00Z"), "\(oldest)")
            #expect(oldest["track"]?["id"]?.stringValue == first.track && oldest["track"]?["title"]?.stringValue != nil, "\(oldest)")
            #expect(oldest["bin"]?["number"] == .number(1) && oldest["bin"]?["label"]?.stringValue != nil, "\(oldest)")
            #expect(oldest["feedback"] == .array([.object([("signal", .string("dislike")), ("at", .string("2026-03-14T06:45:02Z"))])]), "\(oldest)")
            #expect(entries[0]["feedback"] == .array([]))

            // Two pages of two and one; `since` keeps the later picks.
            r = try await client.send(.get, "/v1/users/u-1/history?limit=2", key: key)
            let cursor = try #require(r.json["next_cursor"]?.stringValue, "\(r.text)")
            r = try await client.send(.get, "/v1/users/u-1/history?limit=2&cursor=\(cursor)", key: key)
            guard case .array(let last)? = r.json["entries"] else { Issue.record("no entries: \(r.text)"); return }
            #expect(last.map { $0["pick_id"]?.stringValue ?? "" } == [first.id] && r.json["next_cursor"] == .null, "\(r.text)")
            r = try await client.send(.get, "/v1/users/u-1/history?since=2026-03-14T06:05:00Z", key: f.admin)
            if case .array(let later)? = r.json["entries"] { #expect(later.count == 2, "\(r.text)") } else { Issue.record("\(r.text)") }

            // Another person's key, nobody, and bad parameters.
            #expect(try await client.send(.get, "/v1/users/u-1/history", key: f.keys["u-2"]).status == .forbidden)
            #expect(try await client.send(.get, "/v1/users/nobody/history", key: f.admin).errorCode == "unknown_user")
            let bad = [
                ("limit=0", "limit"), ("limit=501", "limit"), ("limit=ten", "limit"), ("since=yesterday", "since"), ("cursor=-1", "cursor"),
                ("colour=red", "colour")
            ]
            for (query, field) in bad {
                r = try await client.send(.get, "/v1/users/u-1/history?\(query)", key: key)
                #expect(r.status == .badRequest && r.errorField == field, "\(query): \(r.text)")
            }
        }
    }

    @Test("soundtrack history: a table or JSON lines, newest first, with --limit, --before and --since; bad values exit 2 naming the option")
    func throughTheCLI() async throws {
        let (dir, db) = try await CLI.smallDatabase(user: "u-1")
        var ids: [String] = []
        for (i, minute) in ["00", "10"].enumerated() {
            let file = dir.appendingPathComponent("s\(i).json")
            try Data(Doc.snapshot(user: "u-1", at: "2026-03-14T07:\(minute):00+01:00").utf8).write(to: file)
            let r = try await CLI.run(["pick", "--db", db, file.path])
            #expect(r.status == 0, "\(r.stderr)")
            ids.append(try JSONParser.parse(r.stdout)["pick_id"]?.stringValue ?? "")
        }
        var r = try await CLI.run(["history", "u-1", "--json", "--db", db])
        let lines = r.stdout.split(separator: "\n").map { (try? JSONParser.parse(String($0))) ?? .null }
        #expect(r.status == 0 && lines.map { $0["pick_id"]?.stringValue ?? "" } == ids.reversed(), "\(r.stdout)\(r.stderr)")
        #expect(lines.map { $0["seq"] } == [.number(1), .number(0)], "\(r.stdout)")
        r = try await CLI.run(["history", "u-1", "--before", "1", "--db", db])
        #expect(r.status == 0 && r.stdout.hasPrefix("0  2026-03-14T06:00:00Z  #1 ") && r.stdout.hasSuffix("no feedback\n"), "\(r.stdout)")
        r = try await CLI.run(["history", "u-1", "--since", "2026-03-14T06:05:00Z", "--db", db])
        #expect(r.stdout.split(separator: "\n").count == 1, "\(r.stdout)")
        r = try await CLI.run(["history", "u-1", "--limit", "0", "--db", db])
        #expect(r.status == 2 && r.stderr.contains("--limit: expected 1...500, got 0"), "\(r.stderr)")
        r = try await CLI.run(["history", "u-1", "--since", "tuesday", "--db", db])
        #expect(r.status == 2 && r.stderr.contains("--since: expected an RFC 3339 time"), "\(r.stderr)")
        r = try await CLI.run(["history", "nobody", "--db", db])
        #expect(r.status == 2 && r.stderr.contains("nobody"), "\(r.stderr)")
    }
}
