import ArgumentParser
import Foundation
import SoundtrackContext
import SoundtrackStore

struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Show or change a person's settings: \(UserSettings.keys.joined(separator: ", ")).",
        discussion: """
            `set` refuses to run beside a service, replay or batch on the database (they hold the \
            settings in memory): change them through PATCH /v1/users/{id}/settings while a service runs.
            """,
        subcommands: [Show.self, Set.self])

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show a person's settings.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The user id.", transform: Identifier.normalized) var user: String
        @Flag(help: "Print JSON instead of a table.") var json = false

        func run() throws {
            let settings = try store.open(loadBundledCatalog: false, existing: true).store.settings(user: user)
            print(SettingsCommand.render(settings, json: json))
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set", abstract: "Change one of a person's settings (on or off), and show them all.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The user id.", transform: Identifier.normalized) var user: String
        @Argument(help: "The setting: \(UserSettings.keys.joined(separator: ", ")).") var key: String
        @Argument(help: "on or off (true, false, 1, 0).") var value: String
        @Flag(help: "Print JSON instead of a table.") var json = false

        func run() throws {
            // Not beside a service, replay or batch, which hold the person's settings in memory; and
            // every event still waiting to be applied again is applied first, under the settings
            // it came with.
            let lock = try WriterLock(databasePath: try store.path(), holder: "settings set")
            defer { lock.release() }
            let service = try store.open(loadBundledCatalog: false, existing: true)
            try service.catchUp()
            let settings = try service.store.updateSettings(user: user) { s in try s.set(key, from: value) }
            print(SettingsCommand.render(settings, json: json))
        }
    }

    static func render(_ s: UserSettings, json: Bool) -> String {
        if json { return s.json.serialized() }
        return UserSettings.keys.map { $0.padding(toLength: 20, withPad: " ", startingAt: 0) + ((s[$0] ?? false) ? "on" : "off") }
            .joined(separator: "\n")
    }
}
