#if canImport(Glibc)
import Glibc
#endif

/// A growable run of bytes: the blocks of input that batch and replay read, and the output of
/// the hand-written encoders (picks, JSON Lines). Named apart from NIO's `ByteBuffer`, which the
/// HTTP service also uses.
///
/// Appends store through a raw pointer into reserved capacity, without the per-call uniqueness
/// and capacity checks of `[UInt8].append`; an encoder reserves an upper bound once and then
/// appends freely. The buffer keeps its capacity across ``removeAll()``, so a worker that
/// encodes block after block allocates only while its largest block grows.
///
/// ```swift
/// let out = ByteArena()
/// out.append("{\"id\":")
/// out.appendJSONString("b-12")
/// out.append(UInt8(ascii: "}"))
/// out.withUnsafeBytes { print(String(decoding: $0, as: UTF8.self)) }  // {"id":"b-12"}
/// ```
public final class ByteArena: @unchecked Sendable {
    @usableFromInline @exclusivity(unchecked) var base: UnsafeMutablePointer<UInt8>
    @usableFromInline @exclusivity(unchecked) var capacity: Int
    @usableFromInline @exclusivity(unchecked) var used: Int
    /// Bytes written.
    public var count: Int { used }
    /// Bytes it holds room for without growing.
    public var reserved: Int { capacity }

    /// An empty buffer with room for `capacity` bytes.
    public init(capacity: Int = 1 << 16) {
        self.capacity = max(16, capacity)
        base = Self.allocate(self.capacity)
        used = 0
    }

    deinit { free(base) }

    /// Capacities from which the memory is asked to be backed by 2 MiB pages.
    static let hugeFrom = 4 << 20

    /// `malloc`, or for large buffers (a batch worker's output: tens of MB per block) memory
    /// aligned to 2 MiB and marked for transparent huge pages, so that filling it takes one page
    /// fault per 2 MiB instead of one per 4 KiB (the kernel also zeroes the pages in larger pieces).
    @usableFromInline
    static func allocate(_ bytes: Int) -> UnsafeMutablePointer<UInt8> {
        var raw: UnsafeMutableRawPointer?
        #if os(Linux)
        if bytes >= hugeFrom, posix_memalign(&raw, 2 << 20, bytes) == 0, let raw {
            _ = madvise(raw, bytes, MADV_HUGEPAGE)
            return raw.assumingMemoryBound(to: UInt8.self)
        }
        #endif
        raw = malloc(bytes)
        guard let raw else { fatalError("ByteArena: out of memory (\(bytes) bytes)") }
        return raw.assumingMemoryBound(to: UInt8.self)
    }

    /// Makes room for at least `n` more bytes.
    @inlinable
    public func reserve(_ n: Int) {
        if used + n > capacity { grow(used + n) }
    }

    @usableFromInline
    func grow(_ needed: Int) {
        var c = capacity
        while c < needed { c *= 2 }
        let p = Self.allocate(c)
        p.update(from: base, count: used)
        free(base)
        base = p
        capacity = c
    }

    /// Appends one byte.
    @inlinable
    public func append(_ byte: UInt8) {
        if used == capacity { grow(used + 1) }
        base[used] = byte
        used += 1
    }

    /// Appends bytes.
    @inlinable
    public func append(_ bytes: UnsafeRawBufferPointer) {
        let n = bytes.count
        guard n > 0 else { return }
        if used + n > capacity { grow(used + n) }
        UnsafeMutableRawPointer(base + used).copyMemory(from: bytes.baseAddress!, byteCount: n)
        used += n
    }

    /// Appends a literal.
    @inlinable
    public func append(_ s: StaticString) {
        append(UnsafeRawBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    /// Appends the bytes of an array.
    public func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// Forgets the contents, keeping the capacity.
    public func removeAll() { used = 0 }

    /// Keeps the first `count` bytes and forgets the rest.
    public func truncate(to count: Int) {
        precondition(count >= 0 && count <= used)
        used = count
    }

    /// Lets `body` write into the space after the contents (at most `limit` bytes, the space
    /// reserved first) and appends the bytes it reports having written: a reader fills the
    /// buffer straight from its source.
    /// - Returns: what `body` returned.
    public func appendWriting(upTo limit: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> Int) rethrows -> Int {
        reserve(limit)
        let n = try body(UnsafeMutableRawBufferPointer(start: base + used, count: limit))
        precondition(n >= 0 && n <= limit, "wrote more than it was given")
        used += n
        return n
    }

    /// The bytes written so far.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: used))
    }

    /// The bytes in `range` (valid until the next append or ``removeAll()``).
    public func bytes(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        precondition(range.lowerBound >= 0 && range.upperBound <= used)
        return UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count)
    }

    /// A copy of the bytes written so far.
    public var array: [UInt8] { withUnsafeBytes { Array($0) } }
}

