/// The fixed, versioned layout of a ``FeatureVector``: one named slot per index.
///
/// The layout is a contract between feature extraction, the stored bins (whose vectors
/// carry the layout version) and the cold-start priors (which name slots). Slots are
/// appended or the version changes; existing indices never move within a version.
/// docs/features.md documents every slot.
public enum FeatureLayout {
    /// The version stored next to every persisted vector.
    ///
    /// Version 2 (this one) replaced the hashed slots of v1 (`place.h0…h7`, `tags.h0…h15`) with
    /// slots that each user's ``FeatureVocabulary`` assigns to one place or one `key=value` tag on
    /// first sight, and added `location.accuracy`.
    public static let version: Int = 2

    /// The groups that slots belong to; a group is what a snapshot section turns into.
    public enum Group: String, Sendable, CaseIterable {
        case time, daylight, movement, location, place, learnedPlace = "place_learned", weather, calendar,
            bluetooth, motion, audio, tags
    }

    /// Place categories that an app's `location.place` label maps to.
    public static let placeCategories = ["home", "work", "school", "library", "gym", "cafe", "outdoors", "shop", "transit", "other"]
    /// Number of slots for individual places (labelled or learned from coordinates), assigned
    /// per user by ``FeatureVocabulary``.
    public static let learnedPlaceSlots = 8
    /// Weather condition groups (the conditions of docs/formats.md folded into six).
    public static let weatherGroups = ["clear", "cloudy", "wet", "snow", "murky", "other"]
    /// Calendar event categories.
    public static let calendarCategories = ["workout", "study", "work", "social", "travel", "rest", "other"]
    /// Bluetooth device kinds.
    public static let bluetoothKinds = ["car", "headphones", "speaker", "watch", "other"]
    /// Core Motion activity classes.
    public static let activities = ["stationary", "walking", "running", "cycling", "automotive", "unknown"]
    /// Audio routes.
    public static let audioRoutes = ["speaker", "headphones", "bluetooth", "car", "airplay", "other"]
    /// Number of slots for free-form tags, one per `key=value` pair, assigned per user by
    /// ``FeatureVocabulary``.
    public static let tagSlots = 32

    /// A named slot.
    public struct Slot: Sendable, Hashable {
        /// Dotted name, for example `calendar.study`; used in `why` and in the priors.
        public let name: String
        /// The group the slot belongs to.
        public let group: Group
    }

    /// All slots in index order.
    public static let slots: [Slot] = {
        var s: [Slot] = []
        func add(_ g: Group, _ names: [String], prefix: String) {
            for n in names { s.append(Slot(name: "\(prefix).\(n)", group: g)) }
        }
        add(.time, ["tod_sin", "tod_cos", "dow_sin", "dow_cos", "weekend"], prefix: "time")
        add(.daylight, ["daylight"], prefix: "time")
        add(.movement, ["speed", "moving"], prefix: "movement")
        add(.location, ["accuracy"], prefix: "location")
        add(.place, placeCategories, prefix: "place")
        add(.learnedPlace, (0..<learnedPlaceSlots).map { "p\($0)" }, prefix: "place")
        add(.weather, ["temp", "wind", "clouds", "humidity", "precip"], prefix: "weather")
        add(.weather, weatherGroups.map { "cond_\($0)" }, prefix: "weather")
        add(.calendar, calendarCategories, prefix: "calendar")
        add(.calendar, ["busy", "next_soon"], prefix: "calendar")
        add(.bluetooth, bluetoothKinds, prefix: "bluetooth")
        add(.motion, activities, prefix: "motion")
        add(.motion, ["cadence", "hr_zone", "steps_today"], prefix: "motion")
        add(.audio, audioRoutes, prefix: "audio")
        add(.audio, ["volume"], prefix: "audio")
        add(.tags, (0..<tagSlots).map { "t\($0)" }, prefix: "tags")
        return s
    }()

    /// Number of slots.
    public static let dimension: Int = slots.count

    private static let indexByName: [String: Int] = {
        var d: [String: Int] = [:]
        for (i, s) in slots.enumerated() { d[s.name] = i }
        return d
    }()

