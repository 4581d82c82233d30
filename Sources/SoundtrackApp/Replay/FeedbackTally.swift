/// What a run of feedback events did, as every command that applies them reports it:
/// `9 applied, 2 duplicates skipped, 1 rejected`.
public struct FeedbackTally: Sendable, Equatable, CustomStringConvertible {
    /// Events applied.
    public var applied = 0
    /// Events skipped because their id was applied before.
    public var duplicates = 0
    /// Events rejected (reported with their line and field).
    public var rejected = 0

    /// A tally of nothing yet.
    public init() {}

    public var description: String { "\(applied) applied, \(duplicates) duplicates skipped, \(rejected) rejected" }
}
