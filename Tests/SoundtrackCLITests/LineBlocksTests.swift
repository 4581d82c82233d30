import Foundation
import SoundtrackContext
import Testing

@testable import SoundtrackApp

@Suite struct LineBlocksTests {
    /// A reader over `input` that hands out at most `chunk` bytes per call (a pipe gives short reads).
    static func reader(_ input: [UInt8], chunk: Int) -> LineBlocks.Read {
        var at = 0
        return { buffer in
            let n = min(buffer.count, chunk, input.count - at)
            input.withUnsafeBytes { src in
                if n > 0 { buffer.baseAddress!.copyMemory(from: src.baseAddress! + at, byteCount: n) }
            }
            at += n
            return n
        }
    }

    /// Every block's records as (line, text), and each block's `consumed`; with `buffers`, each
    /// block's buffer is given back once its records are read, and `reused` counts the blocks read
    /// into a buffer of an earlier block.
    static func split(
        _ text: String, blockBytes: Int, chunk: Int, buffers: BlockBuffers? = nil
    ) throws -> (records: [(Int, String)], consumed: [Int], blocks: Int, reused: Int) {
        var blocks = LineBlocks(blockBytes: blockBytes, buffers: buffers, read: reader(Array(text.utf8), chunk: chunk))
        var records: [(Int, String)] = []
        var consumed: [Int] = []
        var count = 0, reused = 0
        var seen: [ByteArena] = []  // held, so that a freed buffer's address is not taken for reuse
        while let block = try blocks.next() {
            count += 1
            consumed.append(block.consumed)
            if seen.contains(where: { $0 === block.bytes }) { reused += 1 } else { seen.append(block.bytes) }
            block.bytes.withUnsafeBytes { b in
                for l in block.lines {
                    records.append((l.line, String(decoding: b[l.start..<l.end], as: UTF8.self)))
                }
            }
            buffers?.give(block.bytes)
        }
        return (records, consumed, count, reused)
    }

    @Test("Blocks read into buffers given back hold the same lines, and every block after the first reuses one")
    func buffersGivenBack() throws {
        let lines = (1...40).map { "{\"n\":\($0),\"pad\":\"" + String(repeating: "y", count: $0 % 7) + "\"}" }
        let text = lines.joined(separator: "\n") + "\n"
        for chunk in [5, 1000] {
            let plain = try Self.split(text, blockBytes: 64, chunk: chunk)
            let pooled = try Self.split(text, blockBytes: 64, chunk: chunk, buffers: BlockBuffers(limit: 1))
            #expect(plain.blocks > 3 && pooled.blocks == plain.blocks)
            #expect(pooled.records.map(\.0) == plain.records.map(\.0) && pooled.records.map(\.1) == plain.records.map(\.1))
            #expect(pooled.records.map(\.1) == lines)
            #expect(pooled.consumed == plain.consumed)
            // No buffer is kept alive between blocks here, so each block after the first reuses
            // the one given back (never while it is held: a block not given back is never handed out again).
            #expect(plain.reused == 0)
            #expect(pooled.reused == pooled.blocks - 1)
        }
    }

    @Test("Blocks hold whole lines, numbered across blocks, for every block size and read size")
    func wholeLines() throws {
        // A blank line, a line of spaces, a line longer than the smaller blocks, no final newline.
        let lines = ["{\"a\":1}", "", "{\"b\":22}", "   ", String(repeating: "x", count: 40), "{\"c\":333}", "é{\"d\":4}"]
        let text = lines.joined(separator: "\n")
        let expected = lines.enumerated().filter { !$0.element.allSatisfy { $0 == " " } }.map { ($0.offset + 1, $0.element) }
        for blockBytes in [1, 7, 16, 64, 1 << 20] {
            for chunk in [1, 3, 1000] {
                let got = try Self.split(text, blockBytes: blockBytes, chunk: chunk)
                #expect(got.records.map(\.0) == expected.map(\.0), "block \(blockBytes), chunk \(chunk)")
                #expect(got.records.map(\.1) == expected.map(\.1), "block \(blockBytes), chunk \(chunk)")
                // `consumed` grows block by block and ends at the input's length.
                #expect(got.consumed == got.consumed.sorted() && got.consumed.last == text.utf8.count)
                if blockBytes == 1 << 20 { #expect(got.blocks == 1) }
                if blockBytes == 16 { #expect(got.blocks > 2) }
            }
        }
    }

    @Test("Empty input has no block; a final newline makes no empty record")
    func edges() throws {
        #expect(try Self.split("", blockBytes: 16, chunk: 4).blocks == 0)
        let got = try Self.split("{}\n{}\n", blockBytes: 16, chunk: 4)
        #expect(got.records.map(\.0) == [1, 2])
        #expect(got.consumed.last == 6)
    }

    @Test("A large block is read straight into its buffer, every byte in place")
    func largeBlock() throws {
        // Past ByteArena's huge-page threshold: the buffer is then aligned memory, not malloc's.
        var text = ""
        var i = 0
        while text.utf8.count < 6 << 20 {
            text += "{\"n\":\(i)}\n"
            i += 1
        }
        let got = try Self.split(text, blockBytes: 8 << 20, chunk: 1 << 16)
        #expect(got.blocks == 1)
        #expect(got.records.count == i)
        #expect(got.records.enumerated().allSatisfy { $0.element.0 == $0.offset + 1 && $0.element.1 == "{\"n\":\($0.offset)}" })
    }
}