    /// The index of a slot by its dotted name, or `nil` if there is no such slot.
    public static func index(of name: String) -> Int? { indexByName[name] }

    /// The slot of the playback volume the phone reports (`audio.volume`), which the engine's
    /// volume suggestion reads and a like sets.
    public static let volumeSlot = require("audio.volume")

    /// The index of a slot that is known to exist (a programming error otherwise).
    public static func require(_ name: String) -> Int {
        guard let i = indexByName[name] else { preconditionFailure("no feature slot named \(name)") }
        return i
    }
}

/// A snapshot turned into numbers: one value per ``FeatureLayout`` slot and a presence mask.
///
/// `mask[i]` is 1 when slot `i` was derived from data present in the snapshot, 0 when
/// the section or field was missing. A missing slot has value 0 and must not count as
/// evidence: scoring multiplies every weight by the mask.
public struct FeatureVector: Sendable, Equatable {
    /// Slot values, normalised to roughly [-1, 1].
    public var values: [Float]
    /// 1 where the slot is present, 0 where it is missing.
    public var mask: [Float]

    /// An all-missing vector of the current layout.
    public init() {
        values = [Float](repeating: 0, count: FeatureLayout.dimension)
        mask = [Float](repeating: 0, count: FeatureLayout.dimension)
    }

    /// A vector from explicit values and mask (both of ``FeatureLayout/dimension`` length).
    public init(values: [Float], mask: [Float]) {
        precondition(values.count == FeatureLayout.dimension && mask.count == FeatureLayout.dimension)
        self.values = values
        self.mask = mask
    }

    /// Sets a slot's value and marks it present.
    public mutating func set(_ index: Int, _ value: Float) {
        values[index] = value
        mask[index] = 1
    }

    /// Sets a slot by name (see ``FeatureLayout/slots``) and marks it present.
    public mutating func set(_ name: String, _ value: Float) {
        set(FeatureLayout.require(name), value)
    }

    /// The value of a slot by name, or `nil` when it is missing.
    public func value(_ name: String) -> Float? {
        let i = FeatureLayout.require(name)
        return mask[i] > 0 ? values[i] : nil
    }
}

/// A stable 64-bit FNV-1a hash: the same on every run and platform (unlike `Hasher`).
public enum StableHash {
    /// Hashes the UTF-8 bytes of a string.
    public static func fnv1a(_ s: String, seed: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
        if let h = s.utf8.withContiguousStorageIfAvailable({ fnv1a(bytes: UnsafeRawBufferPointer($0), seed: seed) }) {
            return h
        }
        var h = seed
        for b in s.utf8 {
            h ^= UInt64(b)
            h = h &* 0x100_0000_01b3
        }
        return h
    }

    /// Hashes bytes (the same value as ``fnv1a(_:seed:)`` of the string they encode).
    @inlinable
    public static func fnv1a(bytes: UnsafeRawBufferPointer, seed: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
        var h = seed
        for b in bytes {
            h ^= UInt64(b)
            h = h &* 0x100_0000_01b3
        }
        return h
    }

    /// A 64-bit value as 16 lowercase hex digits, zero-padded (how pick and event ids spell hashes).
    public static func hex(_ x: UInt64) -> String { hex(x, prefix: "") }

    /// `prefix` followed by ``hex(_:)`` of `x`, written straight into the string's storage (one
    /// allocation, where `prefix + hex(x)` makes three: a pick id per pick).
    public static func hex(_ x: UInt64, prefix: StaticString) -> String {
        let p = prefix.utf8CodeUnitCount
        return String(unsafeUninitializedCapacity: p + 16) { out in
            for i in 0..<p { out[i] = prefix.utf8Start[i] }
            var v = x
            for i in stride(from: p + 15, through: p, by: -1) {
                let d = UInt8(v & 15)
                out[i] = d < 10 ? UInt8(ascii: "0") + d : UInt8(ascii: "a") + d - 10
                v >>= 4
            }
            return p + 16
        }
    }

    /// Mixes a 64-bit value (SplitMix64 finaliser).
    public static func mix(_ x: UInt64) -> UInt64 {
        var z = x &+ 0x9e37_79b9_7f4a_7c15
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
