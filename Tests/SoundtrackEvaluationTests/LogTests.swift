import Foundation
import SoundtrackContext
import Testing

@testable import SoundtrackEvaluation

@Suite("Reading labelled logs: bad input")
struct LogTests {
    func lines(_ events: [FeedbackEvent]) -> [String] { events.map { $0.json().serialized() } }
    var track: String { Repo.smallCatalog.tracks[0].id }

    func parse(_ lines: [String]) throws(InputError) -> LabelledLog {
        try LabelledLog.parse(Data(lines.joined(separator: "\n").utf8), catalog: Repo.smallCatalog)
    }

    @Test func readsAGoodLogWithBlankLines() throws {
        var l = lines([handEvent("e1", user: "u", hour: 1, track: track, .like), handEvent("e2", user: "u", hour: 2, track: track, .skip)])
        l.insert("", at: 1)
        let log = try parse(l)
        #expect(log.entries.map(\.line) == [1, 3])
        #expect(log.users == ["u"])
    }

    @Test func malformedLineNamesTheLineAndField() {
        var l = lines([handEvent("e1", user: "u", hour: 1, track: track, .like), handEvent("e2", user: "u", hour: 2, track: track, .like)])
        l[1] = l[1].replacingOccurrences(of: "\"signal\":\"like\"", with: "\"signal\":\"love\"")
        #expect(throws: InputError.self) { try parse(l) }
        do {
            _ = try parse(l)
        } catch {
            #expect(error.line == 2)
            #expect(error.path == "signal")
        }
        l[1] = "{\"id\": \"e2\", "
        do {
            _ = try parse(l)
            Issue.record("accepted broken JSON")
        } catch {
            #expect(error.line == 2)
        }
    }

    @Test func outOfTimeOrderIsAnError() {
        let l = lines([
            handEvent("e1", user: "u", hour: 5, track: track, .like), handEvent("e2", user: "v", hour: 1, track: track, .like),
            handEvent("e3", user: "u", hour: 2, track: track, .like)
        ])
        do {
            _ = try parse(l)
            Issue.record("accepted a log out of order")
        } catch {
            #expect(error.line == 3)
            #expect(error.path == "at")
            #expect(error.description.contains("time order"))
            #expect(error.description.contains("line 1"))
        }
    }

    @Test func eventsWithoutSnapshotsUnknownTracksAndDuplicateIdsAreErrors() throws {
        var noSnapshot = handEvent("e1", user: "u", hour: 1, track: track, .like)
        noSnapshot.snapshot = nil
        noSnapshot.pickId = "p-1"
        do {
            _ = try parse(lines([noSnapshot]))
            Issue.record("accepted an event without snapshot")
        } catch { #expect(error.path == "snapshot" && error.line == 1) }
        do {
            _ = try parse(lines([handEvent("e1", user: "u", hour: 1, track: "no-such-track", .like)]))
            Issue.record("accepted an unknown track")
        } catch { #expect(error.path == "track") }
        do {
            _ = try parse(lines([handEvent("e1", user: "u", hour: 1, track: track, .like), handEvent("e1", user: "u", hour: 2, track: track, .like)]))
            Issue.record("accepted a duplicate id")
        } catch { #expect(error.path == "id" && error.line == 2) }
    }
}
