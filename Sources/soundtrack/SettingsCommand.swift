import ArgumentParser
import Foundation
import SoundtrackContext
import SoundtrackStore

struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Show or change a person's settings: \(UserSettings.keys.joined(separator: ", ")).",
        discussion: """
            A service running on the database keeps the settings of the people it has in memory: \
            change them through PATCH /v1/users/{id}/settings while it runs.
            """,
        subcommands: [Show.self, Set.self])

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a person's settings.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The user id.", transform: Identifier.normalized) var user: String
        @Flag(help: "Print JSON instead of a table.") var json = false

        func run() throws {
            let settings = try store.open(loadBundledCatalog: false).store.settings(user: user)
            print(SettingsCommand.render(settings, json: json))
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change one of a person's settings (on or off), and show them all.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The user id.", transform: Identifier.normalized) var user: String
        @Argument(help: "The setting: \(UserSettings.keys.joined(separator: ", ")).") var key: String
        @Argument(help: "on or off (true, false, 1, 0).") var value: String
        @Flag(help: "Print JSON instead of a table.") var json = false

        func run() throws {
            let settings = try store.open(loadBundledCatalog: false).store.updateSettings(user: user) { s in
                try s.set(key, from: value)
            }
            print(SettingsCommand.render(settings, json: json))
        }
    }

    static func render(_ s: UserSettings, json: Bool) -> String {
        if json { return s.json.serialized() }
        return UserSettings.keys.map { $0.padding(toLength: 20, withPad: " ", startingAt: 0) + ((s[$0] ?? false) ? "on" : "off") }
            .joined(separator: "\n")
    }
}
