extension JSONValue {
    /// Compact JSON text of the value: no whitespace, object keys in stored order.
    ///
    /// Integral numbers below 10^17 in magnitude print without a fraction (`3`, not `3.0`);
    /// other numbers print in the shortest form that reads back to the same double. Strings
    /// escape `"`, `\` and control characters. A non-finite number (which the parser never
    /// produces) prints as `null`.
    public func serialized() -> String {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        write(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the compact JSON text of the value (see ``serialized()``) to a byte buffer.
    ///
    /// - Parameter out: the buffer to append UTF-8 bytes to.
    public func write(into out: inout [UInt8]) {
        switch self {
        case .null:
            out.append(contentsOf: "null".utf8)
        case .bool(let b):
            out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let x):
            JSONValue.writeNumber(x, into: &out)
        case .string(let s):
            JSONValue.writeString(s, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (k, e) in elements.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                e.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let pairs):
            out.append(UInt8(ascii: "{"))
            for (k, pair) in pairs.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.writeString(pair.0, into: &out)
                out.append(UInt8(ascii: ":"))
                pair.1.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// The text of a number as ``serialized()`` prints it (`140`, `0.45`, `1e+20`).
    ///
    /// - Parameter x: the number.
    /// - Returns: JSON number text, or `null` for a non-finite value.
    public static func numberText(_ x: Double) -> String {
        var out: [UInt8] = []
        writeNumber(x, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the text of a number as ``serialized()`` prints it: for hand-written fast encoders
    /// that must produce the same bytes as ``write(into:)``.
    public static func writeNumber(_ x: Double, into out: inout [UInt8]) {
        guard x.isFinite else {
            out.append(contentsOf: "null".utf8)
            return
        }
        if x == x.rounded(.towardZero), abs(x) < 1e17 {
            var n = Int64(x)
            if n == 0 {
                out.append(UInt8(ascii: "0"))
                return
            }
            if n < 0 {
                out.append(UInt8(ascii: "-"))
                n = -n
            }
            var power: Int64 = 1
            while power <= n / 10 { power *= 10 }
            while power > 0 {
                out.append(UInt8(truncatingIfNeeded: n / power) &+ UInt8(ascii: "0"))
                n %= power
                power /= 10
            }
            return
        }
        out.append(contentsOf: x.description.utf8)
    }

    /// Appends a JSON string literal (quoted and escaped as ``serialized()`` does).
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = s
        text.withUTF8 { utf8 in
            // Copy runs of plain bytes at once; escape the few that need it.
            var runStart = 0
            var i = 0
            while i < utf8.count {
                let b = utf8[i]
                if b >= 0x20, b != UInt8(ascii: "\""), b != UInt8(ascii: "\\") {
                    i += 1
                    continue
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i]))
                out.append(UInt8(ascii: "\\"))
                switch b {
                case 0x0A: out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "t"))
                case 0x08: out.append(UInt8(ascii: "b"))
                case 0x0C: out.append(UInt8(ascii: "f"))
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(b)
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    out.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(b >> 4)], hex[Int(b & 0xF)]])
                }
                i += 1
                runStart = i
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        }
        out.append(UInt8(ascii: "\""))
    }
}
