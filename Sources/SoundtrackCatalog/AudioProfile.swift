/// A track's sound as eight numbers in 0…1, with a presence mask.
///
/// The dimensions, in order: tempo (BPM / 200, clamped), energy, valence, danceability,
/// acousticness, instrumentalness, speechiness, loudness ((dB + 60) / 60, clamped). A
/// missing feature has value 0 and mask 0. A tempo of 0 BPM (Spotify's "no beat found")
/// counts as missing.
///
/// ```swift
/// var p = AudioProfile(AudioFeatures(tempo: 150, energy: 0.85))
/// p.valence = 0.6          // normalised value, 0…1
/// p.danceability           // nil: missing
/// ```
public struct AudioProfile: Sendable, Equatable, Codable {
    /// Number of dimensions.
    public static let dimension = 8
    /// Dimension names, in index order (also the JSON keys).
    public static let names = [
        "tempo", "energy", "valence", "danceability", "acousticness", "instrumentalness", "speechiness", "loudness"
    ]
    /// The tempo that maps to 1.
    public static let maxTempo: Double = 200
    /// The loudness (dB) that maps to 0; 0 dB maps to 1.
    public static let minLoudness: Double = -60

    /// Normalised values in 0…1 (0 where missing).
    public private(set) var values: SIMD8<Float>
    /// 1 where the dimension is present, 0 where missing.
    public private(set) var mask: SIMD8<Float>

    /// An empty profile: every dimension missing.
    public init() {
        values = .zero
        mask = .zero
    }

    /// A profile from normalised values; values are clamped to 0…1 and zeroed where `mask` is 0.
    /// - Parameters:
    ///   - values: one value a dimension, in ``names`` order.
    ///   - mask: 1 for present dimensions, 0 for missing ones (all present by default).
    public init(values: SIMD8<Float>, mask: SIMD8<Float> = SIMD8(repeating: 1)) {
        let m = SIMD8<Float>.zero.replacing(with: 1, where: mask .> 0)
        let v = values.replacing(with: 0, where: .!(values .== values))  // NaN → 0
        self.values = v.clamped(lowerBound: .zero, upperBound: SIMD8(repeating: 1)) * m
        self.mask = m
    }

    /// The profile of a track's audio features (raw units, as in the catalog).
    public init(_ f: AudioFeatures) {
        self.init()
        if let x = f.tempo { setRaw(0, x) }
        if let x = f.energy { setRaw(1, x) }
        if let x = f.valence { setRaw(2, x) }
        if let x = f.danceability { setRaw(3, x) }
        if let x = f.acousticness { setRaw(4, x) }
        if let x = f.instrumentalness { setRaw(5, x) }
        if let x = f.speechiness { setRaw(6, x) }
        if let x = f.loudness { setRaw(7, x) }
    }

    /// The profile of audio features given as raw values, one a dimension in ``names`` order, the
    /// dimensions whose bit is set in `present` (bit `d` for dimension `d`): ``init(_:)`` of those
    /// features, without making them (a stored catalog index reads 20,000 rows at start-up). The
    /// values are set as the subscript sets them (clamped to 0…1, missing when not finite).
    init(raw values: UnsafeBufferPointer<Double>, present: UInt8) {
        @inline(__always) func dimension(_ d: Int) -> (value: Float, mask: Float) {
            guard present & (1 << UInt8(d)) != 0, let v = Self.normalised(d, values[d]), v.isFinite else { return (0, 0) }
            return (min(max(v, 0), 1), 1)
        }
        let (a, b, c, d) = (dimension(0), dimension(1), dimension(2), dimension(3))
        let (e, f, g, h) = (dimension(4), dimension(5), dimension(6), dimension(7))
        self.values = SIMD8(a.value, b.value, c.value, d.value, e.value, f.value, g.value, h.value)
        self.mask = SIMD8(a.mask, b.mask, c.mask, d.mask, e.mask, f.mask, g.mask, h.mask)
    }

    /// Sets dimension `d` from its raw value (``normalised(_:_:)``).
    private mutating func setRaw(_ d: Int, _ raw: Double) {
        if let v = Self.normalised(d, raw) { self[d] = v }
    }

    /// Dimension `d`'s raw value on the 0…1 scale before clamping: tempo in BPM over
    /// ``maxTempo`` (`nil` for 0, Spotify's "no beat found"), loudness in dB from ``minLoudness``
    /// to 0, the others as they are.
    @inline(__always)
    static func normalised(_ d: Int, _ raw: Double) -> Float? {
        switch d {
        case 0: raw > 0 ? Float(raw / maxTempo) : nil
        case 7: Float((raw - minLoudness) / -minLoudness)
        default: Float(raw)
        }
    }

    /// The normalised value of dimension `i` (0..<8), or `nil` when missing; setting clamps to 0…1.
    public subscript(i: Int) -> Float? {
        get { mask[i] > 0 ? values[i] : nil }
        set {
            if let v = newValue, v.isFinite {
                values[i] = min(max(v, 0), 1)
                mask[i] = 1
            } else {
                values[i] = 0
                mask[i] = 0
            }
        }
    }

    /// True when every dimension is missing.
    public var isEmpty: Bool { mask == .zero }
    /// How many dimensions are present.
    public var presentCount: Int { Int(mask.sum()) }

    /// Tempo / 200 BPM, clamped to 0…1.
    public var tempo: Float? {
        get { self[0] }
        set { self[0] = newValue }
    }
    /// Energy, 0…1.
    public var energy: Float? {
        get { self[1] }
        set { self[1] = newValue }
    }
    /// Valence, 0…1.
    public var valence: Float? {
        get { self[2] }
        set { self[2] = newValue }
    }
    /// Danceability, 0…1.
    public var danceability: Float? {
        get { self[3] }
        set { self[3] = newValue }
    }
    /// Acousticness, 0…1.
    public var acousticness: Float? {
        get { self[4] }
        set { self[4] = newValue }
    }
    /// Instrumentalness, 0…1.
    public var instrumentalness: Float? {
        get { self[5] }
        set { self[5] = newValue }
    }
    /// Speechiness, 0…1.
    public var speechiness: Float? {
        get { self[6] }
        set { self[6] = newValue }
    }
    /// (Loudness + 60 dB) / 60 dB, clamped to 0…1.
    public var loudness: Float? {
        get { self[7] }
        set { self[7] = newValue }
    }

    /// The profile back in raw units (tempo in BPM, loudness in dB); clamped values stay clamped.
    public var features: AudioFeatures {
        func d(_ i: Int) -> Double? { self[i].map(Double.init) }
        return AudioFeatures(
            tempo: d(0).map { $0 * Self.maxTempo }, energy: d(1), valence: d(2), danceability: d(3),
            acousticness: d(4), instrumentalness: d(5), speechiness: d(6),
            loudness: d(7).map { $0 * -Self.minLoudness + Self.minLoudness })
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Decodes an object of normalised values keyed by ``names``; absent keys are missing.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        self.init()
        for (i, name) in Self.names.enumerated() {
            if let v = try c.decodeIfPresent(Float.self, forKey: Key(stringValue: name)) { self[i] = v }
        }
    }

    /// Encodes the present dimensions as an object of normalised values keyed by ``names``.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        for (i, name) in Self.names.enumerated() {
            if let v = self[i] { try c.encode(v, forKey: Key(stringValue: name)) }
        }
    }
}
