import Foundation

/// Allowed values of a numeric field, rendered in error messages.
enum Bounds {
    /// `lo...hi`, both included.
    case closed(Double, Double)
    /// `lo` or more.
    case atLeast(Double)

    func contains(_ x: Double) -> Bool {
        switch self {
        case let .closed(lo, hi): return x >= lo && x <= hi
        case let .atLeast(lo): return x >= lo
        }
    }

    var text: String {
        switch self {
        case let .closed(lo, hi): return "in \(JSONValue.numberText(lo))...\(JSONValue.numberText(hi))"
        case let .atLeast(lo): return ">= \(JSONValue.numberText(lo))"
        }
    }
}

/// How values are rendered after "got" in error messages.
enum Got {
    /// The kind of a value, for type errors: `a string`, `null`, `an object`.
    static func type(_ v: JSONValue) -> String { v.typeDescription }

    /// The value itself where that is short and useful (`140`, `"sunny"`), else its kind.
    static func value(_ v: JSONValue) -> String {
        switch v {
        case .number(let x): return JSONValue.numberText(x)
        case .string(let s): return quoted(s)
        case .bool(let b): return b ? "true" : "false"
        default: return v.typeDescription
        }
    }

    /// A string as JSON text, cut to 40 characters.
    static func quoted(_ s: String) -> String {
        if s.utf8.count <= 40 { return JSONValue.string(s).serialized() }
        let cut = String(s.prefix(40))
        if cut.count == s.count { return JSONValue.string(s).serialized() }
        let text = JSONValue.string(cut).serialized()
        return String(text.dropLast()) + "…\""
    }
}

/// Reads and validates the fields of one JSON object; builds paths only when it throws.
struct JSONObjectReader {
    let pairs: [(String, JSONValue)]
    let base: String
    let index: Int?

    /// The dotted path of this object (`calendar.events[2]`).
    var path: String {
        guard let index else { return base }
        return "\(base)[\(index)]"
    }

    func path(of key: String) -> String {
        let p = path
        return p.isEmpty ? key : p + "." + key
    }

    /// Reads an object value, or throws a type error at `path`.
    init(_ value: JSONValue, base: String, index: Int? = nil) throws(InputError) {
        guard case .object(let pairs) = value else {
            let p = index.map { "\(base)[\($0)]" } ?? base
            throw InputError(path: p, expected: "an object", got: Got.type(value))
        }
        self.pairs = pairs
        self.base = base
        self.index = index
    }

    /// The value of a key; `nil` when it is absent or `null`.
    @inline(__always)
    func value(_ key: String) -> JSONValue? {
        guard let i = find(key) else { return nil }
        if case .null = pairs[i].1 { return nil }
        return pairs[i].1
    }

    /// The index of a key; compares lengths first and never copies the values.
    @inline(__always)
    func find(_ key: String) -> Int? {
        let n = key.utf8.count
        var i = 0
        let count = pairs.count
        while i < count {
            if pairs[i].0.utf8.count == n, pairs[i].0 == key { return i }
            i += 1
        }
        return nil
    }

    /// The value of a key as given (`.null` kept); `nil` only when absent.
    func raw(_ key: String) -> JSONValue? {
        find(key).map { pairs[$0].1 }
    }

    /// In strict mode, throws for the first field not in `known`.
    func rejectUnknown(_ known: [String], strict: Bool) throws(InputError) {
        guard strict else { return }
        for (k, v) in pairs where !known.contains(k) {
            throw InputError(path: path(of: k), expected: "no field '\(k)'", got: Got.value(v))
        }
    }

    // MARK: Typed reads

    func number(_ key: String, _ bounds: Bounds) throws(InputError) -> Double? {
        guard let v = value(key) else { return nil }
        guard case .number(let x) = v else {
            throw InputError(path: path(of: key), expected: "a number \(bounds.text)", got: Got.type(v))
        }
        guard bounds.contains(x) else {
            throw InputError(path: path(of: key), expected: "a number \(bounds.text)", got: Got.value(v))
        }
        return x
    }

    func integer(_ key: String, atLeast lo: Int) throws(InputError) -> Int? {
        guard let v = value(key) else { return nil }
        let expected = "an integer >= \(lo)"
        guard case .number(let x) = v else {
            throw InputError(path: path(of: key), expected: expected, got: Got.type(v))
        }
        guard x == x.rounded(.towardZero), x >= Double(lo), x <= 9_007_199_254_740_992 else {
            throw InputError(path: path(of: key), expected: expected, got: Got.value(v))
        }
        return Int(x)
    }

    func bool(_ key: String) throws(InputError) -> Bool? {
        guard let v = value(key) else { return nil }
        guard case .bool(let b) = v else {
            throw InputError(path: path(of: key), expected: "true or false", got: Got.type(v))
        }
        return b
    }

    /// An optional free-text field of at most `maxLength` characters.
    func string(_ key: String, maxLength: Int = 1024) throws(InputError) -> String? {
        guard let v = value(key) else { return nil }
        guard case .string(let s) = v else {
            throw InputError(path: path(of: key), expected: "a string", got: Got.type(v))
        }
        try Validate.length(s, max: maxLength, path: path(of: key))
        return s
    }

