import Foundation
import SoundtrackContext
import Testing

/// The hand-written encoders of the batch path must produce the very bytes of the general ones.
@Suite("ByteArena encodes as JSONValue does")
struct ByteArenaTests {
    func text(_ b: ByteArena) -> String { String(decoding: b.array, as: UTF8.self) }

    @Test("Strings: escapes, control characters, quotes, backslashes and non-ASCII, at every length and offset")
    func stringsMatchTheGeneralWriter() throws {
        var rng = SystemRandomNumberGenerator()
        let pieces: [String] = ["a", "Z", "0", " ", "\"", "\\", "\n", "\r", "\t", "\u{08}", "\u{0C}", "\u{01}", "\u{1F}", "é", "ß", "€", "🎧", "·", "/", "~", "\u{7F}"]
        for length in 0..<40 {
            for _ in 0..<40 {
                let s = (0..<length).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &rng)] }.joined()
                var expected: [UInt8] = []
                JSONValue.writeString(s, into: &expected)
                let b = ByteArena(capacity: 16)
                b.append("x")  // an unaligned start
                b.appendJSONString(s)
                #expect(Array(b.array.dropFirst()) == expected, "\(s.debugDescription)")
                // And the text reads back to the same string.
                #expect(try JSONParser.parse(String(decoding: expected, as: UTF8.self)) == .string(s))
            }
        }
    }

    @Test("Three-decimal numbers: the text of writeNumber of the rounded value")
    func milliMatchesWriteNumber() {
        var rng = SystemRandomNumberGenerator()
        var values: [Float] = [0, -0.0, 1, -1, 0.5, -0.5, 0.0004, -0.0004, 0.0005, 0.9995, 0.001, 123.4567, -987.654, 1e-7, 3e10, -2e12, .infinity, -.infinity, .nan]
        for _ in 0..<20_000 { values.append(Float.random(in: -2...2, using: &rng)) }
        for _ in 0..<2_000 { values.append(Float.random(in: -1e7...1e7, using: &rng)) }
        for v in values {
            var expected: [UInt8] = []
            JSONValue.writeNumber((Double(v) * 1000).rounded() / 1000, into: &expected)
            let b = ByteArena(capacity: 16)
            b.appendMilli(v)
            #expect(b.array == expected, "\(v)")
        }
    }

    @Test("Timestamps and digits")
    func timestampsAndDigits() {
        for stamp in ["2026-03-14T07:42:10+01:00", "2026-03-14T07:42:10.25Z", "1999-12-31T23:59:59.000001-09:30", "0001-01-01T00:00:00Z"] {
            let t = Timestamp(rfc3339: stamp)!
            let b = ByteArena(capacity: 16)
            b.appendRFC3339String(t)
            #expect(text(b) == "\"\(t.rfc3339)\"")
        }
        let b = ByteArena(capacity: 16)
        b.appendDigits(0)
        b.append(",")
        b.appendDigits(7, width: 3)
        b.append(",")
        b.appendDigits(UInt64.max)
        #expect(text(b) == "0,007,\(UInt64.max)")
    }

    @Test("Growing keeps what was written; removeAll keeps the capacity")
    func growth() {
        let b = ByteArena(capacity: 16)
        var expected: [UInt8] = []
        for i in 0..<10_000 {
            let byte = UInt8(truncatingIfNeeded: i &* 31)
            b.append(byte)
            expected.append(byte)
        }
        #expect(b.array == expected)
        #expect(b.bytes(10..<20).elementsEqual(expected[10..<20]))
        b.removeAll()
        #expect(b.count == 0)
        b.append("ok")
        #expect(text(b) == "ok")
    }

    @Test("Growing past the size backed by huge pages (4 MiB) keeps every byte, and the buffer is reusable")
    func growthIntoHugePages() {
        let b = ByteArena(capacity: 1 << 20)
        let chunk = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        for _ in 0..<(5 << 8) { b.append(chunk) }  // 5 MiB
        #expect(b.count == 5 << 20)
        let all = b.array
        #expect(all.count == 5 << 20)
        #expect((0..<(5 << 8)).allSatisfy { k in all[(k * 4096)..<((k + 1) * 4096)].elementsEqual(chunk) })
        b.removeAll()
        b.append("again")
        #expect(text(b) == "again")
    }
}

@Suite struct ByteArenaFillTests {
    @Test("appendWriting appends what the writer reports; truncate keeps a prefix")
    func fillAndTruncate() {
        let out = ByteArena(capacity: 16)
        out.append("ab")
        let n = out.appendWriting(upTo: 100) { space in
            #expect(space.count == 100)
            for k in 0..<5 { space[k] = UInt8(ascii: "c") + UInt8(k) }
            return 5
        }
        #expect(n == 5)
        #expect(String(decoding: out.array, as: UTF8.self) == "abcdefg")
        #expect(out.appendWriting(upTo: 8) { _ in 0 } == 0)
        #expect(out.count == 7)
        out.truncate(to: 3)
        #expect(String(decoding: out.array, as: UTF8.self) == "abc")
        out.append("z")
        #expect(String(decoding: out.array, as: UTF8.self) == "abcz")
    }
}
