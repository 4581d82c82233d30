import Foundation
import SoundtrackContext

/// Readable, distinct labels for a user's bins: when, then what sets the bin apart
/// (`weekday morning · walking · headphones`, `night · home · tag wifi wifi`).
///
/// A label starts with the time the bin lives in: the part of the day of its centroid's time of
/// day (early morning 5–8, morning 8–11, midday 11–14, afternoon 14–18, evening 18–22, night
/// 22–5) when the bin's times cluster (the mean of their unit vectors is at least 0.5 long), after
/// "weekday" or "weekend" when at least 80 % of its snapshots were on one or the other. Then come
/// the values the bin mostly has (at least 0.6 of its snapshots: an activity other than still or
/// unknown, a place, a Bluetooth device kind, an audio route, a calendar category, rain, snow or
/// mist, a tag), ordered by how much more this bin has them than the user's other bins, two of
/// them. When another bin of the user has the same label, more values are added until the labels
/// differ, and as a last resort the bin's number.
public enum BinLabeler {
    /// The label of `bins[binIndex]` among the user's bins.
    public static func label(binIndex: Int, bins: [Bin], vocabulary: FeatureVocabulary) -> String {
        precondition(bins.indices.contains(binIndex), "binIndex \(binIndex) is not a bin's index")
        // The bin's fields are read where they are: `bins[binIndex]` as a value copied the whole
        // bin (retaining its arrays and strings) at every label, and labels are made at every
        // feedback event and merge.
        let head = bins.withUnsafeBufferPointer { timePart(centroid: $0[binIndex].centroid, observed: $0[binIndex].observed) }
        let parts = valueParts(binIndex: binIndex, bins: bins, vocabulary: vocabulary)
        // A linear scan: a user has a few dozen bins at most, and hashing every label into a set
        // (Unicode-normalised) cost more than comparing them.
        func taken(_ label: String) -> Bool {
            bins.withUnsafeBufferPointer { bins in bins.indices.contains { $0 != binIndex && bins[$0].label == label } }
        }
        var count = min(2, parts.count)
        while true {
            let label = compose(head, parts[0..<count])
            if !taken(label) { return label }
            if count < parts.count {
                count += 1
                continue
            }
            return label + " · " + Bin.id(bins[binIndex].number)
        }
    }

    /// The time part and the value parts joined by " · " ("any time" when there are none): the
    /// string `([head] + parts).joined(separator: " · ")` makes, without the arrays.
    static func compose(_ head: String?, _ parts: ArraySlice<String>) -> String {
        guard head != nil || !parts.isEmpty else { return "any time" }
        var label = head ?? ""
        var first = head == nil
        for p in parts {
            if !first { label += " · " }
            label += p
            first = false
        }
        return label
    }

    /// The part of the day (and weekday or weekend), or `nil` when the bin's times are spread.
    static func timePart(centroid: [Float], observed: [Float]) -> String? {
        guard observed[Slots.todSin] >= 0.5 else { return nil }
        let s = centroid[Slots.todSin], c = centroid[Slots.todCos]
        var day: String? = nil
        if (s * s + c * c).squareRoot() >= 0.5 {
            var hour = Double(atan2(s, c)) / (2 * Double.pi) * 24
            if hour < 0 { hour += 24 }
            switch hour {
            case 5..<8: day = "early morning"
            case 8..<11: day = "morning"
            case 11..<14: day = "midday"
            case 14..<18: day = "afternoon"
            case 18..<22: day = "evening"
            default: day = "night"
            }
        }
        let weekend = centroid[Slots.weekend]
        let week = weekend >= 0.8 ? "weekend" : weekend <= 0.2 ? "weekday" : nil
        switch (week, day) {
        case let (w?, d?): return "\(w) \(d)"
        case let (w?, nil): return w
        case let (nil, d?): return d
        default: return nil
        }
    }

    /// The values the bin mostly has, most distinctive first.
    static func valueParts(binIndex: Int, bins: [Bin], vocabulary: FeatureVocabulary) -> [String] {
        let observed = bins[binIndex].observed, centroid = bins[binIndex].centroid
        // Each text once, the first slot (in layout order) to name it keeping it; the candidates
        // sorted by contrast (ties: the lower slot) as indices into the texts, so that the sort
        // moves no strings.
        var texts: [String] = []
        var candidates: [(contrast: Float, slot: Int, text: Int)] = []
        texts.reserveCapacity(8)
        candidates.reserveCapacity(8)
        // Through pointers: `bins[k].observed[i]` on the array retained the bin's arrays at every read.
        bins.withUnsafeBufferPointer { bins in
            for i in Slots.labelled where observed[i] >= 0.5 && centroid[i] >= 0.6 {
                guard let text = text(slot: i, vocabulary: vocabulary), !texts.contains(text) else { continue }
                var other: Float = 0, n: Float = 0
                for k in bins.indices where k != binIndex && bins[k].observed[i] >= 0.5 {
                    other += bins[k].centroid[i]
                    n += 1
                }
                let contrast = centroid[i] - (n > 0 ? other / n : 0)
                candidates.append((contrast, i, texts.count))
                texts.append(text)
            }
        }
        candidates.sort { ($0.contrast, $1.slot) > ($1.contrast, $0.slot) }
        return candidates.map { texts[$0.text] }
    }

    /// How a label names a value slot, or `nil` for a value not worth naming (still, unknown, other).
    static func text(slot i: Int, vocabulary: FeatureVocabulary) -> String? {
        switch FeatureLayout.slots[i].group {
        case .learnedPlace:
            let n = vocabulary.displayName(slot: i)
            return n.hasPrefix("place: ") ? String(n.dropFirst(7)) : n
        case .tags:
            guard let t = vocabulary.tag(at: i - Slots.tags) else { return nil }
            return "\(t.key) \(t.value)"
        default: return Slots.fixedText[i]
        }
    }

    /// How a label names a slot of the fixed layout (not a person's place or tag), from its name.
    static func fixedText(slot i: Int) -> String? {
        let name = FeatureLayout.slots[i].name
        let leaf = String(name.split(separator: ".", maxSplits: 1).last ?? "")
        switch FeatureLayout.slots[i].group {
        case .motion:
            switch leaf {
            case "automotive": return "driving"
            case "stationary", "unknown": return nil
            default: return leaf
            }
        case .place: return leaf == "other" ? nil : leaf
        case .bluetooth: return leaf == "other" ? nil : leaf == "car" ? "car" : leaf
        case .audio: return leaf == "other" ? nil : leaf
        case .calendar: return leaf == "other" ? nil : leaf
        case .weather:
            switch leaf {
            case "cond_wet": return "rainy"
            case "cond_snow": return "snowy"
            case "cond_murky": return "misty"
            default: return nil
            }
        default: return nil
        }
    }

    /// Slot indices, resolved once.
    enum Slots {
        static let todSin = FeatureLayout.require("time.tod_sin")
        static let todCos = FeatureLayout.require("time.tod_cos")
        static let weekend = FeatureLayout.require("time.weekend")
        static let tags = FeatureLayout.require("tags.t0")
        /// The slots a label may name, in layout order.
        static let labelled: [Int] = FeatureLayout.slots.indices.filter { ExplanationSlots.categorical[$0] }
        /// ``fixedText(slot:)`` of every slot, computed once (labels are made at every merge and feedback).
        static let fixedText: [String?] = FeatureLayout.slots.indices.map { BinLabeler.fixedText(slot: $0) }
    }
}
