import Foundation
import SoundtrackContext
import Synchronization

/// Block buffers given back once their block is decoded, for the next blocks to be read into:
/// a fresh 64 MiB buffer per block made the kernel zero 64 MiB of new pages for every block.
public final class BlockBuffers: Sendable {
    private let spare = Mutex<[ByteArena]>([])
    /// How many buffers it keeps at most.
    public let limit: Int

    /// An empty pool keeping at most `limit` buffers.
    public init(limit: Int = 4) { self.limit = limit }

    /// A kept buffer with room for `capacity` bytes, emptied, or `nil`.
    func take(capacity: Int) -> ByteArena? {
        spare.withLock { spare in
            guard let i = spare.firstIndex(where: { $0.reserved >= capacity }) else { return nil }
            let b = spare.remove(at: i)
            b.removeAll()
            return b
        }
    }

    /// Gives a block's buffer back; the caller must not use it (nor the block's bytes) again.
    public func give(_ buffer: ByteArena) {
        spare.withLock { if $0.count < limit { $0.append(buffer) } }
    }
}

/// Splits a byte stream into blocks of whole JSON Lines records, numbering the lines.
///
/// Blank lines count in the numbering but are not records. A block holds whole lines only; the
/// part after its last newline starts the next block (or ends the input). The input is read
/// straight into each block's buffer: one copy from the source, no intermediate chunks.
public struct LineBlocks {
    /// A block: its bytes and its records.
    public struct Block {
        /// The bytes of the block's lines.
        public var bytes: ByteArena
        /// Each record's byte range in ``bytes`` and its 1-based line number.
        public var lines: [(start: Int, end: Int, line: Int)]
        /// Bytes of input consumed up to the end of this block.
        public var consumed: Int
    }

    /// Reads into the buffer; returns how many bytes it read, 0 at the end of input.
    public typealias Read = (UnsafeMutableRawBufferPointer) throws -> Int

    private let read: Read
    /// The bytes after the last newline of the previous block.
    private var carry: [UInt8] = []
    private var atEnd = false
    private var nextLine = 1
    private var consumed = 0
    /// Roughly how many bytes a block holds.
    public let blockBytes: Int
    /// Where block buffers given back are taken from, if anywhere.
    private let buffers: BlockBuffers?

    /// Creates a splitter over a byte source.
    /// - Parameter buffers: buffers of earlier blocks to read into again (the caller gives each
    ///   block's buffer back there once it is done with the block); `nil` allocates one per block.
    public init(blockBytes: Int = 4 << 20, buffers: BlockBuffers? = nil, read: @escaping Read) {
        self.blockBytes = max(1, blockBytes)
        self.buffers = buffers
        self.read = read
    }

    /// The next block, or `nil` at the end of input.
    public mutating func next() throws -> Block? {
        var capacity = max(blockBytes, carry.count + 1)
        while true {
            // A buffer given back, else a new one (a block is handed on while the next is read);
            // large ones are backed by huge pages (``ByteArena``), so that reading into it does not
            // fault in a 64 MiB block 4 KiB page by page.
            let bytes = buffers?.take(capacity: capacity) ?? ByteArena(capacity: capacity)
            bytes.append(carry)
            var ended = atEnd
            while bytes.count < capacity && !ended {
                if try bytes.appendWriting(upTo: capacity - bytes.count, read) == 0 { ended = true }
            }
            atEnd = ended
            if bytes.count == 0 { return nil }
            // Whole lines only: what follows the last newline waits for the next block.
            var cut = bytes.count
            if !atEnd {
                let last: Int? = bytes.withUnsafeBytes { b in
                    var i = b.count - 1
                    while i >= 0 && b[i] != 0x0A { i -= 1 }
                    return i >= 0 ? i : nil
                }
                guard let last else {
                    // A line longer than a block: read on with a larger buffer.
                    carry = bytes.array
                    capacity *= 2
                    continue
                }
                cut = last + 1
            }
            carry = Array(bytes.bytes(cut..<bytes.count))
            bytes.truncate(to: cut)
            consumed += cut
            return Block(bytes: bytes, lines: split(bytes), consumed: consumed)
        }
    }

    /// The records of a block of whole lines, numbered.
    private mutating func split(_ bytes: ByteArena) -> [(start: Int, end: Int, line: Int)] {
        var lines: [(start: Int, end: Int, line: Int)] = []
        lines.reserveCapacity(bytes.count / 256)
        bytes.withUnsafeBytes { b in
            var start = 0
            let n = b.count
            guard let base = b.baseAddress else { return }
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
        return lines
    }
}

extension LineBlocks.Block {
    /// Calls `body(index, line, record)` for every record of the block, on `workers` threads at
    /// once, each taking a contiguous range of records (batch and replay decode their blocks so).
    /// `record` is valid only during the call.
    func forEachRecordInParallel(workers: Int, _ body: @Sendable (Int, Int, UnsafeRawBufferPointer) -> Void) {
        struct Bytes: @unchecked Sendable { let p: UnsafeRawBufferPointer }
        let n = lines.count, nw = max(1, workers), lines = self.lines
        bytes.withUnsafeBytes { raw in
            let all = Bytes(p: raw)
            DispatchQueue.concurrentPerform(iterations: nw) { w in
                for i in (n * w / nw)..<(n * (w + 1) / nw) {
                    let l = lines[i]
                    body(i, l.line, UnsafeRawBufferPointer(rebasing: all.p[l.start..<l.end]))
                }
            }
        }
    }
}
