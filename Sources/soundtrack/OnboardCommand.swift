import ArgumentParser
import Foundation
import SoundtrackApp
import SoundtrackContext
import SoundtrackRules
import SoundtrackStore

/// `soundtrack onboard`: a new user's first bin from one song and the current snapshot.
struct OnboardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "onboard",
        abstract: "Start a user's bins from one song they want to hear now and the current snapshot; prints the pick of that song as JSON.",
        discussion: """
            The snapshot and the song make a bin (or join the bin that already fits the context); the songs most \
            similar to it (from --library first, then the catalog) fill the bin. Feedback on them decides whether they stay. \
            The user is created when new.
            """)

    @OptionGroup var store: StoreOptions
    @OptionGroup var engine: RankingOptions
    @Option(help: "The user id (must match the snapshot's `user`).", transform: Identifier.normalized) var user: String
    @Option(help: "The track id of the song the user wants to hear now.") var song: String
    @Option(help: "The snapshot file, or - for standard input.") var snapshot: String
    @Option(help: "A file of the user's own track ids, one per line, preferred over the catalog when similar enough (default: the library `import spotify-library` stored).")
    var library: String?
    @Flag(name: .long, help: "Reject unknown fields.") var strict = false

    func run() throws {
        let snap = try Snapshot.decode(try readInput(snapshot), strict: strict)
        guard snap.user == user else {
            throw InputError(path: "user", expected: "the user of --user ('\(user)')", got: "'\(snap.user)'")
        }
        var libraryIds: [String]?
        if let library {
            guard let text = try? String(contentsOfFile: library, encoding: .utf8) else {
                throw InputError(path: "library", expected: "a readable UTF-8 file of track ids", got: "'\(library)'")
            }
            libraryIds = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let service = try store.open(engine: engine.values)
        // A new user is created with the onboarding, in its transaction: a failed one leaves none.
        let (pick, created) = try service.onboard(snap, song: song, library: libraryIds, createUser: true)
        if created { stderr("created user \(user)") }
        print(pick.json().serialized())
    }
}
