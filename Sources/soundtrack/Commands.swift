import ArgumentParser
import Foundation
import Logging
import SoundtrackApp
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackProviders
import SoundtrackRules
import SoundtrackStore

struct PickCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pick", abstract: "Pick a track for a sensor snapshot (JSON) and print the pick as JSON.")

    @OptionGroup var store: StoreOptions
    @OptionGroup var engine: RankingOptions
    @Argument(help: "The snapshot file, or - for standard input.") var input: String = "-"
    @Option(
        name: .long,
        help:
            "Also return the K best tracks in score order (`ranked`). The played `track` is the first of them, except on an exploration draw (see --explore), when it is one of the next best."
    ) var top: Int = 1
    @Flag(name: .long, help: "Pick without learning: nothing is written to the database.") var readOnly = false
    @Option(
        name: .long,
        help:
            "Pick for a group listening together: two or more users, comma-separated (the snapshot is their shared context; its `user` is ignored). Each member's ranking is read without learning and the rankings are aggregated (docs/scoring.md, \"Listening together\")."
    ) var group: String?
    @Flag(name: .long, help: "Reject unknown fields.") var strict = false
    @Flag(
        name: .long, help: "Fill missing weather and calendar sections from the configured providers and imported events; the pick's `enriched` list says which source filled what."
    )
    var enrich = false

    func validate() throws {
        guard (1...100).contains(top) else { throw ValidationError("--top must be in 1...100, got \(top)") }
        if group != nil, enrich { throw ValidationError("--group takes no --enrich") }
    }

    func run() async throws {
        let data = try readInput(input)
        var snapshot = try Snapshot.decode(data, strict: strict)
        if let group {
            let members = group.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            let service = try store.open(engine: engine.values, community: true, existing: true, oneShot: true)
            print(try service.groupPick(snapshot, members: members, top: top).json(includeRanked: top > 1).serialized())
            return
        }
        let config = enrich ? try store.configuration() : nil
        let service = try store.open(engine: engine.values, community: true, existing: true, oneShot: true)
        var report: [EnrichmentEntry] = []
        if let config {
            let enricher = ProviderImports.enricher(
                ProviderSet(configuration: config, logger: Logger(label: "soundtrack.providers")), store: service.store,
                lookaheadHours: config.calendar.lookaheadHours)
            // The providers never see what the person's settings keep from the engine (coordinates, calendar titles).
            snapshot = Rules.permitted(snapshot, settings: try service.store.settings(user: snapshot.user))
            (snapshot, report) = await enricher.enrich(snapshot)
        }
        let pick = try service.pick(snapshot, top: top, learn: !readOnly)
        print(EnrichmentEntry.annotate(pick.json(includeRanked: top > 1), with: report).serialized())
        // The process ends: the catalog's index and the community model are left to the exit
        // instead of freed one allocation at a time (2 ms of a 50 ms pick; issue 40). What the
        // pick committed is in the database either way (a connection's close did not move it
        // from the WAL into the file before this either: GRDB keeps the WAL).
        keepUntilExit(service)
    }
}

struct FeedbackCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feedback",
        abstract: "Apply feedback: one event (JSON), or JSON Lines of events, each in its own transaction.",
        discussion:
            "Events are idempotent by id: an event applied before is reported as a duplicate and changes nothing. A bad line is reported with its number and does not stop the others; the exit status is then 2."
    )

    @OptionGroup var store: StoreOptions
    @OptionGroup var engine: RankingOptions
    @Argument(help: "The event file, or - for standard input.") var input: String = "-"
    @Flag(name: .long, help: "Reject unknown fields.") var strict = false
    @Flag(name: .long, help: "Print nothing for applied events (errors still go to standard error).") var quiet = false

    func run() throws {
        let data = try readInput(input)
        let service = try store.open(engine: engine.values, community: true, writesCommunity: true, existing: true)
        // The community model counts the events applied here: written when the command ends.
        defer { try? service.checkpointCommunity() }
        if let single = try? JSONParser.parse(data) {
            try Snapshot.checkSize(data.count)  // the limit replay and the service apply
            let event = try FeedbackEvent(json: single, strict: strict)
            let verdict = try service.feedback(event)
            if !quiet { print(verdict.json(eventId: event.id).serialized()) }
            return
        }
        let records = jsonLines(data)
        if records.count <= 1 {
            // Not valid JSON and not several lines: report the parse error of the whole input.
            _ = try FeedbackEvent.decode(data, strict: strict)
            return
        }
        var tally = FeedbackTally()
        for (line, bytes) in records {
            do {
                let event = try FeedbackEvent.decode(bytes, strict: strict)
                let verdict = try service.feedback(event)
                if case .duplicate = verdict { tally.duplicates += 1 } else { tally.applied += 1 }
                if !quiet { print(verdict.json(eventId: event.id).serialized()) }
            } catch {
                guard let rejected = LineError(line: line, rejecting: error) else { throw error }
                tally.rejected += 1
                stderr("error: \(rejected.description)")
            }
        }
        stderr("feedback: \(tally)")
        if tally.rejected > 0 { throw BadInputExit() }
    }
}

