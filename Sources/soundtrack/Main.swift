import ArgumentParser
import CSupport
import Foundation
import SoundtrackApp
import SoundtrackContext

/// Exit statuses: 0 ok, 1 runtime failure, 2 bad input or usage.
enum Exit {
    static let ok: Int32 = 0
    static let failure: Int32 = 1
    static let badInput: Int32 = 2
}

/// Objects that live until the process exits. A command that built large in-memory state (batch)
/// hands it here: `exit` then ends the process without freeing millions of allocations.
nonisolated(unsafe) private var keptUntilExit: [AnyObject] = []

/// Keeps `object` alive until the process exits (see `keptUntilExit`).
func keepUntilExit(_ object: AnyObject) {
    keptUntilExit.append(object)
}

/// Keeps freed memory in the process instead of returning it to the kernel, for the file commands
/// (batch, replay) that free and reallocate buffers of many megabytes per block: glibc's default
/// would hand them back (munmap) and fault fresh zeroed pages in for the next block. Not for
/// `serve`, whose memory should shrink again after a peak.
func keepFreedMemory() {
    _ = soundtrack_keep_freed_memory()
}

/// Bad input found while running (after argument parsing): already reported, exit 2.
struct BadInputExit: Error {}

@main
struct Entry {
    static func main() async {
        // SQLite's allocation statistics take a global lock around every allocation; nothing here reads them.
        _ = soundtrack_sqlite_without_memstatus()
        let status: Int32
        do {
            var command = try Soundtrack.parseAsRoot()
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
            status = Exit.ok
        } catch {
            status = report(error)
        }
        exit(status)
    }

    /// Reports an error on standard error (or prints help) and returns the exit status: the CLI's
    /// one table from errors to statuses.
    ///
    /// | error | status |
    /// | --- | --- |
    /// | ``InputError`` (malformed or invalid input) | 2 |
    /// | ``RuleError``: an unknown user, an id in use, an event out of time order, an unknown track or pick, a quiz round unknown or answered, too little history for one | 2 |
    /// | bad records already reported (`BadInputExit`), usage errors | 2 |
    /// | `--help`, `--version` | 0 |
    /// | anything else (database, file system, network) | 1 |
    static func report(_ error: any Error) -> Int32 {
        switch error {
        case let e as InputError:
            stderr("error: \(e.description)")
            return Exit.badInput
        case let e as RuleError:
            stderr("error: \(e.description)")
            return status(for: e)
        case is BadInputExit:
            return Exit.badInput
        case let e as CleanExit:
            // --help, --version
            print(Soundtrack.fullMessage(for: e))
            return Exit.ok
        case let e as ExitCode:
            return e.rawValue
        default:
            let code = Soundtrack.exitCode(for: error)
            if code == .success {
                // --help and --version arrive as errors with a success code.
                print(Soundtrack.fullMessage(for: error))
                return Exit.ok
            }
            if code == .validationFailure || code.rawValue == 64 {
                // Usage errors from argument parsing: the parser's message with usage, exit 2.
                stderr(Soundtrack.fullMessage(for: error))
                return Exit.badInput
            }
            // Anything else is a runtime failure: one line, no internals beyond the error's own text.
            stderr("error: \(error)")
            return Exit.failure
        }
    }

    /// The exit status of an input the rules refuse: bad input, whatever the rule.
    static func status(for error: RuleError) -> Int32 {
        switch error {
        case .unknownUser, .userExists, .keyExists, .eventIdTaken, .outOfOrder, .unknownTrack, .unknownPick, .pickOfAnotherUser,
            .pickBinGone, .noContext, .unknownPlace, .groupTooSmall, .memberTwice, .unknownMember, .unknownSession, .notMember, .alreadyMember, .noTrackYet, .sessionMoved,
            .nothingToPlay,
            .unknownQuiz, .quizAnswered, .tooLittleHistory:
            Exit.badInput
        }
    }
}

struct Soundtrack: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soundtrack",
        abstract: "Context-aware music recommendations: sensor snapshots in, tracks out, feedback learned.",
        discussion: "Exit status: 0 ok, 1 runtime failure, 2 bad input or usage.",
        version: "0.1.0",
        subcommands: [
            PickCommand.self, OnboardCommand.self, FeedbackCommand.self, BinsCommand.self, UsersCommand.self, CatalogCommand.self, BatchCommand.self, ReplayCommand.self,
            SimulateCommand.self, EvalCommand.self, FitCommand.self, DemoCommand.self, BenchCommand.self, ServeCommand.self, KeysCommand.self, ConfigCommand.self,
            ImportCommand.self, ModelsCommand.self, SettingsCommand.self, HistoryCommand.self, PlacesCommand.self, QuizCommand.self
        ]
    )
}
