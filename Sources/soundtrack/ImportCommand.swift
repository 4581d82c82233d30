import ArgumentParser
import Foundation
import SoundtrackApp
import SoundtrackContext

/// `soundtrack import …`: a user's history from outside, replayed as feedback. One subcommand per source.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a user's data from files and services: listening histories (as feedback), calendars, streaming libraries.",
        subcommands: [ImportSpotify.self, ImportICSCommand.self, ImportSpotifyLibraryCommand.self])
}

struct ImportSpotify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spotify",
        abstract: "Import Spotify streaming-history exports (StreamingHistory*.json, Streaming_History_Audio_*.json, endsong_*.json).",
        discussion: """
            Each play becomes a feedback event (skip: under 30 s, forward button or `skipped`; complete: played \
            to the end, or 30 s or more in the account-data format) with the time and the platform as context, \
            replayed like `soundtrack replay`. Event ids hash user, time and track: importing the same export \
            twice changes nothing. Tracks missing from the catalog are added (title and artist only). Podcast \
            rows are skipped and counted. A record with a missing or malformed field is reported with its file, \
            index and field, and the exit status is 2.
            """)

    @OptionGroup var store: StoreOptions
    @OptionGroup var engine: RankingOptions
    @Argument(help: "Export files (JSON arrays).") var files: [String]
    @Option(name: .long, help: "The user the history belongs to.", transform: Identifier.normalized) var user: String
    @Flag(name: .long, help: "Create the user if the database does not know it.") var createUser = false
    @Option(name: .long, help: "Write the error report (JSON Lines: file, record, field, message) to this file.") var errors: String?
    @Flag(name: .long, help: "Print no summary.") var quiet = false

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name at least one export file") }
    }

    func run() throws {
        let sink = try ErrorSink(path: errors)
        var plays: [SpotifyHistory.Play] = []
        var podcasts = 0
        for file in files {
            let data = try readInput(file)
            do {
                let report = try SpotifyHistory.read(data, file: file)
                plays += report.plays
                podcasts += report.podcasts
                for e in report.errors { try sink.report(e) }
            } catch let e as LineError {
                try sink.report(e)
            }
        }
        let service = try store.open(engine: engine.values, community: true, writesCommunity: true)
        if !createUser, try !service.store.userExists(user) {
            stderr("(pass --create-user to create the user)")
            throw RuleError.unknownUser(user)
        }
        let (items, tracks) = SpotifyHistory.events(user: user, plays: plays)
        let added = try service.store.insertMissingTracks(tracks)
        var options = ReplayOptions()
        options.createUsers = createUser
        options.now = Date()
        let runner = try ReplayRunner(service: service, options: options)
        let bar = Progress(total: items.count, unit: "plays")
        let summary = try runner.run(items: items, reject: { try sink.report($0) }, progress: { bar.update(records: $0.records, done: $0.done) })
        bar.finish()
        if !quiet {
            let neutral = plays.count - items.count
            stderr(
                "import spotify: \(files.count) file\(files.count == 1 ? "" : "s"), \(plays.count) plays: \(summary.tally); \(neutral) neutral plays (neither skipped nor played to the end) and \(podcasts) podcast rows skipped; \(sink.count - summary.tally.rejected) records malformed; \(added) tracks added to the catalog"
            )
            if let hint = sink.hint { stderr(hint) }
        }
        if sink.count > 0 { throw BadInputExit() }
    }
}
