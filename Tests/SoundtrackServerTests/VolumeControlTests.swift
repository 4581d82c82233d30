import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SoundtrackContext
import SoundtrackTestSupport
import Testing

@testable import SoundtrackServer

/// A pick carries a suggested volume only while the person's `volume_control` is on (issue 43,
/// item 2; docs/scoring.md, "Volume"): through the CLI, `batch` and the service alike.
@Suite struct VolumeControlTests {
    static func snapshot(user: String, minute: Int, volume: Double = 0.6) -> String {
        #"{"user":"\#(user)","at":"2026-03-16T18:\#(String(format: "%02d", minute)):00+01:00","motion":{"activity":"running"},"audio":{"route":"headphones","volume":\#(volume)},"tags":{"place":"gym"}}"#
    }

    /// The `volume` member of a pick's JSON (`nil`: none).
    static func volume(_ text: Substring) throws -> Double? {
        guard case .number(let v)? = try JSONParser.parse(Data(text.utf8))["volume"] else { return nil }
        return v
    }

    @Test("pick and batch: no volume by default; with volume_control on, a volume in 0…1 on every pick")
    func commands() async throws {
        let (dir, db) = try await CLI.smallDatabase(user: "u-1")
        let file = dir.appendingPathComponent("s.json")
        try Self.snapshot(user: "u-1", minute: 0).write(to: file, atomically: true, encoding: .utf8)
        var r = try await CLI.run(["pick", "--db", db, file.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.volume(Substring(r.stdout)) == nil)
        #expect(try await CLI.run(["settings", "set", "u-1", "volume_control", "on", "--db", db]).status == 0)
        r = try await CLI.run(["pick", "--read-only", "--db", db, file.path])
        let v = try #require(try Self.volume(Substring(r.stdout)), "\(r.stdout)")
        #expect((0...1).contains(v))
        let many = dir.appendingPathComponent("many.jsonl")
        try (1...3).map { Self.snapshot(user: "u-1", minute: $0) }.joined(separator: "\n").appending("\n")
            .write(to: many, atomically: true, encoding: .utf8)
        r = try await CLI.run(["batch", many.path, "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        for line in lines { #expect(try Self.volume(line) != nil, "\(line)") }
        // Off again: none.
        #expect(try await CLI.run(["settings", "set", "u-1", "volume_control", "off", "--db", db]).status == 0)
        r = try await CLI.run(["pick", "--read-only", "--db", db, file.path])
        #expect(try Self.volume(Substring(r.stdout)) == nil)
    }

    @Test("POST /v1/picks: a volume only after PATCH volume_control true")
    func service() async throws {
        let f = try Fixture()
        try await f.api.buildApplication().test(.router) { client in
            let key = f.keys["u-1"]!
            var r = try await client.send(.post, "/v1/picks", key: key, body: Self.snapshot(user: "u-1", minute: 0))
            #expect(r.status == .ok && r.json["volume"] == nil, "\(r.text)")
            r = try await client.send(.patch, "/v1/users/u-1/settings", key: key, body: #"{"volume_control": true}"#)
            #expect(r.status == .ok, "\(r.text)")
            r = try await client.send(.post, "/v1/picks", key: key, body: Self.snapshot(user: "u-1", minute: 3))
            guard case .number(let v)? = r.json["volume"] else {
                Issue.record("no volume: \(r.text)")
                return
            }
            #expect((0...1).contains(v))
        }
    }
}
