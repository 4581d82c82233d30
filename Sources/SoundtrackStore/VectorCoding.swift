import Foundation
import GRDB
import SoundtrackEngine

/// Float vectors as little-endian Float32 BLOBs.
enum VectorCoding {
    static func encode(_ v: [Float]) -> Data {
        var data = Data(count: v.count * 4)
        data.withUnsafeMutableBytes { raw in
            for (i, x) in v.enumerated() {
                raw.storeBytes(of: x.bitPattern.littleEndian, toByteOffset: i * 4, as: UInt32.self)
            }
        }
        return data
    }

    static func decode(_ data: Data) -> [Float] {
        data.withUnsafeBytes { decode($0) }
    }

    /// Decodes the bytes of a BLOB in place (for example a column of a statement being stepped).
    static func decode(_ raw: UnsafeRawBufferPointer) -> [Float] {
        let n = raw.count / 4
        #if _endian(little)
        // Little-endian host: the stored bytes are the floats' own bytes.
        return [Float](unsafeUninitializedCapacity: n) { buffer, count in
            if n > 0 { UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: raw.baseAddress!, byteCount: n * 4) }
            count = n
        }
        #else
        return (0..<n).map { i in Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))) }
        #endif
    }

    /// A presence mask as a BLOB: one bit a slot (slot `i` is bit `i % 8` of byte `i / 8`) when
    /// every entry is 0 or 1, as the mask of every extracted vector is (``FeatureVector``); any
    /// other mask as Float32s, like the other vectors. A pick's mask then takes 13 bytes instead of
    /// 400, which is 40 % of a pick's row: picks are the largest table and the one the service
    /// writes most.
    static func encode(mask: [Float]) -> [UInt8] {
        guard mask.allSatisfy({ $0 == 0 || $0 == 1 }) else {
            return [UInt8](encode(mask))
        }
        var out = [UInt8](repeating: 0, count: (mask.count + 7) / 8)
        for (i, m) in mask.enumerated() where m == 1 { out[i / 8] |= 1 << UInt8(i % 8) }
        return out
    }

    /// The mask of `count` slots from a BLOB of ``encode(mask:)`` (bits, or Float32s as masks were
    /// written before); `nil` when its length is neither `(count + 7) / 8` nor `4 * count` bytes.
    static func decode(mask raw: UnsafeRawBufferPointer, count: Int) -> [Float]? {
        if raw.count == 4 * count { return decode(raw) }
        guard raw.count == (count + 7) / 8 else { return nil }
        return (0..<count).map { i in raw[i / 8] & (1 << UInt8(i % 8)) != 0 ? 1 : 0 }
    }

    /// A pick's ranking as a BLOB: for each bin, its number (Int32) then its score (Float32),
    /// little-endian, 8 bytes a bin.
    static func encode(ranking: [RankedBin]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: ranking.count * 8)
        out.withUnsafeMutableBytes { raw in
            for (i, r) in ranking.enumerated() {
                raw.storeBytes(of: UInt32(bitPattern: Int32(clamping: r.bin)).littleEndian, toByteOffset: i * 8, as: UInt32.self)
                raw.storeBytes(of: r.score.bitPattern.littleEndian, toByteOffset: i * 8 + 4, as: UInt32.self)
            }
        }
        return out
    }

    /// The ranking of a BLOB written by ``encode(ranking:)``; a trailing partial entry is ignored.
    static func decodeRanking(_ raw: UnsafeRawBufferPointer) -> [RankedBin] {
        (0..<raw.count / 8).map { i in
            RankedBin(
                bin: Int(Int32(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: i * 8, as: UInt32.self)))),
                score: Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: i * 8 + 4, as: UInt32.self))))
        }
    }
}
