/// A parsed JSON value. Objects keep their keys in input order; duplicate keys are rejected by the parser.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// Every JSON number, as a finite Double (the parser rejects numbers that overflow to infinity).
    case number(Double)
    case string(String)
    case array([JSONValue])
    /// Key–value pairs in input order.
    case object([(String, JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.number(x), .number(y)): return x == y
        case let (.string(x), .string(y)): return x == y
        case let (.array(x), .array(y)): return x == y
        case let (.object(x), .object(y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// The member of an object with the given key, or `nil` (also for non-objects).
    public subscript(key: String) -> JSONValue? {
        guard case let .object(pairs) = self else { return nil }
        for (k, v) in pairs where k == key { return v }
        return nil
    }

    /// A short name of the value's JSON type, for error messages ("a string", "an object"…).
    public var typeDescription: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// Bad input: the JSON path (or file line) of the offending field, what was expected and what came.
///
/// `description` reads `weather.cloud_pct: expected a number in 0...100, got 140`, prefixed
/// with `line N: ` when the input came from a file of many records.
public struct InputError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Dotted JSON path of the field (`calendar.events[0].start`); empty for the whole document.
    public var path: String
    /// What was expected there, in words.
    public var expected: String
    /// A short rendering of what was found (a value, a type, or "nothing" for a missing field).
    public var got: String
    /// The 1-based line of a JSON Lines or CSV file the record came from, when known.
    public var line: Int?

    public init(path: String, expected: String, got: String, line: Int? = nil) {
        self.path = path
        self.expected = expected
        self.got = got
        self.line = line
    }

    public var description: String {
        let prefix = line.map { "line \($0): " } ?? ""
        let field = path.isEmpty ? "input" : path
        return "\(prefix)\(field): expected \(expected), got \(got)"
    }

    /// The same error attributed to a line of a file.
    public func at(line: Int) -> InputError {
        var e = self
        e.line = line
        return e
    }
}