    /// A required non-empty field of at most `maxLength` characters.
    func requiredString(_ key: String, maxLength: Int = 1024) throws(InputError) -> String {
        let expected = "a non-empty string of at most \(maxLength) characters"
        guard let v = raw(key) else {
            throw InputError(path: path(of: key), expected: expected, got: "nothing")
        }
        guard case .string(let s) = v else {
            throw InputError(path: path(of: key), expected: expected, got: Got.type(v))
        }
        if s.isEmpty { throw InputError(path: path(of: key), expected: expected, got: "\"\"") }
        try Validate.length(s, max: maxLength, path: path(of: key), expected: expected)
        return s
    }

    /// A required identifier: non-empty, at most 128 characters, no control characters.
    func identifier(_ key: String) throws(InputError) -> String {
        guard let v = raw(key) else {
            throw InputError(path: path(of: key), expected: Validate.identifierExpectation, got: "nothing")
        }
        return try Validate.identifier(v, path: path(of: key))
    }

    /// An optional identifier (see ``identifier(_:)``); `null` means absent.
    func optionalIdentifier(_ key: String) throws(InputError) -> String? {
        guard let v = value(key) else { return nil }
        return try Validate.identifier(v, path: path(of: key))
    }

    func timestamp(_ key: String) throws(InputError) -> Timestamp? {
        guard let v = value(key) else { return nil }
        return try Validate.timestamp(v, path: path(of: key))
    }

    func requiredTimestamp(_ key: String) throws(InputError) -> Timestamp {
        guard let v = raw(key) else {
            throw InputError(path: path(of: key), expected: Validate.timestampExpectation, got: "nothing")
        }
        return try Validate.timestamp(v, path: path(of: key))
    }

    func enumeration<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type) throws(InputError) -> E?
    where E.RawValue == String {
        guard let v = value(key) else { return nil }
        return try Validate.enumeration(v, E.self, path: path(of: key))
    }

    func requiredEnumeration<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type) throws(InputError) -> E
    where E.RawValue == String {
        guard let v = raw(key) else {
            throw InputError(path: path(of: key), expected: Validate.oneOf(E.self), got: "nothing")
        }
        return try Validate.enumeration(v, E.self, path: path(of: key))
    }

    /// An optional array of at most `max` elements.
    func array(_ key: String, max: Int, noun: String) throws(InputError) -> [JSONValue]? {
        guard let v = value(key) else { return nil }
        guard case .array(let elements) = v else {
            throw InputError(path: path(of: key), expected: "an array of at most \(max) \(noun)", got: Got.type(v))
        }
        guard elements.count <= max else {
            throw InputError(path: path(of: key), expected: "at most \(max) \(noun)", got: "\(elements.count)")
        }
        return elements
    }
}

/// Validation rules shared by the decoders.
enum Validate {
    static let identifierExpectation = "a non-empty string of at most 128 characters without control characters"
    static let timestampExpectation = "an RFC 3339 timestamp with an offset (like 2026-03-14T07:42:10+01:00)"

    static func oneOf<E: RawRepresentable & CaseIterable>(_ type: E.Type) -> String where E.RawValue == String {
        "one of " + E.allCases.map(\.rawValue).joined(separator: ", ")
    }

    static func enumeration<E: RawRepresentable & CaseIterable>(
        _ v: JSONValue, _ type: E.Type, path: @autoclosure () -> String
    ) throws(InputError) -> E
    where E.RawValue == String {
        guard case .string(let s) = v else {
            throw InputError(path: path(), expected: oneOf(E.self), got: Got.type(v))
        }
        guard let e = E(rawValue: s) else {
            throw InputError(path: path(), expected: oneOf(E.self), got: Got.quoted(s))
        }
        return e
    }

    static func timestamp(_ v: JSONValue, path: @autoclosure () -> String) throws(InputError) -> Timestamp {
        guard case .string(let s) = v else {
            throw InputError(path: path(), expected: timestampExpectation, got: Got.type(v))
        }
        guard let t = Timestamp(rfc3339: s) else {
            throw InputError(path: path(), expected: timestampExpectation, got: Got.quoted(s))
        }
        return t
    }

    static func identifier(_ v: JSONValue, path: @autoclosure () -> String) throws(InputError) -> String {
        guard case .string(let s) = v else {
            throw InputError(path: path(), expected: identifierExpectation, got: Got.type(v))
        }
        if s.isEmpty || hasControlCharacter(s) {
            throw InputError(path: path(), expected: identifierExpectation, got: Got.quoted(s))
        }
        try length(s, max: 128, path: path(), expected: identifierExpectation)
        return s
    }

    static func length(
        _ s: String, max: Int, path: @autoclosure () -> String, expected: @autoclosure () -> String? = nil
    ) throws(InputError) {
        if s.utf8.count <= max { return }
        let n = s.count
        if n <= max { return }
        throw InputError(
            path: path(), expected: expected() ?? "a string of at most \(max) characters",
            got: "a string of \(n) characters")
    }

    /// Whether a string holds a C0 or C1 control character or DEL.
    static func hasControlCharacter(_ s: String) -> Bool {
        var previous: UInt8 = 0
        for b in s.utf8 {
            if b < 0x20 || b == 0x7F { return true }
            // C1 controls U+0080...U+009F are C2 80...C2 9F in UTF-8.
            if previous == 0xC2, b >= 0x80, b <= 0x9F { return true }
            previous = b
        }
        return false
    }
}
