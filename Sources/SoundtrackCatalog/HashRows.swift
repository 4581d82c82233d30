/// Catalog rows by a 64-bit hash of the track id, by open addressing with a multiplicative hash:
/// the pick looks up a row for every song of a bin it ranks (up to 150), and `Dictionary` hashed
/// each key again with SipHash. Built once with the index; read-only after.
struct HashRows: Sendable {
    /// The hashes, at their slots; a slot is empty when its row is ``empty``.
    private var keys: [UInt64]
    /// The row of each slot: a row (≥ 0), ``shared`` for a hash of two or more ids, or ``empty``.
    private var rows: [Int32]
    private let mask: Int

    /// A hash two ids share (the ids are then looked up by string).
    static let shared: Int32 = -1
    private static let empty: Int32 = -2

    /// A table sized for `capacity` keys (at most half full).
    init(capacity: Int) {
        var size = 16
        while size < 2 * capacity { size <<= 1 }
        keys = [UInt64](repeating: 0, count: size)
        rows = [Int32](repeating: Self.empty, count: size)
        mask = size - 1
    }

    @inline(__always)
    private func slot(_ hash: UInt64) -> Int {
        // Fibonacci hashing: the high bits of hash × 2^64/φ.
        Int(truncatingIfNeeded: (hash &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
    }

    /// The row of `hash`: a row, ``shared``, or `nil` when no id has it.
    func row(_ hash: UInt64) -> Int32? {
        var i = slot(hash)
        while true {
            let r = rows[i]
            if r == Self.empty { return nil }
            if keys[i] == hash { return r }
            i = (i + 1) & mask
        }
    }

    /// Records that row `row` has hash `hash` (a second row with the same hash makes it ``shared``).
    mutating func insert(_ hash: UInt64, row: Int) {
        var i = slot(hash)
        while rows[i] != Self.empty {
            if keys[i] == hash {
                rows[i] = Self.shared
                return
            }
            i = (i + 1) & mask
        }
        keys[i] = hash
        rows[i] = Int32(row)
    }
}
