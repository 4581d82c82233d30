import Foundation
import SoundtrackContext

/// Derives a readable label for a bin from its centroid (`study · library · morning`).
public enum BinLabeler {
    /// The label of a centroid whose slots were observed with the given frequencies.
    public static func label(centroid: [Float], observed: [Float]) -> String {
        func strongest(_ prefix: String, _ names: [String], excluding: Set<String> = []) -> String? {
            var best: (String, Float)?
            for n in names where !excluding.contains(n) {
                let i = FeatureLayout.require("\(prefix).\(n)")
                guard observed[i] >= 0.5, centroid[i] >= 0.5 else { continue }
                if best == nil || centroid[i] > best!.1 { best = (n, centroid[i]) }
            }
            return best?.0
        }
        var parts: [String] = []
        if let c = strongest("calendar", FeatureLayout.calendarCategories, excluding: ["other"]) { parts.append(c) }
        if let a = strongest("motion", FeatureLayout.activities, excluding: ["stationary", "unknown"]) {
            parts.append(a == "automotive" ? "driving" : a)
        }
        if let p = strongest("place", FeatureLayout.placeCategories, excluding: ["other"]) { parts.append(p) }
        if !parts.contains("driving"), strongest("bluetooth", ["car"]) != nil { parts.append("car") }
        if let w = strongest("weather", FeatureLayout.weatherGroups.map { "cond_\($0)" }, excluding: ["cond_clear", "cond_cloudy", "cond_other"]) {
            parts.append(w == "cond_wet" ? "rainy" : w == "cond_snow" ? "snowy" : "misty")
        }
        let s = centroid[FeatureLayout.require("time.tod_sin")]
        let c = centroid[FeatureLayout.require("time.tod_cos")]
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
        let weekend = centroid[FeatureLayout.require("time.weekend")] >= 0.5
        parts = Array(parts.prefix(3))
        parts.append(weekend ? "weekend \(bucket)" : bucket)
        return parts.joined(separator: " · ")
    }
}
