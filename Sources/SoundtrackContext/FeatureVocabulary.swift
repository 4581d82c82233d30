/// What a user's per-user feature slots stand for: the places and the `key=value` tags that the
/// `place.p0…p7` and `tags.t0…t31` slots of ``FeatureLayout`` hold for this user.
///
/// A slot is given to a place or a tag the first time one of the user's snapshots has it, in
/// order, and keeps it. Slots are per user, so one user's `tags.t3` may be `wifi=none` and
/// another's `noise=loud`; what a slot means is always told by the user's vocabulary, never by a
/// hash, so that explanations and labels can name it ("tag wifi = none", "place: home"). When
/// every slot of a kind is taken, a new place or tag value gets none: its section still says
/// which known values are absent (their slots are present with value 0).
///
/// ```swift
/// var vocabulary = FeatureVocabulary()
/// vocabulary.tagSlot(key: "wifi", value: "none", adding: true)   // 0
/// vocabulary.tagSlot(key: "WiFi", value: "None", adding: false)  // 0: keys and values are case-insensitive
/// vocabulary.displayName(slot: FeatureLayout.require("tags.t0"))  // "tag wifi = none"
/// ```
public struct FeatureVocabulary: Sendable, Equatable {
    /// The place keys in slot order: `label:<normalised label>` or a learned place's id (`pl-3`).
    public private(set) var places: [String]
    /// The tags in slot order, as lower-cased `key=value`.
    public private(set) var tags: [String]
    /// FNV-1a of each tag's lower-cased key, in slot order (which slots a present key makes present).
    private var tagKeyHashes: [UInt64]
    /// FNV-1a of each lower-cased `key=value`, in slot order.
    private var tagHashes: [UInt64]
    private var placeHashes: [UInt64]
    /// The names people gave their learned places, by place id (``PlaceBook/names``): what
    /// labels and `why` call them. Kept with the place book, not with the vocabulary.
    public var placeNames: [String: String] = [:]

    /// An empty vocabulary (a new user).
    public init() {
        self.init(places: [], tags: [])
    }

    /// A vocabulary with these entries, in slot order (as stored).
    ///
    /// - Parameters:
    ///   - places: place keys, at most ``FeatureLayout/learnedPlaceSlots``.
    ///   - tags: lower-cased `key=value` tags, at most ``FeatureLayout/tagSlots``.
    public init(places: [String], tags: [String]) {
        self.places = Array(places.prefix(FeatureLayout.learnedPlaceSlots))
        self.tags = Array(tags.prefix(FeatureLayout.tagSlots))
        placeHashes = self.places.map { StableHash.fnv1a($0) }
        tagHashes = self.tags.map { StableHash.fnv1a($0) }
        tagKeyHashes = self.tags.map { t in StableHash.fnv1a(String(t.prefix { $0 != "=" })) }
    }

    /// Vocabularies are equal when their entries are (the hashes derive from them; the place
    /// names belong to the place book).
    public static func == (a: FeatureVocabulary, b: FeatureVocabulary) -> Bool {
        a.places == b.places && a.tags == b.tags
    }

    /// The offset within `place.p*` of a place key, giving it the next free slot if `adding` and
    /// there is one.
    ///
    /// - Parameters:
    ///   - key: the place key (`label:library`, `pl-2`).
    ///   - adding: whether an unknown key takes a free slot.
    /// - Returns: the slot offset, or `nil` when the key has none.
    public mutating func placeSlot(_ key: String, adding: Bool) -> Int? {
        let h = StableHash.fnv1a(key)
        if let i = placeHashes.firstIndex(where: { $0 == h }), places[i] == key { return i }
        guard adding, places.count < FeatureLayout.learnedPlaceSlots else { return nil }
        places.append(key)
        placeHashes.append(h)
        return places.count - 1
    }

    /// The offset within `tags.t*` of a tag (key and value compared case-insensitively), giving it
    /// the next free slot if `adding` and there is one.
    ///
    /// - Parameters:
    ///   - key: the tag's name.
    ///   - value: the tag's value.
    ///   - adding: whether an unknown tag takes a free slot.
    /// - Returns: the slot offset, or `nil` when the tag has none.
    public mutating func tagSlot(key: String, value: String, adding: Bool) -> Int? {
        let keyHash = FeatureVocabulary.lowercasedHash(key, seed: StableHash.fnv1a(""))
        let pairHash = FeatureVocabulary.lowercasedHash(value, seed: FeatureVocabulary.lowercasedHash("=", seed: keyHash))
        for i in tagHashes.indices where tagHashes[i] == pairHash {
            if tags[i] == "\(key)=\(value)".lowercased() { return i }
        }
        guard adding, tags.count < FeatureLayout.tagSlots else { return nil }
        tags.append("\(key)=\(value)".lowercased())
        tagHashes.append(pairHash)
        tagKeyHashes.append(keyHash)
        return tags.count - 1
    }

