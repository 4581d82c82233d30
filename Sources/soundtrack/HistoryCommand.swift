import ArgumentParser
import Foundation
import SoundtrackContext
import SoundtrackStore

struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "A person's picks, newest first, each with the feedback it got.",
        discussion: """
            Picks made with --read-only are not stored and so not listed. With --json, one object a \
            line (docs/http-api.md, GET /v1/users/{id}/history, gives the fields); the last line's \
            "seq" is the --before of the next page.
            """)

    @OptionGroup var store: StoreOptions
    @Argument(help: "The user id.", transform: Identifier.normalized) var user: String
    @Option(help: "Only picks made at or after this time (RFC 3339, e.g. 2026-03-09T00:00:00Z).", transform: Self.time) var since: Date?
    @Option(help: "At most this many picks (1...\(Store.historyPageLimit)).") var limit = 50
    @Option(help: "Only picks older than the one with this seq (the next page).") var before: Int64?
    @Flag(help: "Print JSON lines instead of a table.") var json = false

    func validate() throws {
        guard (1...Store.historyPageLimit).contains(limit) else {
            throw ValidationError("--limit: expected 1...\(Store.historyPageLimit), got \(limit)")
        }
        if let before, before < 0 { throw ValidationError("--before: expected a seq of 0 or more, got \(before)") }
    }

    func run() throws {
        let entries = try store.open(loadBundledCatalog: false, existing: true).store.history(user: user, before: before, since: since, limit: limit)
        for e in entries { print(json ? Self.jsonLine(e) : Self.row(e)) }
    }

    static func time(_ text: String) throws -> Date {
        guard let t = Timestamp(rfc3339: text) else { throw ValidationError("--since: expected an RFC 3339 time, got '\(text)'") }
        return t.date
    }

    /// The entry's JSON with its `seq` (the cursor) first.
    static func jsonLine(_ e: Store.HistoryEntry) -> String {
        guard case .object(let pairs) = e.json else { return e.json.serialized() }
        return JSONValue.object([("seq", .number(Double(e.seq)))] + pairs).serialized()
    }

    /// `seq  time  bin  track (title — artist)  feedback`.
    static func row(_ e: Store.HistoryEntry) -> String {
        let bin = "#\(e.binNumber) " + (e.binLabel ?? "(bin gone)")
        let track = e.title.map { "\($0) — \(e.artist ?? "")" } ?? e.track
        let answers = e.feedback.isEmpty ? "no feedback" : e.feedback.map { $0.rating.map { r in "rate \(r)" } ?? $0.signal }.joined(separator: ", ")
        return [String(e.seq), Timestamp(date: e.at, offsetSeconds: 0).rfc3339, bin, track, answers].joined(separator: "  ")
    }
}
