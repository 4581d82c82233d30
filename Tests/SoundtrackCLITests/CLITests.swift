import Foundation
import SoundtrackContext
import SoundtrackStore
import SoundtrackTestSupport
import Testing

@Suite("The soundtrack CLI", .serialized)
struct CLITests {
    static let library = """
        {"user": "u-1", "at": "2026-03-11T09:40:00+01:00",
         "location": {"lat": 52.5186, "lon": 13.3932, "speed_mps": 0, "place": "library"},
         "calendar": {"events": [{"title": "Study group – algorithms", "start": "2026-03-11T09:30:00+01:00", "end": "2026-03-11T11:00:00+01:00"}]},
         "bluetooth": {"devices": [{"name": "WH-1000XM4", "kind": "headphones"}]},
         "motion": {"activity": "stationary", "steps_per_min": 0, "heart_rate_bpm": 64},
         "audio": {"route": "headphones", "volume": 0.4}}
        """

    @Test("The executable copied alone to an empty directory creates a database with the catalog built into it, adds a user and picks")
    func copiedAlone() throws {
        let dir = Scratch.directory("st-alone")
        defer { try? FileManager.default.removeItem(at: dir) }
        let exe = dir.appendingPathComponent("soundtrack")
        try FileManager.default.copyItem(at: CLI.executable, to: exe)
        func run(_ args: [String], stdin: String? = nil) throws -> (status: Int32, out: String, err: String) {
            // Standard input a pipe, closed after `stdin` (at once without it).
            let r = try CLI.start(exe, args, stdin: stdin ?? "", cwd: dir).finish()
            return (r.status, r.stdout, r.stderr)
        }
        let added = try run(["users", "add", "u-1", "--db", "new.sqlite"])
        #expect(added.status == 0, "\(added.err)")
        #expect(added.err.contains("loaded 20405 tracks from the catalog built into the executable"), "\(added.err)")
        let pick = try run(["pick", "--db", "new.sqlite", "-"], stdin: Self.library)
        #expect(pick.status == 0, "\(pick.err)")
        #expect(try JSONParser.parse(pick.out)["track"]?["id"] != nil, "\(pick.out)")
    }

    @Test("keys revoke accepts the whole key and never prints its secret back")
    func revokeByWholeKey() async throws {
        let (_, db) = try await CLI.smallDatabase()
        #expect(try await CLI.run(["users", "add", "k-1", "--db", db]).status == 0)
        let created = try await CLI.run(["keys", "create", "--user", "k-1", "--db", db])
        #expect(created.status == 0, "\(created.stderr)")
        let key = try #require(created.stdout.split(whereSeparator: { $0 == "\t" || $0 == "\n" || $0 == " " }).map(String.init).first { $0.hasPrefix("stk_") })
        let secret = String(key.split(separator: "_")[2])
        let revoked = try await CLI.run(["keys", "revoke", key, "--db", db])
        #expect(revoked.status == 0, "\(revoked.stderr)")
        #expect(!revoked.stdout.contains(secret) && !revoked.stderr.contains(secret))
        // Again: no longer active, still no secret in the error.
        let again = try await CLI.run(["keys", "revoke", key, "--db", db])
        #expect(again.status == 2)
        #expect(!again.stdout.contains(secret) && !again.stderr.contains(secret), "\(again.stderr)")
    }

    @Test("--explore 0 makes the played track the first of the ranked list; out of range is a usage error")
    func exploreZero() async throws {
        let (_, db) = try await CLI.smallDatabase()
        for k in 0..<6 {
            let snapshot = Self.library.replacingOccurrences(of: "09:40:00", with: "09:4\(k):00")
            let r = try await CLI.run(["pick", "--db", db, "--explore", "0", "--top", "5", "-"], stdin: snapshot)
            #expect(r.status == 0, "\(r.stderr)")
            let pick = try JSONParser.parse(r.stdout)
            guard case let .array(ranked)? = pick["ranked"] else {
                Issue.record("no ranked list in \(r.stdout)")
                return
            }
            #expect(pick["track"]?["id"] == ranked.first?["id"], "\(r.stdout)")
        }
        #expect(try await CLI.run(["pick", "--db", db, "--explore", "1.5", "-"], stdin: Self.library).status == 2)
    }

    @Test("pick reads stdin and prints a pick; --top ranks K tracks")
    func pick() async throws {
        let (_, db) = try await CLI.smallDatabase()
        let r = try await CLI.run(["pick", "--db", db, "-"], stdin: Self.library)
        #expect(r.status == 0, "\(r.stderr)")
        let pick = try JSONParser.parse(r.stdout)
        guard case let .string(id)? = pick["pick_id"], case let .string(bin)? = pick["bin"]?["id"] else {
            Issue.record("no pick_id or bin in \(r.stdout)")
            return
        }
        #expect(id.hasPrefix("p-"))
        #expect(bin == "b-1")
        #expect(pick["bin"]?["created"] == .bool(true))
        let top = try await CLI.run(["pick", "--db", db, "--top", "5", "-"], stdin: Self.library)
        guard case let .array(ranked)? = try JSONParser.parse(top.stdout)["ranked"] else {
            Issue.record("no ranked list in \(top.stdout)")
            return
        }
        #expect(ranked.count == 5)
    }

