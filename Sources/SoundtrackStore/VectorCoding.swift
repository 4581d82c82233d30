import Foundation

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
        let n = data.count / 4
        return data.withUnsafeBytes { raw in
            (0..<n).map { i in Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))) }
        }
    }
}
