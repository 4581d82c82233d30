import Foundation
import SoundtrackCatalog

/// The forms of the shared tables' columns (the catalog, the blends), as the SQLite store writes
/// and reads them, for a second store to hold the same values.
extension StoredForm {
    /// A track's genres as `songs.genres` holds them: joined by `;`.
    public static func genres(_ genres: [String]) -> String { genres.joined(separator: ";") }

    /// A track's genres from `songs.genres` (empty parts dropped).
    public static func genres(_ text: String) -> [String] { text.split(separator: ";").map(String.init) }

    /// A blend's weights as the JSON text of `ranker_blends.weights`: an object of every signal.
    public static func blendWeights(_ weights: [Float]) -> String { Store.weightsJSON(weights) }

    /// A blend's weights from the text of `ranker_blends.weights`.
    /// - Parameter version: the blend's version, for the error.
    /// - Throws: ``StoreError/corrupt(table:column:row:expected:)`` without a weight for every signal.
    public static func blendWeights(_ text: String, version: Int) throws -> [Float] { try Store.decodeWeights(text, version: version) }

    /// The `store_settings` names of the blend's bookkeeping: the version in use, and the newest
    /// query id when a blend was last fitted.
    public static let blendSettings = (inUse: Store.BlendSetting.inUse, lastAttempt: Store.BlendSetting.lastAttempt)
}
