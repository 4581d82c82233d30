import Foundation
import SoundtrackCatalog
import SoundtrackContext

/// The model files the engine runs on: thresholds, default weights and cold-start priors.
public struct Models: Sendable {
    /// Thresholds, rates and default weights.
    public var config: EngineConfig
    /// Cold-start priors.
    public var priors: ColdStartPriors
    /// The blend of the track ranker.
    public var ranker: RankerModel

    /// The models compiled into the binary (identical to the files in `Models/`).
    public static func bundled() throws -> Models {
        try Models(
            thresholds: Thresholds.decode(Data(BundledModels.thresholdsJSON.utf8)),
            weights: DefaultWeights.decode(Data(BundledModels.weightsJSON.utf8)),
            priors: ColdStartPriors.decode(Data(BundledModels.priorsJSON.utf8)),
            ranker: BundledModels.ranker())
    }

    /// The models in a directory (`thresholds.v2.json`, `weights.v2.json`, `priors.v1.json`,
    /// `ranker.v1.json`).
    /// - Throws: ``InputError`` naming the file and field of a malformed model.
    public static func load(directory: URL) throws -> Models {
        func file(_ name: String) throws -> Data {
            let url = directory.appendingPathComponent(name)
            do { return try Data(contentsOf: url) } catch {
                throw InputError(path: name, expected: "a readable model file in \(directory.path)", got: "no such file")
            }
        }
        func named<T>(_ name: String, _ body: (Data) throws(InputError) -> T) throws -> T {
            do { return try body(try file(name)) } catch let e as InputError {
                var e = e
                e.path = e.path.isEmpty ? name : "\(name): \(e.path)"
                throw e
            }
        }
        return try Models(
            thresholds: named("thresholds.v2.json") { d throws(InputError) in try Thresholds.decode(d) },
            weights: named("weights.v2.json") { d throws(InputError) in try DefaultWeights.decode(d) },
            priors: named("priors.v1.json") { d throws(InputError) in try ColdStartPriors.decode(d) },
            ranker: named("ranker.v1.json") { d throws(InputError) in try RankerModel.decode(d) })
    }

    init(thresholds: Thresholds, weights: [Float], priors: ColdStartPriors, ranker: RankerModel) {
        config = EngineConfig(thresholds: thresholds, weights: weights)
        self.priors = priors
        self.ranker = ranker
    }
}
