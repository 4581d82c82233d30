import Foundation
import SoundtrackContext

/// The blend of the track ranker, from `Models/ranker.v1.json`: one weight per signal, fitted by
/// `soundtrack fit` (docs/scoring.md, "Ranking tracks"; docs/evaluation.md, "Fitting the blend").
///
/// ```swift
/// let model = try RankerModel.load(from: url)
/// model.weights[RankerModel.index(of: "knn")!]
/// ```
public struct RankerModel: Sendable, Equatable {
    /// The `schema` member of a ranker file.
    public static let schema = "soundtrack.ranker"
    /// The file version this build reads.
    public static let supportedVersion = 1
    /// The signals, in the order of ``weights`` (docs/scoring.md defines each).
    public static let signals = [
        "own_mean", "own_rated", "own_rep", "own_ctx", "knn", "knn_r", "cat", "pop", "pop_r", "ctxpop", "audio"
    ]

    /// The signals whose weights a fitted blend keeps at 0 or above (by position in ``signals``):
    /// the user's own evidence and the evidence of people with the same taste, which no fit may
    /// read backwards (docs/scoring.md, "Learning the blend").
    public static let nonNegativeSignals: [Int] = ["own_mean", "own_rated", "own_ctx", "knn", "knn_r"].map { signals.firstIndex(of: $0)! }

    /// One weight per signal, in ``signals`` order.
    public var weights: [Float]
    /// What the weights were fitted on (free text, for people).
    public var source: String
    /// Which blend this is: 0 for the models' own (`Models/ranker.v1.json`, or `--models`), `n` for
    /// version `n` of the blends a database learned (`soundtrack models history`). Picks name it.
    public var version: Int

    /// A model from weights in ``signals`` order.
    public init(weights: [Float], source: String = "", version: Int = 0) {
        precondition(weights.count == Self.signals.count, "one weight per signal")
        self.weights = weights
        self.source = source
        self.version = version
    }

    /// The position of a signal by name.
    public static func index(of signal: String) -> Int? { signals.firstIndex(of: signal) }

    /// Loads and validates a ranker file.
    /// - Throws: ``InputError`` naming the JSON path of the first problem.
    public static func load(from url: URL) throws(InputError) -> RankerModel {
        try decode(JSONObjectReader.parse(contentsOf: url))
    }

    /// Parses and validates the bytes of a ranker file.
    public static func decode(_ data: Data) throws(InputError) -> RankerModel {
        try decode(JSONParser.parse(data))
    }

    /// Validates a parsed ranker document: `schema`, `version`, `weights` (an object with a number
    /// in −100…100 for every signal, and no other key), `source` (a string).
    public static func decode(_ json: JSONValue) throws(InputError) -> RankerModel {
        let doc = try JSONObjectReader(json, path: "")
        try doc.rejectUnknown(["schema", "version", "weights", "source"])
        try doc.checkHeader(schema: schema, version: supportedVersion)
        let w = try doc.requiredObject("weights")
        try w.rejectUnknown(signals)
        var weights: [Float] = []
        for s in signals { weights.append(Float(try w.number(s, in: -100...100))) }
        return RankerModel(weights: weights, source: try doc.requiredString("source", allowEmpty: true))
    }

    /// The document as written by `soundtrack fit`, weights rounded to 4 decimals.
    public func json() -> JSONValue {
        .object([
            ("schema", .string(Self.schema)), ("version", .number(Double(Self.supportedVersion))),
            ("weights", .object(zip(Self.signals, weights).map { ($0, .number((Double($1) * 10_000).rounded() / 10_000)) })),
            ("source", .string(source))
        ])
    }
}
