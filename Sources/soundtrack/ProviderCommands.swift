import ArgumentParser
import Foundation
import Logging
import SoundtrackApp
import SoundtrackContext
import SoundtrackProviders
import SoundtrackStore

/// `soundtrack config check [FILE]`: validates the configuration file and prints it with secrets redacted.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "Check the configuration file.", subcommands: [Check.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Validate a configuration file and print the effective configuration (secrets redacted).",
            discussion:
                "Errors name the key path and what was expected; the exit status is then 2. Secrets come only from the environment: SOUNDTRACK_OPENWEATHER_KEY, SOUNDTRACK_GOOGLE_ACCESS_TOKEN, SOUNDTRACK_GOOGLE_REFRESH_TOKEN, SOUNDTRACK_GOOGLE_CLIENT_SECRET, SOUNDTRACK_SPOTIFY_CLIENT_SECRET, SOUNDTRACK_SPOTIFY_REFRESH_TOKEN, SOUNDTRACK_SPOTIFY_ACCESS_TOKEN."
        )
        @Argument(help: "The file (default: $SOUNDTRACK_CONFIG, else ./soundtrack.json).") var file: String?

        func run() throws {
            let path = file ?? ProcessInfo.processInfo.environment["SOUNDTRACK_CONFIG"].flatMap { $0.isEmpty ? nil : $0 } ?? "soundtrack.json"
            let config = try ConfigLoader.load(path: path)
            print(config.redactedJSON().serialized())
            stderr("\(path): ok")
        }
    }
}

/// `soundtrack import ics FILE --user U`.
struct ImportICSCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ics",
        abstract: "Import an iCalendar (.ics) file's events as the user's calendar (categories and times; titles only if the user keeps raw snapshots).",
        discussion:
            "Recurring events are expanded from --from (default: now) for --days days (default: the configuration's calendar.import_days, 90); the user's ICS events in that window are replaced, so importing the same file twice changes nothing. Events that cannot be read are reported with their line and skipped; the exit status is then 2."
    )

    @OptionGroup var store: StoreOptions
    @Argument(help: "The .ics file, or - for standard input.") var file: String
    @Option(help: "The user.", transform: Identifier.normalized) var user: String
    @Option(help: "The start of the window, RFC 3339 (default: now).") var from: String?
    @Option(help: "The window's length in days (1...3660).") var days: Int?
    @Option(help: "The zone of floating and all-day times, an Olson name (default: the configuration's calendar.time_zone, else UTC).") var timeZone: String?

    func validate() throws {
        if let days, !(1...3660).contains(days) { throw ValidationError("--days must be in 1...3660, got \(days)") }
        if let from, Timestamp(rfc3339: from) == nil { throw ValidationError("--from must be an RFC 3339 timestamp with an offset, got \(from)") }
        if let timeZone, TimeZone(identifier: timeZone) == nil { throw ValidationError("--time-zone must be an Olson name such as Europe/Berlin, got \(timeZone)") }
    }

    func run() throws {
        let config = try store.configuration()
        let data = try readInput(file)
        guard let text = String(data: data, encoding: .utf8) else {
            throw InputError(path: "", expected: "a UTF-8 iCalendar file", got: "bytes that are not UTF-8")
        }
        let service = try store.open()
        let start = from.flatMap(Timestamp.init(rfc3339:))?.date ?? Date()
        let end = start.addingTimeInterval(Double(days ?? config.calendar.importDays) * 86_400)
        let zone = (timeZone ?? config.calendar.timeZone).flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC")!
        let report = try ProviderImports.importICS(text, user: user, store: service.store, timeZone: zone, from: start, to: end, now: Date())
        for e in report.rejected { stderr("error: \(e.description)") }
        print(
            "imported \(report.stored) occurrences of \(report.events) events for \(user) (\(Timestamp(date: report.from, offsetSeconds: 0).rfc3339) … \(Timestamp(date: report.to, offsetSeconds: 0).rfc3339)), rejected \(report.rejected.count)"
        )
        if !report.rejected.isEmpty { throw BadInputExit() }
    }
}

/// `soundtrack import spotify-library --user U`.
struct ImportSpotifyLibraryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spotify-library",
        abstract: "Import a user's Spotify library (saved tracks, top tracks, the playlists the user created) into the catalog and the user's library.",
        discussion:
            "Needs a user token: SOUNDTRACK_SPOTIFY_REFRESH_TOKEN (with providers.spotify.client_id and SOUNDTRACK_SPOTIFY_CLIENT_SECRET) or SOUNDTRACK_SPOTIFY_ACCESS_TOKEN. Tracks are upserted keeping the audio features already in the catalog; followed playlists are skipped."
    )

    @OptionGroup var store: StoreOptions
    @Option(help: "The user.", transform: Identifier.normalized) var user: String

    func run() async throws {
        let config = try store.configuration()
        let service = try store.open()
        let providers = ProviderSet(configuration: config, logger: Logger(label: "soundtrack.providers"))
        guard let spotify = providers.spotify, spotify.userTokens != nil else {
            throw ValidationError(
                "a Spotify user token is needed: set SOUNDTRACK_SPOTIFY_REFRESH_TOKEN (with providers.spotify.client_id and SOUNDTRACK_SPOTIFY_CLIENT_SECRET) or SOUNDTRACK_SPOTIFY_ACCESS_TOKEN"
            )
        }
        let r = try await ProviderImports.importSpotifyLibrary(spotify, user: user, store: service.store, now: Date())
        print(
            "imported the Spotify library of \(r.spotifyUser) for \(user): \(r.tracks) tracks (\(r.saved) saved, \(r.top) top, \(r.playlistTracks) in \(r.ownPlaylists) own playlists; \(r.skippedPlaylists) followed playlists skipped)"
        )
    }
}
