import Foundation
import SoundtrackContext
import SoundtrackEngine
import SoundtrackStore

/// The music quiz through the CLI's path (docs/scoring.md, "Quiz").
extension SoundtrackService {
    /// Issues a person a round drawn from their current state (their stored state brought up to
    /// date with their feedback), stored with its right answers (``Store/issueQuiz(user:state:seed:at:)``).
    /// - Parameter at: the time of issue (the caller's clock).
    /// - Throws: ``RuleError/unknownUser(_:)``, ``RuleError/tooLittleHistory(user:likedSongs:bins:)``;
    ///   database errors.
    public func issueQuiz(user: String, at: Date) throws -> Quiz {
        try store.issueQuiz(user: user, state: state(user: user), seed: engine.seed, at: at)
    }

    /// Answers a person's round once (``Store/answerQuiz(user:quiz:choices:seconds:at:)``).
    /// - Parameters:
    ///   - seconds: the seconds each answer took as the caller's clock measured them, question by
    ///     question; `nil`: the time since the round was issued, shared evenly.
    ///   - at: the time of the answers (the caller's clock).
    /// - Throws: ``RuleError/unknownUser(_:)``, ``RuleError/unknownQuiz(_:user:)``,
    ///   ``RuleError/quizAnswered(_:)``, ``InputError`` (`answers`); database errors.
    public func answerQuiz(user: String, quiz: String, choices: [Int], seconds: [Double]? = nil, at: Date) throws -> Quiz.Outcome {
        try store.answerQuiz(user: user, quiz: quiz, choices: choices, seconds: seconds, at: at)
    }
}
