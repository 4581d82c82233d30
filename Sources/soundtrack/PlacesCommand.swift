import ArgumentParser
import Foundation
import SoundtrackContext
import SoundtrackRules
import SoundtrackStore

struct PlacesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "places",
        abstract: "The places learned from a person's coordinates, and the names they give them.",
        discussion: """
            A named place reads "place: NAME" in bin labels and why, instead of "place #N". A snapshot's \
            location.place sent at a learned place that has no name names it. `name` refuses to run beside \
            a service, replay or batch on the database: use PUT /v1/users/{id}/places/{place} while a service runs.
            """,
        subcommands: [List.self, Name.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List a person's learned places.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The user id.", transform: Identifier.normalized) var user: String
        @Flag(help: "Print JSON lines instead of a table.") var json = false

        func run() throws {
            for place in try store.open(loadBundledCatalog: false, existing: true).places(user: user) {
                print(json ? place.json.serialized() : PlacesCommand.row(place))
            }
        }
    }

    struct Name: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "name", abstract: "Name one of a person's learned places, and show it.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The user id.", transform: Identifier.normalized) var user: String
        @Argument(help: "The place's id, as `places list` shows it (pl-1).") var place: String
        @Argument(help: "The name (1...\(LearnedPlace.maxNameLength) characters).", transform: { try LearnedPlace.validName($0) }) var name: String
        @Flag(help: "Print JSON instead of a table row.") var json = false

        func run() throws {
            // Not beside a service, replay or batch, which hold the person's state in memory.
            let lock = try WriterLock(databasePath: try store.path(), holder: "places name")
            defer { lock.release() }
            let service = try store.open(loadBundledCatalog: false, existing: true)
            try service.catchUp()
            let named = try service.namePlace(user: user, place: place, name: name)
            print(json ? named.json.serialized() : PlacesCommand.row(named))
        }
    }

    /// `id  name  lat, lon  count`.
    static func row(_ p: LearnedPlace) -> String {
        [p.id, p.name ?? "(no name)", String(format: "%.3f, %.3f", p.lat, p.lon), "\(p.count) snapshots"].joined(separator: "  ")
    }
}
