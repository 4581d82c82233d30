import Foundation

/// Splits a stream of byte chunks into blocks of whole JSON Lines records, numbering the lines.
///
/// Blank lines count in the numbering but are not records. A block holds whole lines only; the
/// part of a chunk after its last newline waits for the next chunk (or the end of input).
public struct LineBlocks {
    /// A block: its bytes and its records.
    public struct Block {
        /// The bytes of the block's lines.
        public var bytes: [UInt8]
        /// Each record's byte range in ``bytes`` and its 1-based line number.
        public var lines: [(start: Int, end: Int, line: Int)]
        /// Bytes of input consumed up to the end of this block.
        public var consumed: Int
    }

    private let read: () throws -> [UInt8]?
    private var pending: [UInt8] = []
    private var atEnd = false
    private var nextLine = 1
    private var consumed = 0
    /// Roughly how many bytes a block holds.
    public let blockBytes: Int

    /// Creates a splitter over a chunk source (`nil` or an empty chunk ends the input).
    public init(blockBytes: Int = 4 << 20, read: @escaping () throws -> [UInt8]?) {
        self.blockBytes = blockBytes
        self.read = read
    }

    /// The next block, or `nil` at the end of input.
    public mutating func next() throws -> Block? {
        while !atEnd && pending.count < blockBytes {
            guard let chunk = try read(), !chunk.isEmpty else {
                atEnd = true
                break
            }
            if pending.isEmpty { pending = chunk } else { pending.append(contentsOf: chunk) }
        }
        if pending.isEmpty { return nil }
        var cut = pending.count
        let lastNewline: (Int) -> Int? = { [pending] limit in
            pending.withUnsafeBytes { b -> Int? in
                // Backwards from the limit: a line's length at most, not the whole block.
                var i = limit - 1
                while i >= 0 && b[i] != 0x0A { i -= 1 }
                return i >= 0 ? i : nil
            }
        }
        if pending.count > blockBytes, let nl = lastNewline(blockBytes) {
            // A full block: whole lines up to about blockBytes; the rest waits for the next block.
            cut = nl + 1
        } else if !atEnd {
            // Whole lines only: keep what follows the last newline for the next block.
            guard let nl = lastNewline(pending.count) else {
                // A line longer than a block: read more before cutting.
                if let chunk = try read(), !chunk.isEmpty {
                    pending.append(contentsOf: chunk)
                } else {
                    atEnd = true
                }
                return try next()
            }
            cut = nl + 1
        }
        var bytes: [UInt8]
        if cut == pending.count {
            bytes = pending
            pending = []
        } else {
            bytes = [UInt8](unsafeUninitializedCapacity: cut) { buffer, count in
                pending.withUnsafeBufferPointer { buffer.baseAddress!.update(from: $0.baseAddress!, count: cut) }
                count = cut
            }
            let rest = pending.count - cut
            pending = [UInt8](unsafeUninitializedCapacity: max(rest, blockBytes)) { buffer, count in
                pending.withUnsafeBufferPointer { buffer.baseAddress!.update(from: $0.baseAddress! + cut, count: rest) }
                count = rest
            }
        }
        consumed += bytes.count
        var lines: [(start: Int, end: Int, line: Int)] = []
        lines.reserveCapacity(bytes.count / 256)
        bytes.withUnsafeBytes { b in
            var start = 0
            let n = b.count
            let base = b.baseAddress!
            while start < n {
                // memchr finds the newline with vector instructions.
                let end = memchr(base + start, 0x0A, n - start).map { UnsafeRawPointer($0) - base } ?? n
                var blank = true
                var i = start
                while i < end {
                    let c = b[i]
                    if c != 0x20 && c != 0x09 && c != 0x0D {
                        blank = false
                        break
                    }
                    i += 1
                }
                if !blank { lines.append((start, end, nextLine)) }
                nextLine += 1
                start = end + 1
            }
        }
        return Block(bytes: bytes, lines: lines, consumed: consumed)
    }
}
