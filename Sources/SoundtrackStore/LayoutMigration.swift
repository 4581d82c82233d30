import SoundtrackContext

/// Moves stored vectors of feature layout v1 to the layout of this build, slot by slot by name
/// (docs/features.md; docs/architecture.md, "Persistence"): a slot that exists in both layouts keeps its value; the
/// hashed slots of v1 (`place.h0…h7`, `tags.h0…h15`) have no meaning in v2 (whose place and tag
/// slots each user's vocabulary assigns) and are dropped: a bin's centroid 0 and presence 0 there,
/// its spread the initial spread, a weight the default. New slots of v2 start the same way.
enum LayoutMigration {
    /// The slot names of layout v1, in index order (83 slots).
    static let v1Names: [String] = {
        var s: [String] = []
        func add(_ prefix: String, _ names: [String]) { s += names.map { "\(prefix).\($0)" } }
        add("time", ["tod_sin", "tod_cos", "dow_sin", "dow_cos", "weekend", "daylight"])
        add("movement", ["speed", "moving"])
        add("place", FeatureLayout.placeCategories)
        add("place", (0..<8).map { "h\($0)" })
        add("weather", ["temp", "wind", "clouds", "humidity", "precip"])
        add("weather", FeatureLayout.weatherGroups.map { "cond_\($0)" })
        add("calendar", FeatureLayout.calendarCategories + ["busy", "next_soon"])
        add("bluetooth", FeatureLayout.bluetoothKinds)
        add("motion", FeatureLayout.activities + ["cadence", "hr_zone", "steps_today"])
        add("audio", FeatureLayout.audioRoutes + ["volume"])
        add("tags", (0..<16).map { "h\($0)" })
        return s
    }()

    /// For each v1 index, the index of the slot of the same name in this build's layout (`nil`:
    /// the slot is dropped).
    static let v1ToCurrent: [Int?] = v1Names.map { FeatureLayout.index(of: $0) }

    /// A v1 vector in this build's layout; slots without a v1 source get `fill`. `nil` when the
    /// vector does not have the length of v1.
    static func fromV1(_ v: [Float], fill: Float) -> [Float]? {
        guard v.count == v1Names.count else { return nil }
        var out = [Float](repeating: fill, count: FeatureLayout.dimension)
        for (i, j) in v1ToCurrent.enumerated() {
            if let j { out[j] = v[i] }
        }
        return out
    }
}
