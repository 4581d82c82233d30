import SoundtrackEngine

/// The blend a deployment learns from a log at `replay`'s end, as the evaluators reproduce it
/// (docs/scoring.md, "Learning the blend"): when ``BlendLearner/every`` queries or more came, a
/// blend fitted on the newest ``BlendLearner/keep`` and promoted only if it beats the engine's
/// on the newest fifth.
enum ReplayEndBlend {
    /// The engine that ranks with the promoted blend (else `engine` itself), and the attempt's
    /// decision (`nil` when too few queries came for one).
    static func learn(_ engine: Recommender, examples: [BlendExample]) -> (engine: Recommender, decision: BlendLearner.Decision?) {
        guard examples.count >= BlendLearner.every else { return (engine, nil) }
        let decision = BlendLearner().learn(Array(examples.suffix(BlendLearner.keep)), current: engine.ranker)
        guard decision.promoted, let model = decision.candidate else { return (engine, decision) }
        return (engine.with(ranker: model), decision)
    }
}
