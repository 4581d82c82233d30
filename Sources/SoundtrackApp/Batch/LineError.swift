import SoundtrackContext

/// A record of an input file that was rejected: where, which field, and why.
///
/// Its JSON Lines form (the error report of `batch --errors` and `replay --errors`) is
/// `{"line":12,"field":"weather.cloud_pct","message":"expected a number in 0...100, got 140"}`,
/// with `"file"` and `"record"` in place of `"line"` for records of JSON array files (imports).
public struct LineError: Sendable, Equatable, Error, CustomStringConvertible {
    /// The 1-based line (JSON Lines), or the 0-based record index of a JSON array file.
    public var line: Int
    /// The file, for imports of several files (`nil` for one JSON Lines input).
    public var file: String?
    /// The JSON path of the field at fault; empty for the whole record.
    public var field: String
    /// What was expected and what was found.
    public var message: String

    /// Creates an error.
    public init(line: Int, file: String? = nil, field: String, message: String) {
        self.line = line
        self.file = file
        self.field = field
        self.message = message
    }

    /// A rejected record's error, the one mapping of bad input (``InputError``) and a rule's
    /// verdict (``RuleError``) to it; `nil` for any other error (a database failure, say), which is
    /// not the record's and stops the run.
    public init?(line: Int, file: String? = nil, rejecting error: any Error) {
        switch error {
        case let e as InputError: self.init(line: line, file: file, e)
        case let e as RuleError: self.init(line: line, file: file, e)
        default: return nil
        }
    }

    /// An input error attributed to a record: its field and what was expected there.
    public init(line: Int, file: String? = nil, _ e: InputError) {
        self.init(line: line, file: file, field: e.path, message: "expected \(e.expected), got \(e.got)")
    }

    /// A record the rules rejected: the error report's one mapping of ``RuleError``, the field at
    /// fault and what was expected there, as for bad input.
    public init(line: Int, file: String? = nil, _ e: RuleError) {
        self.init(line: line, file: file, field: e.field, message: "expected \(e.expected), got \(e.got)")
    }

    /// `line 12: weather.cloud_pct: expected …`, or `FILE: record 3: ts: expected …`.
    public var description: String {
        let at = file.map { "\($0): record \(line)" } ?? "line \(line)"
        return "\(at): \(field.isEmpty ? "input" : field): \(message)"
    }

    /// The error as one JSON object (no newline).
    public func json() -> JSONValue {
        var pairs: [(String, JSONValue)] = []
        if let file {
            pairs.append(("file", .string(file)))
            pairs.append(("record", .number(Double(line))))
        } else {
            pairs.append(("line", .number(Double(line))))
        }
        pairs.append(("field", .string(field)))
        pairs.append(("message", .string(message)))
        return .object(pairs)
    }
}
