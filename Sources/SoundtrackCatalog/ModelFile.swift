import Foundation
import SoundtrackContext

/// Reads the fields of one object of a model file (`Models/*.json`), naming the JSON path of
/// whatever is wrong. Model files are ours, so they are read strictly: unknown keys are errors
/// (a typo must not pass silently).
struct ModelObject {
    /// The dotted path of this object; empty for the document.
    let path: String
    let pairs: [(String, JSONValue)]

    init(_ value: JSONValue, path: String) throws(InputError) {
        guard case let .object(pairs) = value else {
            throw InputError(path: path, expected: "an object", got: ModelObject.render(value))
        }
        self.path = path
        self.pairs = pairs
    }

    /// The path of a member.
    func path(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// The value of a key, or `nil` when absent.
    func optional(_ key: String) -> JSONValue? {
        for (k, v) in pairs where k == key { return v }
        return nil
    }

    func require(_ key: String, _ expected: String) throws(InputError) -> JSONValue {
        guard let v = optional(key) else { throw InputError(path: path(key), expected: expected, got: "nothing") }
        return v
    }

    /// Throws for the first key not in `known`.
    func rejectUnknown(_ known: [String]) throws(InputError) {
        for (k, _) in pairs where !known.contains(k) {
            throw InputError(path: path(k), expected: "one of the fields \(known.joined(separator: ", "))", got: ModelObject.quote(k))
        }
    }

    func string(_ key: String, nonEmpty: Bool = true) throws(InputError) -> String {
        let expected = nonEmpty ? "a non-empty string" : "a string"
        guard case let .string(s) = try require(key, expected), !nonEmpty || !s.isEmpty else {
            throw InputError(path: path(key), expected: expected, got: ModelObject.render(optional(key)!))
        }
        return s
    }

    func number(_ key: String, in range: ClosedRange<Double>) throws(InputError) -> Double {
        try ModelObject.number(require(key, ModelObject.expectation(range)), in: range, path: path(key))
    }

    func integer(_ key: String, in range: ClosedRange<Int>) throws(InputError) -> Int {
        let expected = "an integer in \(range.lowerBound)...\(range.upperBound)"
        guard case let .number(d) = try require(key, expected), d.rounded() == d,
            d >= Double(range.lowerBound), d <= Double(range.upperBound)
        else {
            throw InputError(path: path(key), expected: expected, got: ModelObject.render(optional(key)!))
        }
        return Int(d)
    }

    func object(_ key: String) throws(InputError) -> ModelObject {
        try ModelObject(require(key, "an object"), path: path(key))
    }

    func array(_ key: String) throws(InputError) -> [JSONValue] {
        guard case let .array(items) = try require(key, "an array") else {
            throw InputError(path: path(key), expected: "an array", got: ModelObject.render(optional(key)!))
        }
        return items
    }

    /// Checks the `schema` and `version` members of a model document.
    func checkHeader(schema: String, version: Int) throws(InputError) {
        let s = try string("schema")
        guard s == schema else { throw InputError(path: path("schema"), expected: ModelObject.quote(schema), got: ModelObject.quote(s)) }
        guard case let .number(v) = try require("version", "\(version)"), v == Double(version) else {
            throw InputError(
                path: path("version"), expected: "\(version) (the version this build reads)",
                got: ModelObject.render(optional("version")!))
        }
    }

    static func number(_ v: JSONValue, in range: ClosedRange<Double>, path: String) throws(InputError) -> Double {
        guard case let .number(d) = v, range.contains(d) else {
            throw InputError(path: path, expected: expectation(range), got: render(v))
        }
        return d
    }

    static func expectation(_ r: ClosedRange<Double>) -> String {
        "a number in \(CatalogField.render(r.lowerBound))...\(CatalogField.render(r.upperBound))"
    }

    /// A value for an error message: numbers as written, strings quoted, else the JSON type.
    static func render(_ v: JSONValue) -> String {
        switch v {
        case let .number(d): CatalogField.render(d)
        case let .string(s): quote(s)
        default: v.typeDescription
        }
    }

    static func quote(_ s: String) -> String { CatalogField.quote(s) }

    /// Reads and parses a model file; a file that cannot be read is an ``InputError`` too.
    static func read(_ url: URL) throws(InputError) -> JSONValue {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw InputError(path: "", expected: "a readable model file", got: quote(url.path))
        }
        return try JSONParser.parse(data)
    }
}
