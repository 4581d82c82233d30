import Foundation

/// Allowed values of a numeric field, rendered in error messages.
public enum Bounds: Sendable {
    /// `lo...hi`, both included.
    case closed(Double, Double)
    /// `lo` or more.
    case atLeast(Double)
    /// More than `lo`.
    case above(Double)

    func contains(_ x: Double) -> Bool {
        switch self {
        case let .closed(lo, hi): return x >= lo && x <= hi
        case let .atLeast(lo): return x >= lo
        case let .above(lo): return x > lo
        }
    }

    var text: String {
        switch self {
        case let .closed(lo, hi): return "in \(JSONValue.numberText(lo))...\(JSONValue.numberText(hi))"
        case let .atLeast(lo): return ">= \(JSONValue.numberText(lo))"
        case let .above(lo): return "> \(JSONValue.numberText(lo))"
        }
    }
}

/// How values are rendered after "got" in error messages.
public enum Got {
    /// The kind of a value, for type errors: `a string`, `null`, `an object`.
    static func type(_ v: JSONValue) -> String { v.typeDescription }

    /// The value itself where that is short and useful (`140`, `"sunny"`), else its kind.
    public static func value(_ v: JSONValue) -> String {
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

/// Reads and validates the fields of one JSON object, naming the JSON path of whatever is wrong:
/// the one reader of the project's JSON objects, for requests (snapshots, feedback events, new
/// users), the model files in `Models/` and the configuration file. Paths are built only when it
/// throws.
///
/// Reads come in two kinds: optional ones (`number(_:_:)`, `object(_:)`, `string(_:maxLength:nonEmpty:)`…)
/// give `nil` for a field that is absent or `null`; required ones (`number(_:in:)`,
/// `requiredObject(_:)`, `requiredString(_:maxLength:allowEmpty:)`…) throw for it (`got nothing`).
///
/// ```swift
/// let doc = try JSONObjectReader(JSONParser.parse(data), path: "")
/// try doc.rejectUnknown(["schema", "version", "rate"])
/// let rate = try doc.number("rate", in: 0...1)   // "rate: expected a number in 0...1, got 1.5"
/// ```
public struct JSONObjectReader {
    /// The object's members, in document order.
    public let pairs: [(String, JSONValue)]
    let base: String
    let index: Int?

    /// The dotted path of this object (`calendar.events[2]`); empty for a document.
    public var path: String {
        guard let index else { return base }
        return "\(base)[\(index)]"
    }

    /// The path of a member of this object.
    public func path(of key: String) -> String {
        let p = path
        return p.isEmpty ? key : p + "." + key
    }

    /// Reads an object value, or throws a type error at its path (`base`, or `base[index]`).
    public init(_ value: JSONValue, base: String, index: Int? = nil) throws(InputError) {
        guard case .object(let pairs) = value else {
            let p = index.map { "\(base)[\($0)]" } ?? base
            throw InputError(path: p, expected: "an object", got: Got.type(value))
        }
        self.pairs = pairs
        self.base = base
        self.index = index
    }

    /// Reads an object value at `path`.
    public init(_ value: JSONValue, path: String) throws(InputError) {
        try self.init(value, base: path)
    }

    /// Reads and parses a JSON file whose document is read with this type (a model file); a file
    /// that cannot be read is an ``InputError`` too.
    public static func parse(contentsOf url: URL) throws(InputError) -> JSONValue {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw InputError(path: "", expected: "a readable file", got: Got.quoted(url.path))
        }
        return try JSONParser.parse(data)
    }

    // MARK: Members

    /// The value of a key; `nil` when it is absent or `null`.
    @inline(__always)
    public func value(_ key: String) -> JSONValue? {
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
    public func raw(_ key: String) -> JSONValue? {
        find(key).map { pairs[$0].1 }
    }

    /// The value of a key that must be there (`null` included).
    /// - Throws: `expected …, got nothing` when it is absent.
    public func require(_ key: String, _ expected: @autoclosure () -> String) throws(InputError) -> JSONValue {
        guard let v = raw(key) else { throw InputError(path: path(of: key), expected: expected(), got: "nothing") }
        return v
    }

    /// Throws for the first field not in `known` (always, unless `strict` is false).
    public func rejectUnknown(_ known: [String], strict: Bool = true) throws(InputError) {
        guard strict else { return }
        for (k, _) in pairs where !known.contains(k) {
            throw InputError(path: path(of: k), expected: "one of the fields \(known.joined(separator: ", "))", got: Got.quoted(k))
        }
    }

    /// Throws for a field that names a secret (`secrets`: field → the environment variable it belongs in).
    public func rejectSecrets(_ secrets: [String: String]) throws(InputError) {
        for (k, _) in pairs {
            guard let env = secrets[k] else { continue }
            throw InputError(path: path(of: k), expected: "no secret in the file (set \(env) in the environment)", got: "a value (not shown)")
        }
    }

    /// Checks the `schema` and `version` members of a versioned document (a model file).
    public func checkHeader(schema: String, version: Int) throws(InputError) {
        let s = try requiredString("schema", maxLength: nil)
        guard s == schema else { throw InputError(path: path(of: "schema"), expected: Got.quoted(schema), got: Got.quoted(s)) }
        let v = try require("version", "\(version)")
        guard case let .number(n) = v, n == Double(version) else {
            throw InputError(path: path(of: "version"), expected: "\(version) (the version this build reads)", got: Got.value(v))
        }
    }

    // MARK: Optional reads: nil when absent or null

    /// A number within `bounds`.
    public func number(_ key: String, _ bounds: Bounds) throws(InputError) -> Double? {
        guard let v = value(key) else { return nil }
        return try Self.number(v, bounds, path: path(of: key))
    }

    /// The largest whole number ``integer(_:atLeast:)`` accepts: 2^53, the largest integer up to
    /// which every integer is a JSON number read exactly (as an IEEE double).
    public static let maxExactInteger = 9_007_199_254_740_992

    /// A whole number from `lo` to ``maxExactInteger`` (2^53).
    public func integer(_ key: String, atLeast lo: Int) throws(InputError) -> Int? {
        guard let v = value(key) else { return nil }
        let expected = "an integer in \(lo)...\(Self.maxExactInteger) (2^53)"
        guard case .number(let x) = v else {
            throw InputError(path: path(of: key), expected: expected, got: Got.type(v))
        }
        guard x == x.rounded(.towardZero), x >= Double(lo), x <= Double(Self.maxExactInteger) else {
            throw InputError(path: path(of: key), expected: expected, got: Got.value(v))
        }
        return Int(x)
    }

    /// A whole number in `range`.
    public func optionalInteger(_ key: String, in range: ClosedRange<Int>) throws(InputError) -> Int? {
        guard let v = value(key) else { return nil }
        return try Self.integer(v, in: range, path: path(of: key))
    }

    /// `true` or `false`.
    public func bool(_ key: String) throws(InputError) -> Bool? {
        guard let v = value(key) else { return nil }
        guard case .bool(let b) = v else {
            throw InputError(path: path(of: key), expected: "true or false", got: Got.type(v))
        }
        return b
    }

    /// A free-text field of at most `maxLength` characters (`nonEmpty`: and at least one).
    public func string(_ key: String, maxLength: Int = 1024, nonEmpty: Bool = false) throws(InputError) -> String? {
        guard let v = value(key) else { return nil }
        let expected = nonEmpty ? "a non-empty string" : "a string"
        guard case .string(let s) = v else { throw InputError(path: path(of: key), expected: expected, got: Got.type(v)) }
        if nonEmpty && s.isEmpty { throw InputError(path: path(of: key), expected: expected, got: "\"\"") }
        try Validate.length(s, max: maxLength, path: path(of: key))
        return s
    }

    /// An array of strings.
    public func strings(_ key: String) throws(InputError) -> [String]? {
        guard let v = value(key) else { return nil }
        guard case let .array(items) = v else { throw InputError(path: path(of: key), expected: "an array of strings", got: Got.type(v)) }
        var out: [String] = []
        for (i, item) in items.enumerated() {
            guard case let .string(s) = item else { throw InputError(path: "\(path(of: key))[\(i)]", expected: "a string", got: Got.type(item)) }
            out.append(s)
        }
        return out
    }

    /// An http(s) URL without a query.
    public func url(_ key: String) throws(InputError) -> URL? {
        guard let s = try string(key, nonEmpty: true) else { return nil }
        guard let u = URL(string: s), let scheme = u.scheme?.lowercased(), scheme == "http" || scheme == "https", u.host != nil, u.query == nil
        else {
            // A query may hold a secret (`?appid=…`): the error shows what comes before it only.
            let shown = s.firstIndex(where: { $0 == "?" || $0 == "#" }).map { Got.quoted(String(s[..<$0])) + " with a query (not shown)" }
            throw InputError(path: path(of: key), expected: "an http(s) URL without a query", got: shown ?? Got.quoted(s))
        }
        return u
    }

    /// A nested object.
    public func object(_ key: String) throws(InputError) -> JSONObjectReader? {
        guard let v = value(key) else { return nil }
        return try JSONObjectReader(v, base: path(of: key))
    }

    /// An array of at most `max` elements.
    public func array(_ key: String, max: Int, noun: String) throws(InputError) -> [JSONValue]? {
        guard let v = value(key) else { return nil }
        guard case .array(let elements) = v else {
            throw InputError(path: path(of: key), expected: "an array of at most \(max) \(noun)", got: Got.type(v))
        }
        guard elements.count <= max else {
            throw InputError(path: path(of: key), expected: "at most \(max) \(noun)", got: "\(elements.count)")
        }
        return elements
    }

    /// An identifier: non-empty, at most 128 characters, no control characters.
    public func optionalIdentifier(_ key: String) throws(InputError) -> String? {
        guard let v = value(key) else { return nil }
        return try Validate.identifier(v, path: path(of: key))
    }

    public func timestamp(_ key: String) throws(InputError) -> Timestamp? {
        guard let v = value(key) else { return nil }
        return try Validate.timestamp(v, path: path(of: key))
    }

    func enumeration<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type) throws(InputError) -> E?
    where E.RawValue == String {
        guard let v = value(key) else { return nil }
        return try Validate.enumeration(v, E.self, path: path(of: key))
    }

    // MARK: Required reads: absent (or null) is an error

    /// A number in `range`.
    public func number(_ key: String, in range: ClosedRange<Double>) throws(InputError) -> Double {
        let bounds = Bounds.closed(range.lowerBound, range.upperBound)
        return try Self.number(require(key, "a number \(bounds.text)"), bounds, path: path(of: key))
    }

    /// A whole number in `range`.
    public func integer(_ key: String, in range: ClosedRange<Int>) throws(InputError) -> Int {
        try Self.integer(require(key, Self.integerExpectation(range)), in: range, path: path(of: key))
    }

    /// A string of at most `maxLength` characters (`nil`: any length), non-empty unless `allowEmpty`.
    public func requiredString(_ key: String, maxLength: Int? = 1024, allowEmpty: Bool = false) throws(InputError) -> String {
        var expected = allowEmpty ? "a string" : "a non-empty string"
        if let maxLength { expected += " of at most \(maxLength) characters" }
        guard let v = raw(key) else {
            throw InputError(path: path(of: key), expected: expected, got: "nothing")
        }
        guard case .string(let s) = v else {
            throw InputError(path: path(of: key), expected: expected, got: Got.type(v))
        }
        if s.isEmpty && !allowEmpty { throw InputError(path: path(of: key), expected: expected, got: "\"\"") }
        if let maxLength { try Validate.length(s, max: maxLength, path: path(of: key), expected: expected) }
        return s
    }

    /// A string checked as an identifier (non-empty, at most 128 characters, no control
    /// characters): an id that comes from elsewhere than a JSON body, such as a URL path.
    public static func identifier(_ s: String, path: String) throws(InputError) -> String {
        try Validate.identifier(.string(s), path: path)
    }

    /// An identifier: non-empty, at most 128 characters, no control characters.
    public func identifier(_ key: String) throws(InputError) -> String {
        guard let v = raw(key) else {
            throw InputError(path: path(of: key), expected: Validate.identifierExpectation, got: "nothing")
        }
        return try Validate.identifier(v, path: path(of: key))
    }

    func requiredTimestamp(_ key: String) throws(InputError) -> Timestamp {
        guard let v = raw(key) else {
            throw InputError(path: path(of: key), expected: Validate.timestampExpectation, got: "nothing")
        }
        return try Validate.timestamp(v, path: path(of: key))
    }

    /// One of `E`'s raw values (absent or `null` is an error).
    public func requiredEnumeration<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type) throws(InputError) -> E
    where E.RawValue == String {
        guard let v = raw(key) else {
            throw InputError(path: path(of: key), expected: Validate.oneOf(E.self), got: "nothing")
        }
        return try Validate.enumeration(v, E.self, path: path(of: key))
    }

