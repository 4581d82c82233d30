import Foundation
import SoundtrackEngine

/// How the stored community model and an event's context are laid out as BLOBs, little-endian:
/// rows as Int32s; co-occurrences as (row Int32, count Int32) by row; contexts as (attribute
/// UInt64, likes Int32) by attribute; every track's counts as (likes, events, likers, raters)
/// Int32s, one track after the other by row; an event's context attributes as UInt64s.
enum CommunityCoding {
    static func encode(rows: [Int]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(rows.count * 4)
        for r in rows { append(Int32(truncatingIfNeeded: r), to: &out) }
        return out
    }

    static func decode(rows data: Data) -> [Int] {
        data.withUnsafeBytes { raw in (0..<(raw.count / 4)).map { Int(int32(raw, $0 * 4)) } }
    }

    static func encode(co: [Int: Int32]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(co.count * 8)
        for (row, count) in co.sorted(by: { $0.key < $1.key }) {
            append(Int32(truncatingIfNeeded: row), to: &out)
            append(count, to: &out)
        }
        return out
    }

    static func encode(contexts: [UInt64: Int32]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(contexts.count * 12)
        for (attribute, likes) in contexts.sorted(by: { $0.key < $1.key }) {
            append(attribute, to: &out)
            append(likes, to: &out)
        }
        return out
    }

    /// A row's contexts as their attributes (ascending, as encoded) and like counts.
    static func decode(contexts data: Data) -> (attributes: [UInt64], likes: [Int32]) {
        data.withUnsafeBytes { raw in
            let n = raw.count / 12
            return ((0..<n).map { uint64(raw, $0 * 12) }, (0..<n).map { int32(raw, $0 * 12 + 8) })
        }
    }

    static func encode(stats: [Int: Community.Stats]) -> [UInt8] {
        let n = (stats.keys.max() ?? -1) + 1
        var out = [UInt8](repeating: 0, count: n * 16)
        out.withUnsafeMutableBytes { raw in
            for (row, s) in stats where row >= 0 {
                for (k, v) in [s.likes, s.events, s.likers, s.raters].enumerated() {
                    raw.storeBytes(of: v.littleEndian, toByteOffset: row * 16 + k * 4, as: Int32.self)
                }
            }
        }
        return out
    }

    static func decode(stats data: Data) -> [Int: Community.Stats] {
        data.withUnsafeBytes { raw in
            var out: [Int: Community.Stats] = [:]
            out.reserveCapacity(raw.count / 16)
            for row in 0..<(raw.count / 16) {
                let s = Community.Stats(
                    likes: int32(raw, row * 16), events: int32(raw, row * 16 + 4), likers: int32(raw, row * 16 + 8), raters: int32(raw, row * 16 + 12))
                if s != Community.Stats() { out[row] = s }
            }
            return out
        }
    }

    static func encode(attributes: [UInt64]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(attributes.count * 8)
        for a in attributes { append(a, to: &out) }
        return out
    }

    static func decode(attributes raw: UnsafeRawBufferPointer) -> [UInt64] {
        (0..<(raw.count / 8)).map { uint64(raw, $0 * 8) }
    }

    private static func append(_ v: Int32, to out: inout [UInt8]) {
        withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) }
    }

    private static func append(_ v: UInt64, to out: inout [UInt8]) {
        withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) }
    }

    private static func int32(_ raw: UnsafeRawBufferPointer, _ offset: Int) -> Int32 {
        Int32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int32.self))
    }

    private static func uint64(_ raw: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}
