import Foundation
import SoundtrackContext
import SoundtrackTestSupport
import Testing

@testable import SoundtrackStore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A snapshot of a person who does not keep raw snapshots (`keep_raw_snapshots` off, the default)
/// reaches no file of the database, not even for the moment between the acknowledgement and the
/// service's next checkpoint (issue 41, finding 2); one of a person who keeps them does.
@Suite(.serialized) struct RawSnapshotTests {
    /// The service is killed (SIGKILL) right after it acknowledged events with snapshots of two
    /// people; the files are searched for the strings each person sent.
    @Test(.timeLimit(.minutes(2))) func aSnapshotNotKeptNeverReachesTheFiles() async throws {
        let dir = Repo.tempDir()
        let db = dir.appendingPathComponent("r.sqlite").path
        let keeper = "keeps-snapshots"
        let key = try await ForgetTests.database(db, user: keeper)
        var r = try await GracefulShutdownTests.cli(["users", "add", "private", "--db", db])
        #expect(r.status == 0, "\(r.err)")
        r = try await GracefulShutdownTests.cli(["keys", "create", "--user", "private", "--db", db])
        let privateKey = try #require(r.out.split(separator: "\n").first.map(String.init))
        let track = try #require(try Store(path: db, durable: false).allTracks().first?.id)

        let (p, _, _, port) = try GracefulShutdownTests.startServe(["--db", db, "--port", "0", "--rate", "100000", "--view-checkpoint-ms", "600000"])
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        let session = URLSession(configuration: .ephemeral)
        for i in 0..<3 {
            let mine = ForgetTests.event(id: "p-\(i)", user: "private", track: track)
            #expect(try await ForgetTests.send(session, port: port, "POST", "/v1/feedback", key: privateKey, body: mine) == 200)
        }
        // The person who keeps snapshots: the same strings, marked as theirs.
        let theirs = ForgetTests.event(id: "k-0", user: keeper, track: track).replacingOccurrences(of: "4711", with: "0815")
            .replacingOccurrences(of: "52.5186226333", with: "48.1371079000")
        #expect(try await ForgetTests.send(session, port: port, "POST", "/v1/feedback", key: key, body: theirs) == 200)
        kill(p.processIdentifier, SIGKILL)
        await offPool { [p] in p.waitUntilExit() }

        // Not the tag: tags are learned as the person's vocabulary (`users.tag_names`), as places
        // are learned as centres; what is raw is the device, the calendar title, the coordinates.
        let found = try ForgetTests.markersOnDisk(db, markers: Array(ForgetTests.markers.dropFirst()))
        #expect(found == [], "\(found)")
        let kept = try ForgetTests.markersOnDisk(db, markers: ["zqdevicemarker0815", "zqtitlemarker0815", "48.1371079000"])
        #expect(!kept.isEmpty)
        // Nothing acknowledged was lost: the rows and the state they changed.
        let store = try Store(path: db, durable: false)
        #expect(try store.user("private")?.feedback == 3)
        #expect(try store.usersBehind()["private"] == nil)
        #expect(try store.check().isEmpty)
    }
}
