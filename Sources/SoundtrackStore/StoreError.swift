import Foundation

/// Failures of the store that are not bad input.
public enum StoreError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A stored vector was written with another feature layout.
    case layoutMismatch(table: String, found: Int, expected: Int)
    /// A stored value is not what the column must hold (a row edited outside the engine).
    case corrupt(table: String, column: String, row: Int64, expected: String)
    /// A user's session row holds a list that does not read (a row edited outside the engine).
    case corruptSession(user: String, column: String)
    /// A pick's ranking does not read (a row edited outside the engine).
    case corruptPick(id: String)
    /// `soundtrack models use` named a blend version the database does not hold.
    case noSuchBlend(Int)

    public var description: String {
        switch self {
        case let .layoutMismatch(table, found, expected):
            return "\(table): stored feature layout v\(found), this engine reads v\(expected) (a migration is needed)"
        case let .corrupt(table, column, row, expected):
            return "\(table).\(column) of row \(row): expected \(expected)"
        case let .corruptPick(id):
            return "picks.ranking of pick '\(id)': expected the bins in score order"
        case let .noSuchBlend(version):
            return "no blend version \(version) in this database (soundtrack models history lists them; 0 is the models' own)"
        case let .corruptSession(user, column):
            return "sessions.\(column) of user '\(user)': expected a JSON array of \(column == "avoided" ? "bin numbers" : "track ids")"
        }
    }
}
