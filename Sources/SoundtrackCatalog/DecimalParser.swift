/// Parses decimal numbers from bytes without building a `String` in the common case.
///
/// The fast path handles `[+-]digits[.digits][(e|E)[+-]digits]` whose digits form an integer
/// below 2⁵³ and whose power of ten is at most 22 in magnitude: both are exact doubles, so one
/// IEEE multiplication or division rounds correctly and the result equals `Double(String)`.
/// Everything else (more digits, `nan`, `inf`, hexadecimal…) goes to `Double(String)`.
enum DecimalParser {
    private static let powersOfTen: [Double] = (0...22).map { e in
        var p = 1.0
        for _ in 0..<e { p *= 10 }
        return p
    }

    static func parse(_ bytes: UnsafeRawBufferPointer) -> Double? {
        fast(bytes) ?? Double(String(decoding: bytes, as: UTF8.self))
    }

    private static func fast(_ b: UnsafeRawBufferPointer) -> Double? {
        let n = b.count
        var i = 0
        var negative = false
        if i < n, b[i] == UInt8(ascii: "-") || b[i] == UInt8(ascii: "+") {
            negative = b[i] == UInt8(ascii: "-")
            i += 1
        }
        var mantissa: UInt64 = 0
        var exponent = 0
        var digits = 0
        while i < n, b[i] &- 48 < 10 {
            guard mantissa < 1 << 53 else { return nil }
            mantissa = mantissa * 10 + UInt64(b[i] &- 48)
            digits += 1
            i += 1
        }
        if i < n, b[i] == UInt8(ascii: ".") {
            i += 1
            while i < n, b[i] &- 48 < 10 {
                guard mantissa < 1 << 53 else { return nil }
                mantissa = mantissa * 10 + UInt64(b[i] &- 48)
                exponent -= 1
                digits += 1
                i += 1
            }
        }
        guard digits > 0 else { return nil }
        if i < n, b[i] | 0x20 == UInt8(ascii: "e") {
            i += 1
            var expNegative = false
            if i < n, b[i] == UInt8(ascii: "-") || b[i] == UInt8(ascii: "+") {
                expNegative = b[i] == UInt8(ascii: "-")
                i += 1
            }
            var e = 0
            var expDigits = 0
            while i < n, b[i] &- 48 < 10 {
                guard e < 10_000 else { return nil }
                e = e * 10 + Int(b[i] &- 48)
                expDigits += 1
                i += 1
            }
            guard expDigits > 0 else { return nil }
            exponent += expNegative ? -e : e
        }
        guard i == n, mantissa <= 1 << 53, abs(exponent) <= 22 else { return nil }
        var value = Double(mantissa)
        value = exponent < 0 ? value / powersOfTen[-exponent] : value * powersOfTen[exponent]
        return negative ? -value : value
    }
}
