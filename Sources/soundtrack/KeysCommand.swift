import ArgumentParser
import Foundation
import SoundtrackContext
import SoundtrackRules
import SoundtrackServer
import SoundtrackStore

struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Create, list and revoke API keys of the HTTP service (stored only as SHA-256 hashes).",
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Create a key for a user (--user U) or an admin key (--admin); the key is printed once.",
            discussion:
                "With --users-file, one key per user listed in the file (one id a line) is printed as `user<TAB>key`; --add-users creates the users that do not exist (for provisioning and load tests)."
        )
        @OptionGroup var store: StoreOptions
        @Option(help: "The user the key reaches.", transform: Identifier.normalized) var user: String?
        @Flag(help: "An admin key: reaches every user and manages users.") var admin = false
        @Option(help: "A label: who or what the key is for.") var label: String?
        @Option(help: "A file of user ids, one a line: one key each.") var usersFile: String?
        @Flag(help: "With --users-file: add the users that do not exist yet.") var addUsers = false

        func validate() throws {
            let modes = [user != nil, admin, usersFile != nil].filter { $0 }.count
            guard modes == 1 else { throw ValidationError("give exactly one of --user U, --admin, --users-file FILE") }
            if addUsers && usersFile == nil { throw ValidationError("--add-users goes with --users-file") }
        }

        func run() throws {
            var rng = SystemRandomNumberGenerator()
            if admin || user != nil {
                let service = try store.open()
                let (secret, record) = APIKeys.generate(role: admin ? .admin : .user, user: user, label: label, at: Date(), using: &rng)
                try service.store.insertKey(record)
                print(secret)
                stderr("created \(admin ? "admin" : "user") key \(record.id)\(user.map { " for \($0)" } ?? ""); it is shown only now")
                return
            }
            let data = try readInput(usersFile!)
            let ids = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
                .map { Identifier.normalized($0.trimmingCharacters(in: .whitespaces)) }.filter { !$0.isEmpty }
            // Many users: commits need not wait for the disk here (a crash loses only this run's keys).
            let service = try store.open(durable: false)
            var out = ""
            for id in ids {
                if addUsers, try !service.store.userExists(id) {
                    try service.addUser(NewUser(id: id), at: Date())
                }
                let (secret, record) = APIKeys.generate(role: .user, user: id, label: label, at: Date(), using: &rng)
                try service.store.insertKey(record)
                out += "\(id)\t\(secret)\n"
            }
            FileHandle.standardOutput.write(Data(out.utf8))
            stderr("created \(ids.count) user keys")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List keys (ids, roles, users; never secrets).")
        @OptionGroup var store: StoreOptions

        func run() throws {
            print("key           role   user                      created               revoked")
            for k in try store.open().store.keys() {
                let user = (k.user ?? "-").padding(toLength: 24, withPad: " ", startingAt: 0)
                let created = Timestamp(date: k.createdAt, offsetSeconds: 0).rfc3339
                let revoked = k.revokedAt.map { Timestamp(date: $0, offsetSeconds: 0).rfc3339 } ?? "-"
                print("\(k.id)  \(k.role.rawValue.padding(toLength: 5, withPad: " ", startingAt: 0))  \(user)  \(created)  \(revoked)")
            }
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke",
            abstract: "Revoke a key by id; a running service stops accepting it within 5 seconds.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The key id (as `keys list` shows it), or the whole key.") var id: String

        func run() throws {
            // A whole key `stk_<id>_<secret>` names its id; the secret is never printed back.
            let parts = id.split(separator: "_", omittingEmptySubsequences: false)
            let isWholeKey = id.hasPrefix("stk_") && parts.count == 3
            let keyID = isWholeKey ? String(parts[1]) : id
            guard try store.open().store.revokeKey(id: keyID, at: Date()) else {
                throw InputError(
                    path: "id", expected: "an active key id",
                    got: isWholeKey ? "a key whose id '\(keyID)' is not active (its secret is not shown)" : "'\(id)'")
            }
            print("revoked key \(keyID)")
        }
    }
}
