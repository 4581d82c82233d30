import Foundation
import SoundtrackContext
import SoundtrackEngine
import SoundtrackStore

extension LiveRecommender {
    /// Issues a person a round drawn from the state the service holds (current with every event it
    /// answered), stored with its right answers (``Store/issueQuiz(user:state:seed:at:)``).
    /// - Throws: ``RuleError/unknownUser(_:)``, ``RuleError/tooLittleHistory(user:likedSongs:bins:)``;
    ///   database errors.
    public func issueQuiz(user: String, at: Date) throws -> Quiz {
        try store.issueQuiz(user: user, state: state(user: user), seed: rules.engine.seed, at: at)
    }
}