struct BinsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bins", abstract: "Show a user's bins.")

    @OptionGroup var store: StoreOptions
    @Option(name: .long, help: "The user.", transform: Identifier.normalized) var user: String
    @Flag(name: .long, help: "Print JSON instead of a table.") var json = false

    func run() throws {
        let service = try store.open(existing: true)
        let bins = try service.bins(user: user)
        if json {
            print(BinTable.json(bins, user: user))
        } else {
            for line in try BinTable.render(bins, store: service.store) { print(line) }
        }
    }
}

struct UsersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users", abstract: "Add, list, show and forget users.",
        subcommands: [Add.self, SetEmail.self, List.self, Show.self, Export.self, Import.self, Forget.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a user (the email is stored only as a keyed hash: see --email-key-file).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The user id.", transform: Identifier.normalized) var id: String
        @Option(help: "Email address (hashed before it is stored).") var email: String?
        @Option(help: "Age in years (13...120).") var age: Int?
        @Option(help: "Region, for example DE or US-CA.") var region: String?

        func run() throws {
            let user = try NewUser(id: id, email: email, age: age, region: region)
            try store.open().addUser(user, at: Date())
            print("added user \(id)")
        }
    }

    struct SetEmail: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-email",
            abstract: "Replace a user's email (stored only as a keyed hash; a legacy SHA-256 hash is re-keyed).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The user id.", transform: Identifier.normalized) var id: String
        @Option(help: "The email address; omit it to remove the user's email.") var email: String?

        func run() throws {
            try store.open(existing: true).store.setEmail(email, user: id)
            print(email == nil ? "removed the email of user \(id)" : "set the email of user \(id)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List users.")
        @OptionGroup var store: StoreOptions
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let users = try store.open(existing: true).store.users()
            if json {
                print(JSONValue.array(users.map(UsersCommand.json)).serialized())
            } else {
                print("user                     bins  picks  feedback")
                for u in users {
                    print("\(u.id.padding(toLength: 24, withPad: " ", startingAt: 0)) \(String(format: "%5d  %5d  %8d", u.bins, u.picks, u.feedback))")
                }
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one user as JSON.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The user id.", transform: Identifier.normalized) var id: String

        func run() throws {
            print(UsersCommand.json(try store.open(existing: true).user(id)).serialized())
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Print everything stored about a user as one JSON document (docs/formats.md, Person export).",
            discussion:
                "Profile, settings, places, bins with their songs, weights, session, picks, feedback and ratings, calendar events, library and key ids (never their secrets). `users import` restores it into another database."
        )
        @OptionGroup var store: StoreOptions
        @Argument(help: "The user id.", transform: Identifier.normalized) var id: String

        func run() throws {
            print(try store.open(existing: true).store.exportPerson(id, at: Date()).serialized())
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Restore a user from a `users export` document into this database, in one transaction.",
            discussion:
                "The person then gets the same picks as in the database that exported them, given the same catalog, models and blend. A malformed or changed document, or a user already here, is refused (exit 2) and nothing is written. API keys are not restored (their secrets are not in the document)."
        )
        @OptionGroup var store: StoreOptions
        @Argument(help: "The document file, or - for standard input.") var input: String = "-"

        func run() throws {
            let document = try JSONParser.parse(try readInput(input))
            let service = try store.open()
            let (user, rows) = try service.store.importPerson(document)
            // The person's feedback counted in the community model now, unless another process
            // holds the database (it is then counted by the next process that loads the model).
            if let lock = try? WriterLock(databasePath: try store.path(), holder: "users import") {
                _ = try service.store.loadCommunity(write: true)
                lock.release()
            }
            print("imported user \(user): " + rows.filter { $0.count > 0 }.map { "\($0.count) \($0.table)" }.joined(separator: ", "))
        }
    }

    struct Forget: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "forget", abstract: "Delete every row of a user: bins, feedback, picks, weights, places, session.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The user id.", transform: Identifier.normalized) var id: String

        func run() throws {
            try store.open(existing: true).forget(user: id)
            print("forgot user \(id)")
        }
    }

    static func json(_ u: Store.UserSummary) -> JSONValue {
        u.json(counts: true)
    }
}

