import SoundtrackContext

extension LearnedPlace {
    /// The place as `soundtrack places list --json` prints it and the places routes answer it:
    /// `id` (`pl-1`), `name` (or `null`), `lat` and `lon` (the centre, at 0.001°) and `count`
    /// (the snapshots it took).
    public var json: JSONValue {
        .object([
            ("id", .string(id)), ("name", name.map(JSONValue.string) ?? .null), ("lat", .number(lat)), ("lon", .number(lon)),
            ("count", .number(Double(count)))
        ])
    }
}
