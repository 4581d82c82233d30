import Foundation
import SoundtrackContext

/// Derives a readable label for a bin from its centroid (`study · library · morning`).
public enum BinLabeler {
    /// The label of a centroid whose slots were observed with the given frequencies.
    public static func label(centroid: [Float], observed: [Float]) -> String {
        func strongest(_ slots: [(name: String, index: Int)]) -> String? {
            var best: (String, Float)?
            for (n, i) in slots {
                guard observed[i] >= 0.5, centroid[i] >= 0.5 else { continue }
                if best == nil || centroid[i] > best!.1 { best = (n, centroid[i]) }
            }
            return best?.0
        }
        var parts: [String] = []
        parts.reserveCapacity(4)
        if let c = strongest(Slots.calendar) { parts.append(c) }
        if let a = strongest(Slots.activity) { parts.append(a == "automotive" ? "driving" : a) }
        if let p = strongest(Slots.place) { parts.append(p) }
        if !parts.contains("driving"), strongest(Slots.car) != nil { parts.append("car") }
        if let w = strongest(Slots.weather) {
            parts.append(w == "cond_wet" ? "rainy" : w == "cond_snow" ? "snowy" : "misty")
        }
        let s = centroid[Slots.todSin]
        let c = centroid[Slots.todCos]
        var hour = Double(atan2(s, c)) / (2 * Double.pi) * 24
        if hour < 0 { hour += 24 }
        let bucket: String
        switch hour {
        case 5..<11: bucket = "morning"
        case 11..<14: bucket = "midday"
        case 14..<18: bucket = "afternoon"
        case 18..<22: bucket = "evening"
        default: bucket = "night"
        }
        let weekend = centroid[Slots.weekend] >= 0.5
        if parts.count > 3 { parts.removeLast(parts.count - 3) }
        parts.append(weekend ? "weekend \(bucket)" : bucket)
        return parts.joined(separator: " · ")
    }

    /// The slots each part of a label looks at, by name, resolved once.
    private enum Slots {
        static func named(_ prefix: String, _ names: [String], excluding: Set<String> = []) -> [(name: String, index: Int)] {
            names.filter { !excluding.contains($0) }.map { ($0, FeatureLayout.require("\(prefix).\($0)")) }
        }
        static let calendar = named("calendar", FeatureLayout.calendarCategories, excluding: ["other"])
        static let activity = named("motion", FeatureLayout.activities, excluding: ["stationary", "unknown"])
        static let place = named("place", FeatureLayout.placeCategories, excluding: ["other"])
        static let car = named("bluetooth", ["car"])
        static let weather = named(
            "weather", FeatureLayout.weatherGroups.map { "cond_\($0)" }, excluding: ["cond_clear", "cond_cloudy", "cond_other"])
        static let todSin = FeatureLayout.require("time.tod_sin")
        static let todCos = FeatureLayout.require("time.tod_cos")
        static let weekend = FeatureLayout.require("time.weekend")
    }
}
