import Foundation
import SoundtrackContext
import SoundtrackEngine
import SoundtrackStore

extension LiveRecommender {
    /// Issues a person a round drawn from the state the service holds (current with every event it
    /// answered), stored with its right answers (``Store/issueQuiz(user:draw:)``).
    /// - Throws: ``RuleError/unknownUser(_:)``, ``RuleError/tooLittleHistory(user:likedSongs:bins:)``;
    ///   database errors.
    public func issueQuiz(user: String, at: Date) throws -> Quiz {
        let state = try state(user: user)
        let seed = rules.engine.seed
        return try store.issueQuiz(user: user) { number, catalog in
            try Quiz.draw(number: number, state: state, catalog: catalog, seed: seed, at: at)
        }
    }
}
