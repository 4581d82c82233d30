import Foundation
import GRDB

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
}
