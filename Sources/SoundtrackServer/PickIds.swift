import Foundation
import SoundtrackContext
import Synchronization

/// The pick ids the service hands out: `p-` and 16 hex digits, like the engine's, but increasing
/// in the order the picks are made: the wall clock's milliseconds since 1970 times 4,096, plus a
/// counter within the millisecond (ids run ahead of the clock beyond 4,096 picks in a millisecond).
///
/// The engine's own ids (``Recommender/pickId(seed:user:counter:)``) are hashes, stable across
/// runs but spread over the whole key space, so each committed pick wrote into a random page of
/// the index on `picks.id`: with thousands of picks a commit, the committer rewrote thousands of
/// index pages a second. Increasing ids all go to the same end of the index.
///
/// Ids never repeat: each is greater than the last one handed out and than the greatest id of
/// this form already in the database (given to ``init(after:now:)``), even when the wall clock
/// steps back.
final class PickIds: Sendable {
    /// Values of this form are below 2^56: their first two hex digits are `00` (until the year 2527).
    static let limit: UInt64 = 1 << 56

    private let last: Mutex<UInt64>
    private let now: @Sendable () -> Date

    /// Starts after `start` (the value of the greatest id of this form in the database, 0 for none).
    init(after start: UInt64, now: @escaping @Sendable () -> Date) {
        last = Mutex(start)
        self.now = now
    }

    /// The next id.
    func next() -> String {
        let ms = max(0, now().timeIntervalSince1970 * 1000)
        let clock = UInt64(min(ms, Double(Self.limit >> 12) - 1)) << 12
        let value = last.withLock { last in
            last = max(last &+ 1, clock)
            return last
        }
        return Self.format(value)
    }

    /// `p-` and the value as 16 hex digits (``StableHash/hex(_:)``, as the engine's ids).
    static func format(_ value: UInt64) -> String {
        StableHash.hex(value, prefix: "p-")
    }

    /// The value of an id of this form (`p-00` and 14 lowercase hex digits), or `nil`.
    static func value(of id: String) -> UInt64? {
        let u = Array(id.utf8)
        guard u.count == 18, u[0] == UInt8(ascii: "p"), u[1] == UInt8(ascii: "-") else { return nil }
        var v: UInt64 = 0
        for c in u[2...] {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = v << 4 | UInt64(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = v << 4 | UInt64(c - UInt8(ascii: "a") + 10)
            default: return nil
            }
        }
        return v < limit ? v : nil
    }

    /// The first and the bound of the ids of this form, as strings: every such id `x` has `lower <= x < upper`.
    static let range = (lower: "p-00", upper: "p-01")
}