struct CatalogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog", abstract: "Manage the track catalog.", subcommands: [Import.self, Similar.self, CatalogSynthCommand.self, CatalogBenchCommand.self])

    struct Similar: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "similar",
            abstract: "List the catalog tracks most similar to a track (audio features and genres).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The track id (for example spotify:track:…).") var track: String
        @Option(name: .short, help: "How many tracks to list (1...1000).") var k: Int = 10
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            guard (1...1000).contains(k) else { throw ValidationError("-k must be in 1...1000, got \(k)") }
        }

        func run() throws {
            let index = CatalogIndex(tracks: try store.open().store.allTracks())
            guard let row = index.row(of: track) else {
                throw RuleError.unknownTrack(track, field: "track")
            }
            let found = index.similar(toTrack: row, k: k)
            if json {
                print(
                    JSONValue.array(
                        found.map { hit in
                            let t = index.tracks[hit.row]
                            return .object([
                                ("track", .string(t.id)), ("title", .string(t.title)), ("artist", .string(t.artist)),
                                ("score", .number((Double(hit.score) * 1000).rounded() / 1000))
                            ])
                        }
                    ).serialized())
                return
            }
            let q = index.tracks[row]
            print("tracks like “\(q.title)” — \(q.artist) [\(q.genres.prefix(3).joined(separator: ", "))]")
            for (i, hit) in found.enumerated() {
                let t = index.tracks[hit.row]
                print(String(format: "%3d  %.3f  ", i + 1, hit.score) + "\(t.title) — \(t.artist) [\(t.genres.prefix(3).joined(separator: ", "))]")
            }
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Import a catalog (CSV or JSON Lines, see docs/formats.md); tracks are upserted by track_id.",
            discussion: "Bad rows are reported with their line numbers and skipped; the exit status is then 2.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The catalog file (.csv, .jsonl).") var file: String
        @Option(help: "csv or jsonl (default: from the file name).") var format: String?

        func run() throws {
            var fmt: CatalogFormat?
            if let format {
                guard let f = CatalogFormat(rawValue: format) else {
                    throw ValidationError("--format must be csv or jsonl, got \(format)")
                }
                fmt = f
            }
            let service = try store.open(loadBundledCatalog: false)
            let url = URL(fileURLWithPath: file)
            guard FileManager.default.isReadableFile(atPath: file) else {
                throw InputError(path: "", expected: "a readable catalog file", got: "'\(file)'")
            }
            let report = try service.store.importCatalog(url, format: fmt)
            for e in report.rejected.prefix(50) { stderr("error: \(e.description)") }
            if report.rejectedCount > 50 { stderr("… and \(report.rejectedCount - 50) more rejected rows") }
            print("imported \(report.accepted) tracks, rejected \(report.rejectedCount) (catalog now \(try service.store.trackCount()) tracks)")
            if report.rejectedCount > 0 { throw BadInputExit() }
        }
    }
}

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "A day in a user's life: picks for home, a commute by car, the library, the gym and an evening, with simulated feedback, told as a story.")

    @OptionGroup var store: StoreOptions
    @OptionGroup var engine: RankingOptions
    @Option(help: "How many days to live through.") var days: Int = 2
    @Option(help: "The demo user's id (forgotten and re-created).", transform: Identifier.normalized) var user: String = "demo"
    @Option(help: "Write every feedback event (with its snapshot) to this JSON Lines file.") var log: String?
    @Option(help: "Write the first day's snapshot of each scene to this directory as <scene>.json.") var examples: String?

    func validate() throws {
        guard (1...60).contains(days) else { throw ValidationError("--days must be in 1...60, got \(days)") }
    }

    func run() throws {
        let service = try store.open(engine: engine.values, community: true, writesCommunity: true)
        defer { try? service.checkpointCommunity() }
        print("Soundtrack demo: \(days) day\(days == 1 ? "" : "s") in the life of ‘\(user)’ (database \(try store.path()), seed \(engine.seed))")
        let report = try DemoRunner(service: service, user: user, seed: engine.seed, days: days).run()
        for line in report.lines { print(line) }
        if let log {
            let text = report.events.map { $0.json().serialized() }.joined(separator: "\n") + "\n"
            try Data(text.utf8).write(to: URL(fileURLWithPath: log))
            stderr("wrote \(report.events.count) feedback events to \(log)")
        }
        if let examples {
            try FileManager.default.createDirectory(atPath: examples, withIntermediateDirectories: true)
            for (name, snap) in report.examples {
                try Data((snap.json().serialized() + "\n").utf8).write(to: URL(fileURLWithPath: examples).appendingPathComponent("\(name).json"))
            }
        }
    }
}