    @Test(
        "bad input exits 2 and names the field",
        arguments: [
            (#"{"user": "u-1", "at": "2026-03-11T09:40:00+01:00", "weather": {"cloud_pct": 140}}"#, "weather.cloud_pct: expected a number in 0...100, got 140"),
            (#"{"user": "u-1"}"#, "at: expected"),
            (#"{"user": "u-9", "at": "2026-03-11T09:40:00+01:00"}"#, "user: expected a known user"),
            (#"{"user": "u-1", "at": "#, "line 1")
        ])
    func badInput(input: String, message: String) async throws {
        let (_, db) = try await CLI.smallDatabase()
        let r = try await CLI.run(["pick", "--db", db, "-"], stdin: input)
        #expect(r.status == 2)
        #expect(r.stderr.contains(message), "stderr was: \(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    @Test("usage errors exit 2")
    func usage() async throws {
        #expect(try await CLI.run(["pick", "--top", "0", "-"]).status == 2)
        #expect(try await CLI.run(["no-such-command"]).status == 2)
        #expect(try await CLI.run(["--help"]).status == 0)
        // The engine's options are declared where they act (issue 45): a command that only reads
        // or changes what is stored refuses them instead of ignoring them.
        let (_, db) = try await CLI.smallDatabase()
        for args in [["bins", "--user", "u-1"], ["users", "list"], ["keys", "list"], ["history", "u-1"], ["settings", "show", "u-1"]] {
            for option in [["--seed", "7"], ["--models", "Models"], ["--explore", "0"]] {
                let r = try await CLI.run(args + option + ["--db", db])
                #expect(r.status == 2 && r.stderr.contains("Unknown option"), "\(args + option): \(r.stderr)")
            }
        }
        let r = try await CLI.run(["pick", "--seed", "7", "--explore", "0", "--models", CLI.root.appendingPathComponent("Models").path, "--db", db, "-"], stdin: Self.library)
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test("feedback is idempotent by event id, and a bad line does not stop the others")
    func feedbackIdempotent() async throws {
        let (_, db) = try await CLI.smallDatabase()
        let pick = try JSONParser.parse(try await CLI.run(["pick", "--db", db, "-"], stdin: Self.library).stdout)
        guard case let .string(pickId)? = pick["pick_id"], case let .string(track)? = pick["track"]?["id"] else {
            Issue.record("bad pick")
            return
        }
        let event = #"{"id": "ev-1", "user": "u-1", "at": "2026-03-11T09:44:00+01:00", "track": "\#(track)", "signal": "like", "pick_id": "\#(pickId)"}"#
        let first = try await CLI.run(["feedback", "--db", db, "-"], stdin: event)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains(#""status":"applied""#))
        let binsBefore = try await CLI.run(["bins", "--db", db, "--user", "u-1", "--json"]).stdout
        let second = try await CLI.run(["feedback", "--db", db, "-"], stdin: event)
        #expect(second.status == 0)
        #expect(second.stdout.contains(#""status":"duplicate""#))
        #expect(try await CLI.run(["bins", "--db", db, "--user", "u-1", "--json"]).stdout == binsBefore)

        let lines = [
            event,
            #"{"id": "ev-2", "user": "u-1", "at": "2026-03-11T09:48:00+01:00", "track": "\#(track)", "signal": "meh", "pick_id": "\#(pickId)"}"#,
            #"{"id": "ev-3", "user": "u-1", "at": "2026-03-11T09:49:00+01:00", "track": "\#(track)", "signal": "complete", "pick_id": "\#(pickId)"}"#
        ].joined(separator: "\n")
        let batch = try await CLI.run(["feedback", "--db", db, "-"], stdin: lines)
        #expect(batch.status == 2)
        #expect(batch.stderr.contains("line 2: signal: expected one of"), "\(batch.stderr)")
        #expect(batch.stderr.contains("1 applied, 1 duplicates skipped, 1 rejected"), "\(batch.stderr)")
    }

    @Test("users add, list, show and forget; forget leaves no row behind")
    func users() async throws {
        let (_, db) = try await CLI.smallDatabase()
        _ = try await CLI.run(["pick", "--db", db, "-"], stdin: Self.library)
        let show = try await CLI.run(["users", "show", "u-1", "--db", db])
        #expect(show.status == 0)
        #expect(!show.stdout.contains("Ana@Example.org"))
        // A keyed hash under the key file created beside the database (mode 0600), not the plain SHA-256.
        let shown = try JSONParser.parse(show.stdout)
        let keyFile = db + ".email-key"
        let mode = try FileManager.default.attributesOfItem(atPath: keyFile)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        let key = try EmailKey.read(file: keyFile)
        #expect(shown["email_hash"] == .string(key.hash("ana@example.org")))
        #expect(shown["email_hash_scheme"] == .string("hmac-sha256"))
        #expect(shown["email_sha256"] == .null)
        // set-email replaces the hash.
        #expect(try await CLI.run(["users", "set-email", "u-1", "--email", "bo@example.org", "--db", db]).status == 0)
        let reshown = try JSONParser.parse(try await CLI.run(["users", "show", "u-1", "--db", db]).stdout)
        #expect(reshown["email_hash"] == .string(key.hash("bo@example.org")))
        #expect(try await CLI.run(["users", "set-email", "nobody", "--email", "bo@example.org", "--db", db]).status == 2)
        // Another key is refused on this database (its fingerprint is not the recorded one): the hash is unchanged.
        let otherKey = db + ".other-key"
        try (String(repeating: "5a", count: 32) + "\n").write(toFile: otherKey, atomically: true, encoding: .utf8)
        let refused = try await CLI.run(["users", "set-email", "u-1", "--email", "bo@example.org", "--email-key-file", otherKey, "--db", db])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("is not the key this database's email hashes were made with"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("5a5a"), "the key is not printed")
        #expect(try JSONParser.parse(try await CLI.run(["users", "show", "u-1", "--db", db]).stdout)["email_hash"] == reshown["email_hash"])
        // On a database of its own (a user without an email yet), --email-key-file makes the hash under that key.
        let other = CLI.tempDir().appendingPathComponent("other.sqlite").path
        #expect(try await CLI.run(["users", "add", "u-1", "--db", other]).status == 0)
        let set = try await CLI.run(["users", "set-email", "u-1", "--email", "bo@example.org", "--email-key-file", otherKey, "--db", other])
        #expect(set.status == 0, "\(set.stderr)")
        let rekeyed = try JSONParser.parse(try await CLI.run(["users", "show", "u-1", "--email-key-file", otherKey, "--db", other]).stdout)
        #expect(rekeyed["email_hash"] == .string(try EmailKey.read(file: otherKey).hash("bo@example.org")))
        #expect(rekeyed["email_hash"] != reshown["email_hash"])
        // The configuration file's database.email_key_file, when no option or variable names one.
        let third = CLI.tempDir().appendingPathComponent("third.sqlite").path
        #expect(try await CLI.run(["users", "add", "u-1", "--db", third]).status == 0)
        let thirdKey = third + ".third-key", config = third + ".config.json"
        try (String(repeating: "7c", count: 32) + "\n").write(toFile: thirdKey, atomically: true, encoding: .utf8)
        try #"{"database":{"email_key_file":"\#(thirdKey)"}}"#.write(toFile: config, atomically: true, encoding: .utf8)
        #expect(try await CLI.run(["users", "set-email", "u-1", "--email", "bo@example.org", "--config", config, "--db", third]).status == 0)
        let configured = try JSONParser.parse(try await CLI.run(["users", "show", "u-1", "--db", third]).stdout)
        #expect(configured["email_hash"] == .string(try EmailKey.read(file: thirdKey).hash("bo@example.org")))
        #expect(try await CLI.run(["users", "add", "u-1", "--db", db]).status == 2)
        #expect(try await CLI.run(["users", "add", "u-2", "--age", "7", "--db", db]).status == 2)
        #expect(try await CLI.run(["users", "list", "--db", db]).stdout.contains("u-1"))
        #expect(try await CLI.run(["users", "forget", "u-1", "--db", db]).status == 0)
        #expect(try await CLI.run(["users", "show", "u-1", "--db", db]).status == 2)
        #expect(try await CLI.run(["users", "forget", "u-1", "--db", db]).status == 2)
    }

    @Test("catalog similar lists k other tracks, best first; an unknown track is bad input")
    func catalogSimilar() async throws {
        let (_, db) = try await CLI.smallDatabase()
        let csv = try String(contentsOf: CLI.root.appendingPathComponent("datasets/catalog-small.csv"), encoding: .utf8)
        let first = String(csv.split(separator: "\n")[1].prefix { $0 != "," })
        let r = try await CLI.run(["catalog", "similar", first, "-k", "7", "--json", "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        guard case let .array(hits) = try JSONParser.parse(r.stdout) else {
            Issue.record("not an array: \(r.stdout)")
            return
        }
        #expect(hits.count == 7)
        let ids = hits.compactMap { if case let .string(id)? = $0["track"] { return id } else { return nil } }
        #expect(!ids.contains(first))
        let scores = hits.compactMap { if case let .number(x)? = $0["score"] { return x } else { return nil } }
        #expect(scores == scores.sorted(by: >))
        let bad = try await CLI.run(["catalog", "similar", "no-such-track", "--db", db])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("track: expected a track id of the catalog, got 'no-such-track'"))
    }

    @Test("catalog import reports bad rows with their line numbers and keeps the good ones")
    func catalogImport() async throws {
        let dir = CLI.tempDir()
        let db = dir.appendingPathComponent("c.sqlite").path
        let csv = dir.appendingPathComponent("c.csv")
        try """
        track_id,title,artist,energy,tempo
        t-1,One,A,0.5,120
        t-2,Two,B,1.7,120
        t-3,Three,C,0.2,80
        """.write(to: csv, atomically: true, encoding: .utf8)
        let r = try await CLI.run(["catalog", "import", csv.path, "--db", db])
        #expect(r.status == 2)
        #expect(r.stderr.contains("line 3"), "\(r.stderr)")
        #expect(r.stderr.contains("energy"), "\(r.stderr)")
        #expect(r.stdout.contains("imported 2 tracks"), "\(r.stdout)")
    }

    @Test("onboard creates the user and a bin from one song; a bad song or user is bad input and leaves no user behind")
    func onboard() async throws {
        let (_, db) = try await CLI.smallDatabase()
        let csv = try String(contentsOf: CLI.root.appendingPathComponent("datasets/catalog-small.csv"), encoding: .utf8)
        let song = String(csv.split(separator: "\n")[10].prefix { $0 != "," })
        let snap = Self.library.replacingOccurrences(of: "\"u-1\"", with: "\"new-1\"")
        let bad = try await CLI.run(["onboard", "--db", db, "--user", "new-1", "--song", "no-such-song", "--snapshot", "-"], stdin: snap)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("song: expected a track id of the catalog, got 'no-such-song'"), "\(bad.stderr)")
        // A failed onboarding of a new user leaves no user behind (created in its transaction).
        #expect(try await CLI.run(["users", "show", "new-1", "--db", db]).status == 2)
        let other = try await CLI.run(["onboard", "--db", db, "--user", "someone-else", "--song", song, "--snapshot", "-"], stdin: snap)
        #expect(other.status == 2)
        #expect(other.stderr.contains("user: expected the user of --user"), "\(other.stderr)")
        #expect(try await CLI.run(["users", "show", "someone-else", "--db", db]).status == 2)

        let r = try await CLI.run(["onboard", "--db", db, "--user", "new-1", "--song", song, "--snapshot", "-"], stdin: snap)
        #expect(r.status == 0, "\(r.stderr)")
        let pick = try JSONParser.parse(r.stdout)
        #expect(pick["track"]?["id"] == .string(song))
        #expect(pick["bin"]?["created"] == .bool(true))
        let bins = try await CLI.run(["bins", "--db", db, "--user", "new-1", "--json"])
        #expect(bins.status == 0, "\(bins.stderr)")
        #expect(bins.stdout.contains(song))
    }
}

/// `pick --group` (issue 43, item 1): a pick for people listening together, and its bad input.
@Suite("pick --group")
struct GroupPickCLITests {
    @Test("two members get one track ranked from both; a group of one, a member twice and an unknown member are refused naming `members`")
    func groupPick() async throws {
        let (_, db) = try await CLI.smallDatabase(user: "ana")
        var r = try await CLI.run(["users", "add", "ben", "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        let gym = CLI.root.appendingPathComponent("datasets/examples/gym.json").path
        r = try await CLI.run(["pick", "--db", db, "--group", "ana,ben", "--top", "3", gym])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(json["members"] as? [String] == ["ana", "ben"])
        #expect((json["ranked"] as? [Any])?.count == 3)
        #expect(json["aggregation"] as? String == "multiplicative")
        // Nothing learned: neither member has a pick afterwards.
        r = try await CLI.run(["users", "list", "--db", db])
        let rows = r.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(rows.filter { ["ana", "ben"].contains($0.first) }.map { Array($0.dropFirst()) } == [["0", "0", "0"], ["0", "0", "0"]])
        for (group, message) in [
            ("ana", "members: expected two or more members, got one member"),
            ("ana,ana", "members: expected each member once, got 'ana' twice"),
            ("ana,zed", "members: expected known users as members, got 'zed' (an unknown user)")
        ] {
            r = try await CLI.run(["pick", "--db", db, "--group", group, gym])
            #expect(r.status == 2)
            #expect(r.stderr.contains(message), "\(r.stderr)")
        }
    }
}