    /// A nested object.
    public func requiredObject(_ key: String) throws(InputError) -> JSONObjectReader {
        try JSONObjectReader(require(key, "an object"), base: path(of: key))
    }

    /// An array.
    public func requiredArray(_ key: String) throws(InputError) -> [JSONValue] {
        guard case let .array(items) = try require(key, "an array") else {
            throw InputError(path: path(of: key), expected: "an array", got: Got.type(raw(key)!))
        }
        return items
    }

    // MARK: Values

    /// A number within `bounds`, the value at `path` (a member of an object read as a map).
    public static func number(_ v: JSONValue, _ bounds: Bounds, path: @autoclosure () -> String) throws(InputError) -> Double {
        guard case .number(let x) = v else {
            throw InputError(path: path(), expected: "a number \(bounds.text)", got: Got.type(v))
        }
        guard bounds.contains(x) else {
            throw InputError(path: path(), expected: "a number \(bounds.text)", got: Got.value(v))
        }
        return x
    }

    /// A number in `range`, the value at `path`.
    public static func number(_ v: JSONValue, in range: ClosedRange<Double>, path: @autoclosure () -> String) throws(InputError) -> Double {
        try number(v, .closed(range.lowerBound, range.upperBound), path: path())
    }

    static func integer(_ v: JSONValue, in range: ClosedRange<Int>, path: @autoclosure () -> String) throws(InputError) -> Int {
        guard case let .number(x) = v else { throw InputError(path: path(), expected: integerExpectation(range), got: Got.type(v)) }
        guard x.rounded() == x, x >= Double(range.lowerBound), x <= Double(range.upperBound) else {
            throw InputError(path: path(), expected: integerExpectation(range), got: Got.value(v))
        }
        return Int(x)
    }

    static func integerExpectation(_ range: ClosedRange<Int>) -> String {
        "an integer in \(range.lowerBound)...\(range.upperBound)"
    }

    /// A value as error messages show it: a number as written, a string quoted (cut to 40
    /// characters), else its kind (`an object`, `null`).
    public static func describe(_ v: JSONValue) -> String { Got.value(v) }

    /// A text as error messages show it: quoted as JSON, cut to 40 characters.
    public static func quote(_ s: String) -> String { Got.quoted(s) }
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
        let id = Identifier.normalized(s)
        try length(id, max: 128, path: path(), expected: identifierExpectation)
        return id
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