    /// Calls `body` with the offset of every `tags.t*` slot whose tag has this key
    /// (case-insensitive): the slots a snapshot with the key makes present.
    public func forEachTagSlot(key: String, _ body: (Int) -> Void) {
        let keyHash = FeatureVocabulary.lowercasedHash(key, seed: StableHash.fnv1a(""))
        for i in tagKeyHashes.indices where tagKeyHashes[i] == keyHash { body(i) }
    }

    /// The tag key and value a `tags.t*` slot offset stands for, if it is taken.
    public func tag(at offset: Int) -> (key: String, value: String)? {
        guard offset >= 0, offset < tags.count else { return nil }
        let t = tags[offset]
        guard let eq = t.firstIndex(of: "=") else { return (t, "") }
        return (String(t[..<eq]), String(t[t.index(after: eq)...]))
    }

    /// What a slot means to a person, using this vocabulary for the per-user slots:
    /// "tag wifi = none", "place: home", "place #2" (a place learned from coordinates; "place: gym"
    /// once the person named it),
    /// "motion: walking", "time of day", "weekend", "bluetooth: car".
    public func displayName(slot: Int) -> String {
        switch FeatureLayout.slots[slot].group {
        case .tags:
            let offset = slot - Self.firstTagSlot
            if let t = tag(at: offset) { return "tag \(t.key) = \(t.value)" }
            return "tag (unused slot)"
        case .learnedPlace:
            let offset = slot - Self.firstPlaceSlot
            guard offset < places.count else { return "place (unused slot)" }
            let key = places[offset]
            if key.hasPrefix("label:") { return "place: \(key.dropFirst(6))" }
            if key.hasPrefix("pl-") { return placeNames[key].map { "place: \($0)" } ?? "place #\(key.dropFirst(3))" }
            return "place: \(key)"
        default:
            return Self.fixedNames[slot]
        }
    }

    /// What a slot with a snapshot's `value` means to a person: as ``displayName(slot:)``, but
    /// `time.weekend` at 0 reads "weekday".
    public func displayName(slot: Int, value: Float) -> String {
        slot == Self.weekendSlot && value < 0.5 ? "weekday" : displayName(slot: slot)
    }

    private static let weekendSlot = FeatureLayout.require("time.weekend")
    private static let firstTagSlot = FeatureLayout.require("tags.t0")
    private static let firstPlaceSlot = FeatureLayout.require("place.p0")
    /// The names of the slots that mean the same for every user, computed once.
    private static let fixedNames: [String] = FeatureLayout.slots.indices.map { FeatureVocabulary().fixedName(slot: $0) }

    private func fixedName(slot: Int) -> String {
        let s = FeatureLayout.slots[slot]
        let leaf = s.name.split(separator: ".", maxSplits: 1).last.map(String.init) ?? s.name
        switch s.group {
        case .tags:
            let offset = slot - FeatureLayout.require("tags.t0")
            if let t = tag(at: offset) { return "tag \(t.key) = \(t.value)" }
            return "tag (unused slot)"
        case .learnedPlace:
            let offset = slot - FeatureLayout.require("place.p0")
            guard offset < places.count else { return "place (unused slot)" }
            let key = places[offset]
            if key.hasPrefix("label:") { return "place: \(key.dropFirst(6))" }
            if key.hasPrefix("pl-") { return "place #\(key.dropFirst(3))" }
            return "place: \(key)"
        case .time:
            switch leaf {
            case "tod_sin", "tod_cos": return "time of day"
            case "dow_sin", "dow_cos": return "day of the week"
            default: return "weekend"
            }
        case .daylight: return "daylight"
        case .movement: return leaf == "speed" ? "speed" : "moving"
        case .location: return "location accuracy"
        case .place: return "place kind: \(leaf)"
        case .weather:
            if leaf.hasPrefix("cond_") { return "weather: \(leaf.dropFirst(5))" }
            return leaf == "temp" ? "temperature" : leaf == "precip" ? "precipitation" : leaf
        case .calendar:
            switch leaf {
            case "busy": return "calendar: busy"
            case "next_soon": return "calendar: next event soon"
            default: return "calendar: \(leaf)"
            }
        case .bluetooth: return "bluetooth: \(leaf)"
        case .motion:
            switch leaf {
            case "cadence": return "step cadence"
            case "hr_zone": return "heart rate"
            case "steps_today": return "steps today"
            default: return "motion: \(leaf == "automotive" ? "driving" : leaf)"
            }
        case .audio: return leaf == "volume" ? "volume" : "audio: \(leaf)"
        }
    }

    /// FNV-1a of the lower-cased text continuing from `seed` (ASCII lower-cased byte by byte, other
    /// text through `lowercased()`), equal to hashing the lower-cased string.
    static func lowercasedHash(_ s: String, seed: UInt64) -> UInt64 {
        var h = seed
        for var b in s.utf8 {
            guard b < 0x80 else { return StableHash.fnv1a(s.lowercased(), seed: seed) }
            if b >= 0x41, b <= 0x5A { b += 0x20 }
            h ^= UInt64(b)
            h = h &* 0x100_0000_01b3
        }
        return h
    }
}