extension ByteArena {
    /// Appends a JSON string literal, quoted and escaped exactly as ``JSONValue/writeString(_:into:)`` does.
    public func appendJSONString(_ s: String) {
        // A span borrows the string's bytes without retaining it; `utf8.withContiguousStorageIfAvailable`
        // retained and released it twice a call (4 % of a batch pick's CPU, the pick's strings).
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *), s.isContiguousUTF8 {
            s.utf8Span.span.withUnsafeBytes { appendJSONString(utf8: $0) }
            return
        }
        if let done: Void = s.utf8.withContiguousStorageIfAvailable({ appendJSONString(utf8: UnsafeRawBufferPointer($0)) }) {
            return done
        }
        let bytes = Array(s.utf8)
        bytes.withUnsafeBytes { appendJSONString(utf8: $0) }
    }

    /// Appends UTF-8 text as a JSON string literal.
    public func appendJSONString(utf8: UnsafeRawBufferPointer) {
        // Worst case: every byte becomes \u00XX; reserve it once and store through the pointer.
        let n = utf8.count
        reserve(n * 6 + 2)
        var p = base + used
        p.pointee = UInt8(ascii: "\"")
        p += 1
        guard n > 0 else {
            p.pointee = UInt8(ascii: "\"")
            used = p + 1 - base
            return
        }
        let src = utf8.baseAddress!
        var i = 0
        // Eight bytes at a time while none of them needs escaping (SWAR: a byte below 0x20, a
        // quote or a backslash sets its high bit in `special`); the rest byte by byte.
        while i + 8 <= n {
            let w = src.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            let ones: UInt64 = 0x0101_0101_0101_0101, high: UInt64 = 0x8080_8080_8080_8080
            let control = (w &- ones &* 0x20) & ~w & high
            let q = w ^ (ones &* 0x22), bs = w ^ (ones &* 0x5C)
            let quote = (q &- ones) & ~q & high
            let backslash = (bs &- ones) & ~bs & high
            if control | quote | backslash != 0 { break }
            UnsafeMutableRawPointer(p).storeBytes(of: w, as: UInt64.self)
            p += 8
            i += 8
        }
        while i < n {
            let b = src.load(fromByteOffset: i, as: UInt8.self)
            i += 1
            if b >= 0x20 && b != UInt8(ascii: "\"") && b != UInt8(ascii: "\\") {
                p.pointee = b
                p += 1
                continue
            }
            p.pointee = UInt8(ascii: "\\")
            p += 1
            switch b {
            case 0x0A: p.pointee = UInt8(ascii: "n")
            case 0x0D: p.pointee = UInt8(ascii: "r")
            case 0x09: p.pointee = UInt8(ascii: "t")
            case 0x08: p.pointee = UInt8(ascii: "b")
            case 0x0C: p.pointee = UInt8(ascii: "f")
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): p.pointee = b
            default:
                let hex: StaticString = "0123456789abcdef"
                p[0] = UInt8(ascii: "u")
                p[1] = UInt8(ascii: "0")
                p[2] = UInt8(ascii: "0")
                p[3] = hex.utf8Start[Int(b >> 4)]
                p[4] = hex.utf8Start[Int(b & 0xF)]
                p += 4
            }
            p += 1
        }
        p.pointee = UInt8(ascii: "\"")
        p += 1
        used = p - base
    }

    /// Appends `x` rounded to three decimals, the bytes that
    /// `JSONValue.writeNumber((Double(x) * 1000).rounded() / 1000, into:)` writes, without
    /// formatting a double: a multiple of 1/1000 below 10^15 in magnitude prints as its decimal
    /// digits with trailing zeros dropped, the shortest text that reads back to the same double.
    public func appendMilli(_ x: Float) {
        let scaled = (Double(x) * 1000).rounded()
        guard scaled.isFinite, abs(scaled) < 1e15 else {
            var tmp: [UInt8] = []
            JSONValue.writeNumber(scaled / 1000, into: &tmp)
            append(tmp)
            return
        }
        reserve(24)
        var k = Int64(scaled)
        if k < 0 {
            append(UInt8(ascii: "-"))
            k = -k
        }
        appendDigits(UInt64(k / 1000))
        var frac = Int(k % 1000)
        guard frac > 0 else { return }
        append(UInt8(ascii: "."))
        var width = 3
        while frac % 10 == 0 {
            frac /= 10
            width -= 1
        }
        appendDigits(UInt64(frac), width: width)
    }

    /// Appends the decimal digits of `v`, zero-padded to `width`.
    public func appendDigits(_ v: UInt64, width: Int = 1) {
        reserve(max(width, 20))
        var digits = 0
        var t = v
        repeat {
            digits += 1
            t /= 10
        } while t > 0
        let n = max(digits, width)
        var p = base + used + n
        t = v
        for _ in 0..<n {
            p -= 1
            p.pointee = UInt8(truncatingIfNeeded: t % 10) &+ UInt8(ascii: "0")
            t /= 10
        }
        used += n
    }

    /// Appends a timestamp as a JSON string, the text of ``Timestamp/rfc3339``.
    public func appendRFC3339String(_ t: Timestamp) {
        append(UInt8(ascii: "\""))
        t.writeRFC3339 { self.append($0) }
        append(UInt8(ascii: "\""))
    }
}
