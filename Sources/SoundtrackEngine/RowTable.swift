/// A map from non-negative integer keys (catalog rows, genre numbers) to values, by open
/// addressing with a multiplicative hash.
///
/// The ranker looks up several hundred rows a pick (its candidates' own, collaborative and genre
/// evidence); `Dictionary` hashes every `Int` key with SipHash, which cost more than the rest of
/// the ranking. Keys are never removed.
struct RowTable<Value>: Sendable where Value: Sendable {
    private var keys: [Int]
    private var values: [Value?]
    private var mask: Int
    /// The number of keys.
    private(set) var count = 0

    /// An empty table sized for about `capacity` keys (it grows when needed).
    init(capacity: Int = 8) {
        var size = 16
        while size < 2 * capacity { size <<= 1 }
        keys = [Int](repeating: -1, count: size)
        values = [Value?](repeating: nil, count: size)
        mask = size - 1
    }

    @inline(__always)
    private func slot(_ key: Int) -> Int {
        // Fibonacci hashing: the high bits of key × 2^64/φ.
        Int(truncatingIfNeeded: (UInt64(bitPattern: Int64(key)) &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
    }

    /// The value of a key, `nil` when absent.
    subscript(key: Int) -> Value? {
        get {
            var i = slot(key)
            while true {
                let k = keys[i]
                if k == key { return values[i] }
                if k < 0 { return nil }
                i = (i + 1) & mask
            }
        }
        set {
            precondition(key >= 0, "RowTable keys are non-negative")
            guard let newValue else { preconditionFailure("RowTable keys are never removed") }
            var i = slot(key)
            while true {
                let k = keys[i]
                if k == key {
                    values[i] = newValue
                    return
                }
                if k < 0 { break }
                i = (i + 1) & mask
            }
            keys[i] = key
            values[i] = newValue
            count += 1
            if 2 * count > keys.count { grow() }
        }
    }

    private mutating func grow() {
        let old = (keys, values)
        self = RowTable(capacity: keys.count)
        for (k, v) in zip(old.0, old.1) where k >= 0 { self[k] = v }
    }

    /// Every key with its value, in no particular order.
    var pairs: [(key: Int, value: Value)] {
        zip(keys, values).compactMap { k, v in k >= 0 ? (k, v!) : nil }
    }
}
