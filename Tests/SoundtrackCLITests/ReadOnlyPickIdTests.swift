import Foundation
import SoundtrackContext
import SoundtrackTestSupport
import Testing

/// A read-only pick's id is never the id of a pick that learns (issue 45): feedback naming it is
/// refused instead of attaching to the person's next pick.
@Suite struct ReadOnlyPickIdTests {
    static func pickId(_ out: String) -> String? {
        guard case let .string(id)? = (try? JSONParser.parse(out))?["pick_id"] else { return nil }
        return id
    }

    @Test func theNextLearningPickDoesNotTakeTheReadOnlyPicksId() async throws {
        let (_, db) = try await CLI.smallDatabase()
        let snapshot = CLITests.library
        var r = try await CLI.run(["pick", "--read-only", "--db", db, "-"], stdin: snapshot)
        #expect(r.status == 0, "\(r.stderr)")
        let preview = try #require(Self.pickId(r.stdout))
        #expect(preview.wholeMatch(of: /p-[0-9a-f]{16}/) != nil)
        r = try await CLI.run(["pick", "--read-only", "--db", db, "-"], stdin: snapshot)
        #expect(Self.pickId(r.stdout) == preview, "the same read-only pick again: the same id")
        r = try await CLI.run(["pick", "--db", db, "-"], stdin: snapshot)
        #expect(r.status == 0, "\(r.stderr)")
        let learned = try #require(Self.pickId(r.stdout))
        #expect(learned != preview)

        // Feedback naming the read-only pick is refused; naming the learning pick applies.
        let track = "spotify:track:3e9HZxeyfWwjeyPAMmWSSQ"
        func event(_ id: String, pick: String) -> String {
            #"{"id": "\#(id)", "user": "u-1", "at": "2026-03-11T09:41:00+01:00", "track": "\#(track)", "signal": "skip", "pick_id": "\#(pick)"}"#
        }
        r = try await CLI.run(["feedback", "--db", db, "-"], stdin: event("e-1", pick: preview))
        #expect(r.status == 2)
        #expect(r.stderr.contains("pick_id"), "\(r.stderr)")
        r = try await CLI.run(["feedback", "--db", db, "-"], stdin: event("e-2", pick: learned))
        #expect(r.status == 0, "\(r.stderr)")
    }
}
