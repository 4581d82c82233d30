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
