/// Strings kept as one UTF-8 buffer and their end offsets: a table of many short strings in two
/// allocations, read back with a copy each.
struct StringTable: Sendable {
    let bytes: [UInt8]
    /// The end of string `i` in ``bytes`` (its start is the end of string `i - 1`, or 0).
    let ends: [Int32]

    init(_ strings: [String]) {
        var bytes: [UInt8] = [], ends: [Int32] = []
        ends.reserveCapacity(strings.count)
        for s in strings {
            bytes += s.utf8
            ends.append(Int32(bytes.count))
        }
        self.bytes = bytes
        self.ends = ends
    }

    init(bytes: [UInt8], ends: [Int32]) {
        self.bytes = bytes
        self.ends = ends
    }

    var count: Int { ends.count }

    subscript(i: Int) -> String {
        let start = i == 0 ? 0 : Int(ends[i - 1])
        return bytes.withUnsafeBufferPointer { String(decoding: $0[start..<Int(ends[i])], as: UTF8.self) }
    }

    /// Whether the ends are in order and within the bytes.
    var isConsistent: Bool {
        var previous: Int32 = 0
        for e in ends {
            if e < previous { return false }
            previous = e
        }
        return Int(previous) <= bytes.count
    }
}

/// Appends values and arrays of fixed-size values as their bytes (the machine's byte order; the
/// stored form is read back on the machine that wrote it or one like it), each array after its count.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    mutating func value<T: BitwiseCopyable>(_ v: T) {
        withUnsafeBytes(of: v) { bytes += $0 }
    }

    mutating func array<T: BitwiseCopyable>(_ a: [T]) {
        value(UInt64(a.count))
        a.withUnsafeBytes { bytes += $0 }
    }

    mutating func strings(_ s: [String]) {
        let table = StringTable(s)
        array(table.bytes)
        array(table.ends)
    }
}

/// Reads what ``ByteWriter`` wrote, in the same order.
struct ByteReader {
    /// Borrowed: valid only while the caller that lent it runs.
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func value<T: BitwiseCopyable>(_: T.Type) throws(CatalogIndex.StoredFormError) -> T {
        let size = MemoryLayout<T>.size
        guard bytes.count - offset >= size else { throw .truncated }
        let v = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += size
        return v
    }

    mutating func array<T: BitwiseCopyable>(_: T.Type) throws(CatalogIndex.StoredFormError) -> [T] {
        let count = try value(UInt64.self)
        let stride = MemoryLayout<T>.stride
        guard count <= UInt64(bytes.count - offset) / UInt64(max(stride, 1)) else { throw .truncated }
        let n = Int(count)
        let out = [T](unsafeUninitializedCapacity: n) { buffer, initialized in
            UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + n * stride]))
            initialized = n
        }
        offset += n * stride
        return out
    }

    mutating func stringTable() throws(CatalogIndex.StoredFormError) -> StringTable {
        let table = StringTable(bytes: try array(UInt8.self), ends: try array(Int32.self))
        guard table.isConsistent else { throw .truncated }
        return table
    }

    mutating func strings() throws(CatalogIndex.StoredFormError) -> [String] {
        let table = try stringTable()
        return (0..<table.count).map { table[$0] }
    }
}
