import SoundtrackContext

extension Recommender {
    /// Names one of a person's learned places (`nil` removes the name): labels and `why` say
    /// "place: home" instead of "place #1" from now on, and the person's bins are labelled again.
    /// - Throws: ``RuleError/unknownPlace(_:user:)`` when the person has no place with this id.
    public func namePlace(_ id: String, _ name: String?, state: inout UserState) throws(RuleError) {
        guard state.places.name(id, name) else { throw RuleError.unknownPlace(id, user: state.user) }
        state.vocabulary.placeNames = state.places.names
        state.changes.places = true
        for i in state.bins.indices { relabel(binIndex: i, state: &state) }
    }
}
