import Foundation
import SoundtrackContext

/// The default per-slot priority weights of `Models/weights.v2.json`: a `default`, then one
/// weight per ``FeatureLayout/Group``, then overrides for single slots (the most specific wins).
///
/// ```swift
/// let w = try DefaultWeights.load(from: url)   // FeatureLayout.dimension weights
/// ```
public enum DefaultWeights {
    /// The `schema` member of a weights file.
    public static let schema = "soundtrack.weights"
    /// The file version this build reads.
    public static let supportedVersion = 2
    /// Allowed weights.
    public static let range: ClosedRange<Double> = 0...5

    /// Loads and validates a weights file.
    /// - Returns: one weight per ``FeatureLayout`` slot, in slot order.
    /// - Throws: ``InputError`` naming the JSON path of the first problem.
    public static func load(from url: URL) throws(InputError) -> [Float] {
        try decode(JSONObjectReader.parse(contentsOf: url))
    }

    /// Parses and validates the bytes of a weights file.
    /// - Throws: ``InputError`` naming the JSON path of the first problem, for example
    ///   `groups.placee: expected a feature group name, got 'placee'`.
    public static func decode(_ data: Data) throws(InputError) -> [Float] {
        try decode(JSONParser.parse(data))
    }

    /// Validates a parsed weights document.
    public static func decode(_ json: JSONValue) throws(InputError) -> [Float] {
        let doc = try JSONObjectReader(json, path: "")
        try doc.rejectUnknown(["schema", "version", "layout_version", "default", "groups", "slots"])
        try doc.checkHeader(schema: schema, version: supportedVersion)
        let layout = try doc.integer("layout_version", in: 1...Int(Int32.max))
        guard layout == FeatureLayout.version else {
            throw InputError(
                path: "layout_version", expected: "\(FeatureLayout.version) (the feature layout of this build)", got: "\(layout)")
        }
        let fallback = Float(try doc.number("default", in: range))
        var weights = [Float](repeating: fallback, count: FeatureLayout.dimension)
        if let groups = try doc.object("groups") {
            for (key, v) in groups.pairs {
                guard let group = FeatureLayout.Group(rawValue: key) else {
                    throw InputError(path: groups.path(of: key), expected: "a feature group name", got: JSONObjectReader.quote(key))
                }
                let w = Float(try JSONObjectReader.number(v, in: range, path: groups.path(of: key)))
                for (i, slot) in FeatureLayout.slots.enumerated() where slot.group == group { weights[i] = w }
            }
        }
        if let slots = try doc.object("slots") {
            for (key, v) in slots.pairs {
                guard let i = FeatureLayout.index(of: key) else {
                    throw InputError(path: slots.path(of: key), expected: "a feature slot name", got: JSONObjectReader.quote(key))
                }
                weights[i] = Float(try JSONObjectReader.number(v, in: range, path: slots.path(of: key)))
            }
        }
        return weights
    }
}
