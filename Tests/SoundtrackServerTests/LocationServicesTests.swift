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

/// `location_services` off means no coordinates anywhere (issue 42, item 2): turning it off
/// deletes the person's places, and the coordinates of every later pick and event reach no table
/// and no log line, through the service and through `replay` and `batch`; the picks say so.
@Suite struct LocationServicesTests {
    /// Coordinates only the person sends once the setting is off (their digits are searched for).
    static let lat = "48.1371079", lon = "11.5753822"

    static func snapshot(user: String, minute: Int, lat: String = Self.lat, lon: String = Self.lon, speed: Double = 2.4, place: String? = nil) -> String {
        let label = place.map { #","place":"\#($0)""# } ?? ""
        return
            #"{"user":"\#(user)","at":"2026-03-16T08:\#(String(format: "%02d", minute)):00+01:00","location":{"lat":\#(lat),"lon":\#(lon),"accuracy_m":9,"speed_mps":\#(speed)\#(label)},"tags":{"m":"x"}}"#
    }

    /// Every row of every table as text (blobs in hex), one line a row.
    static func dump(_ db: Database) throws -> String {
        var out = ""
        for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") {
            for row in try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\"") {
                out += table + ": " + row.description + "\n"
            }
        }
        return out
    }

    /// The digits of the coordinates in a dump: as text, and as the REAL values a column would hold.
    static func coordinates(in dump: String) -> [String] {
        dump.split(separator: "\n").filter { $0.contains("48.1371") || $0.contains("11.5753") }.map { String($0.prefix(300)) }
    }

    @Test("Through the service: turning location services off deletes the places; later coordinates reach no table and no log")
    func service() async throws {
        let f = try Fixture(keepingSnapshots: ["u-1"])
        let store = f.service.store
        let track = try f.track
        try await f.api.buildApplication().test(.router) { client in
            let key = f.keys["u-1"]!
            // With the setting on, a place is learned.
            for m in 0..<3 {
                let r = try await client.send(.post, "/v1/picks", key: key, body: Self.snapshot(user: "u-1", minute: m, lat: "52.5186226", lon: "13.3932189", speed: 0))
                #expect(r.status == .ok && r.json["location"] == nil, "\(r.text)")
            }
            // A feedback event answers once committed, and commits keep their order: the picks' too.
            let first =
                #"{"id":"l-0","user":"u-1","at":"2026-03-16T08:05:00+01:00","track":"\#(track)","signal":"like","snapshot":"#
                + Self.snapshot(user: "u-1", minute: 4, lat: "52.5186226", lon: "13.3932189", speed: 0) + "}"
            #expect(try await client.send(.post, "/v1/feedback", key: key, body: first).status == .ok)
            #expect(try store.rowCounts(user: "u-1")["places"] ?? 0 > 0)

            #expect(!(try ForgetTests.markersOnDisk(f.path, markers: ["52.5186226"])).isEmpty, "the event's snapshot is kept (u-1 keeps them)")
            var r = try await client.send(.patch, "/v1/users/u-1/settings", key: key, body: #"{"location_services": false}"#)
            #expect(r.status == .ok && r.json["location_services"] == .bool(false))
            #expect(try store.rowCounts(user: "u-1")["places"] == 0)
            // The kept snapshots lose their coordinates, in the tables and in the log.
            #expect(try ForgetTests.markersOnDisk(f.path, markers: ["52.5186226", "13.3932189"]) == [])
            #expect(try store.user("u-1")?.feedback == 1)

            for m in 10..<14 {
                r = try await client.send(.post, "/v1/picks", key: key, body: Self.snapshot(user: "u-1", minute: m))
                #expect(r.status == .ok && r.json["location"]?.stringValue == "off", "\(r.text)")
                #expect(!r.text.contains("speed"), "\(r.text)")
                r = try await client.send(.post, "/v1/picks?learn=false", key: key, body: Self.snapshot(user: "u-1", minute: m))
                #expect(r.json["location"]?.stringValue == "off")
                let event =
                    #"{"id":"l-\#(m)","user":"u-1","at":"2026-03-16T08:\#(m):30+01:00","track":"\#(track)","signal":"like","snapshot":"#
                    + Self.snapshot(user: "u-1", minute: m, place: "office") + "}"
                r = try await client.send(.post, "/v1/feedback", key: key, body: event)
                #expect(r.status == .ok, "\(r.text)")
            }
            #expect(try store.rowCounts(user: "u-1")["places"] == 0)
        }
        // After the shutdown's checkpoint too: no table and no log line holds the coordinates.
        let dump = try await store.database.read { try Self.dump($0) }
        #expect(dump.contains("office"), "the place's label stays")
        #expect(Self.coordinates(in: dump) == [])
        #expect(!dump.contains("52.5186") && !dump.contains("13.3932"))
        #expect(Self.coordinates(in: f.logs.text) == [])
        #expect(try store.rowCounts(user: "u-1")["places"] == 0)
        #expect(try store.user("u-1")?.feedback == 5)
    }

    @Test("Through replay and batch: a person with location services off is learned and picked for without coordinates")
    func commands() async throws {
        let (dir, db) = try await CLI.smallDatabase(user: "u-1")
        // Not beside a service, replay or batch, which hold the settings in memory.
        let lock = try WriterLock(databasePath: db, holder: "serve")
        var r = try await CLI.run(["settings", "set", "u-1", "location_services", "off", "--db", db])
        #expect(r.status != 0 && r.stderr.contains("another replay, batch or service is writing this database"), "\(r.stderr)")
        lock.release()
        r = try await CLI.run(["settings", "set", "u-1", "location_services", "off", "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try await CLI.run(["settings", "set", "u-1", "keep_raw_snapshots", "on", "--db", db]).status == 0)
        let track = try #require(try Store(path: db, durable: false).allTracks().first?.id)
        let log = dir.appendingPathComponent("log.jsonl"), snapshots = dir.appendingPathComponent("snapshots.jsonl")
        try (0..<6).map { m in
            #"{"id":"r-\#(m)","user":"u-1","at":"2026-03-16T08:\#(String(format: "%02d", 20 + m)):30+01:00","track":"\#(track)","signal":"like","snapshot":"#
                + Self.snapshot(user: "u-1", minute: 20 + m) + "}"
        }.joined(separator: "\n").appending("\n").write(to: log, atomically: true, encoding: .utf8)
        try (0..<4).map { Self.snapshot(user: "u-1", minute: 40 + $0) }.joined(separator: "\n").appending("\n")
            .write(to: snapshots, atomically: true, encoding: .utf8)
        r = try await CLI.run(["replay", log.path, "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        r = try await CLI.run(["batch", snapshots.path, "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.split(separator: "\n").count == 4 && r.stdout.split(separator: "\n").allSatisfy { $0.hasSuffix(#","location":"off"}"#) })
        r = try await CLI.run(["batch", "--read-only", snapshots.path, "--db", db])
        #expect(r.stdout.split(separator: "\n").allSatisfy { $0.hasSuffix(#","location":"off"}"#) }, "\(r.stdout)")
        let dump = try await DatabaseQueue(path: db).read { try Self.dump($0) }
        #expect(try Store(path: db, durable: false).user("u-1")?.feedback == 6)
        #expect(Self.coordinates(in: dump) == [])
    }
}
