import Foundation

/// A strict RFC 8259 JSON parser working directly on UTF-8 bytes.
///
/// The parser accepts exactly the JSON grammar: no comments, no trailing commas, no
/// leading zeros, no `NaN`/`Infinity`, no unescaped control characters in strings, no
/// invalid UTF-8, no numbers that overflow to infinity and no duplicate keys in an object
/// (keys compare as Swift strings do, so canonically equivalent spellings are duplicates).
/// A leading UTF-8 byte order mark is skipped (RFC 8259 §8.1 allows ignoring it).
///
/// Errors are ``InputError`` values with an empty path, what the grammar wanted and what came,
/// with its line and column (1-based; columns count Unicode scalars):
///
/// ```swift
/// let value = try JSONParser.parse(#"{"user": "u-1", "at": "2026-03-14T07:42:10+01:00"}"#)
/// // JSONParser.parse("[1, 2,]") throws
/// // "input: expected a JSON value, got ']' at line 1, column 7"
/// ```
public enum JSONParser {
    /// The default limit on nested arrays and objects.
    public static let defaultMaxDepth = 64

    /// Parses one JSON document from bytes.
    ///
    /// - Parameters:
    ///   - data: the UTF-8 encoded document.
    ///   - maxDepth: the most arrays and objects that may be nested inside each other.
    /// - Throws: ``InputError`` naming what the grammar expected and where the input went wrong.
    public static func parse(_ data: Data, maxDepth: Int = defaultMaxDepth) throws(InputError) -> JSONValue {
        let result: Result<JSONValue, InputError> = data.withUnsafeBytes { raw in
            do throws(InputError) {
                return .success(try parse(bytes: raw, maxDepth: maxDepth))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Parses one JSON document from a string.
    ///
    /// - Parameters:
    ///   - string: the document.
    ///   - maxDepth: the most arrays and objects that may be nested inside each other.
    /// - Throws: ``InputError`` naming what the grammar expected and where the input went wrong.
    public static func parse(_ string: String, maxDepth: Int = defaultMaxDepth) throws(InputError) -> JSONValue {
        var copy = string
        let result: Result<JSONValue, InputError> = copy.withUTF8 { utf8 in
            do throws(InputError) {
                return .success(try parse(bytes: UnsafeRawBufferPointer(utf8), maxDepth: maxDepth))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Parses one JSON document from a byte array.
    ///
    /// - Parameters:
    ///   - bytes: the UTF-8 encoded document.
    ///   - maxDepth: the most arrays and objects that may be nested inside each other.
    /// - Throws: ``InputError`` naming what the grammar expected and where the input went wrong.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(InputError) -> JSONValue {
        let result: Result<JSONValue, InputError> = bytes.withUnsafeBytes { raw in
            do throws(InputError) {
                return .success(try parse(bytes: raw, maxDepth: maxDepth))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Parses one JSON document from raw memory (the fastest entry point: no copy is made).
    ///
    /// - Parameters:
    ///   - bytes: the UTF-8 encoded document; only read during the call.
    ///   - maxDepth: the most arrays and objects that may be nested inside each other.
    /// - Throws: ``InputError`` naming what the grammar expected and where the input went wrong.
    public static func parse(bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth) throws(InputError) -> JSONValue {
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            throw InputError(path: "", expected: "a JSON value", got: "end of input at line 1, column 1")
        }
        let typed = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        var parser = ByteParser(bytes: typed, maxDepth: maxDepth)
        return try parser.parseDocument()
    }
}

// MARK: - The parser

enum Byte {
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
    static let slash = UInt8(ascii: "/")
    static let comma = UInt8(ascii: ",")
    static let colon = UInt8(ascii: ":")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
    static let openBracket = UInt8(ascii: "[")
    static let closeBracket = UInt8(ascii: "]")
    static let minus = UInt8(ascii: "-")
    static let plus = UInt8(ascii: "+")
    static let dot = UInt8(ascii: ".")
    static let zero = UInt8(ascii: "0")
    static let nine = UInt8(ascii: "9")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let newline = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
    static let lowerE = UInt8(ascii: "e")
    static let upperE = UInt8(ascii: "E")
}

/// Exact powers of ten as doubles (10^0 ... 10^22 are all exactly representable).
private let exactPowersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
]

struct ByteParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let count: Int
    let maxDepth: Int
    var index = 0
    /// Reused buffer for strings that contain escapes.
    var scratch: [UInt8] = []

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.count = bytes.count
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(InputError) -> JSONValue {
        if count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        let value = try parseValue(depth: 0)
        skipWhitespace()
        if index < count { throw failure(expected: "end of input") }
        return value
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < count {
            let b = bytes[index]
            guard b == Byte.space || b == Byte.newline || b == Byte.carriageReturn || b == Byte.tab else { return }
            index += 1
        }
    }

    mutating func parseValue(depth: Int) throws(InputError) -> JSONValue {
        skipWhitespace()
        guard index < count else { throw failure(expected: "a JSON value") }
        switch bytes[index] {
        case Byte.quote: return .string(try parseString())
        case Byte.openBrace: return try parseObject(depth: depth + 1)
        case Byte.openBracket: return try parseArray(depth: depth + 1)
        case Byte.minus, Byte.zero...Byte.nine: return .number(try parseNumber())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        default:
            throw failure(expected: "a JSON value")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(InputError) {
        let n = literal.utf8CodeUnitCount
        let p = literal.utf8Start
        if index + n <= count {
            var same = true
            for k in 0..<n where bytes[index + k] != p[k] { same = false; break }
            if same {
                index += n
                // "truex" is not a literal followed by garbage: report the whole word.
                if index < count, isWordByte(bytes[index]) {
                    index -= n
                    throw failure(expected: "a JSON value")
                }
                return
            }
        }
        throw failure(expected: "a JSON value")
    }

    // MARK: Containers

    mutating func parseObject(depth: Int) throws(InputError) -> JSONValue {
        if depth > maxDepth { throw failure(expected: "at most \(maxDepth) nested arrays and objects") }
        index += 1  // {
        skipWhitespace()
        if index < count, bytes[index] == Byte.closeBrace {
            index += 1
            return .object([])
        }
        var pairs: [(String, JSONValue)] = []
        pairs.reserveCapacity(8)
        var keys: Set<String>? = nil
        while true {
            skipWhitespace()
            guard index < count, bytes[index] == Byte.quote else {
                throw failure(expected: pairs.isEmpty ? "a string key or '}'" : "a string key")
            }
            let keyStart = index
            let key = try parseString()
            if keys == nil, pairs.count >= 12 {
                keys = Set(pairs.map(\.0))
            }
            let duplicate: Bool
            if keys != nil {
                duplicate = !keys!.insert(key).inserted
            } else {
                // String equality (canonical equivalence), as `Set` and `JSONValue[key]` use.
                var found = false
                var k = 0
                while k < pairs.count {
                    if pairs[k].0 == key {
                        found = true
                        break
                    }
                    k += 1
                }
                duplicate = found
            }
            if duplicate {
                index = keyStart
                throw InputError(
                    path: "", expected: "unique keys in an object",
                    got: "a second \(JSONValue.string(key).serialized()) at \(location(of: keyStart))")
            }
            skipWhitespace()
            guard index < count, bytes[index] == Byte.colon else { throw failure(expected: "':' after the key") }
            index += 1
            let value = try parseValue(depth: depth)
            pairs.append((key, value))
            skipWhitespace()
            guard index < count else { throw failure(expected: "',' or '}'") }
            let b = bytes[index]
            index += 1
            if b == Byte.comma { continue }
            if b == Byte.closeBrace {
                return .object(pairs)
            }
            index -= 1
            throw failure(expected: "',' or '}'")
        }
    }

    mutating func parseArray(depth: Int) throws(InputError) -> JSONValue {
        if depth > maxDepth { throw failure(expected: "at most \(maxDepth) nested arrays and objects") }
        index += 1  // [
        skipWhitespace()
        if index < count, bytes[index] == Byte.closeBracket {
            index += 1
            return .array([])
        }
        var elements: [JSONValue] = []
        elements.reserveCapacity(4)
        while true {
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < count else { throw failure(expected: "',' or ']'") }
            let b = bytes[index]
            index += 1
            if b == Byte.comma { continue }
            if b == Byte.closeBracket {
                return .array(elements)
            }
            index -= 1
            throw failure(expected: "',' or ']'")
        }
    }

    // MARK: Numbers

    mutating func parseNumber() throws(InputError) -> Double {
        let start = index
        var negative = false
        if bytes[index] == Byte.minus {
            negative = true
            index += 1
        }
        guard index < count, isDigit(bytes[index]) else { throw failure(expected: "a digit after '-'") }

        var mantissa: UInt64 = 0
        var exponent = 0
        var exact = true  // false when digits did not fit the mantissa

        if bytes[index] == Byte.zero {
            index += 1
            if index < count, isDigit(bytes[index]) {
                throw InputError(
                    path: "", expected: "a number without leading zeros",
                    got: "\(quotedToken(from: start)) at \(location(of: start))")
            }
        } else {
            while index < count, isDigit(bytes[index]) {
                let d = UInt64(bytes[index] &- Byte.zero)
                if mantissa < 0x1999_9999_9999_9999 {
                    mantissa = mantissa &* 10 &+ d
                } else {
                    if d != 0 { exact = false }
                    exponent += 1
                }
                index += 1
            }
        }
        if index < count, bytes[index] == Byte.dot {
            index += 1
            guard index < count, isDigit(bytes[index]) else { throw failure(expected: "a digit after '.'") }
            while index < count, isDigit(bytes[index]) {
                let d = UInt64(bytes[index] &- Byte.zero)
                if mantissa < 0x1999_9999_9999_9999 {
                    mantissa = mantissa &* 10 &+ d
                    exponent -= 1
                } else if d != 0 {
                    exact = false
                }
                index += 1
            }
        }
        if index < count, bytes[index] == Byte.lowerE || bytes[index] == Byte.upperE {
            index += 1
            var expNegative = false
            if index < count, bytes[index] == Byte.minus || bytes[index] == Byte.plus {
                expNegative = bytes[index] == Byte.minus
                index += 1
            }
            guard index < count, isDigit(bytes[index]) else { throw failure(expected: "a digit in the exponent") }
            var e = 0
            while index < count, isDigit(bytes[index]) {
                if e < 100_000 { e = e * 10 + Int(bytes[index] &- Byte.zero) }
                index += 1
            }
            exponent += expNegative ? -e : e
        }

        // Clinger's fast path: an exact mantissa below 2^53 times an exact power of ten is
        // correctly rounded by one IEEE multiplication or division.
        if exact, mantissa <= (1 << 53) {
            if mantissa == 0 { return negative ? -0.0 : 0.0 }
            if exponent >= -22, exponent <= 22 {
                var v = Double(mantissa)
                if exponent >= 0 { v *= exactPowersOfTen[exponent] } else { v /= exactPowersOfTen[-exponent] }
                return negative ? -v : v
            }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let v = Double(text), v.isFinite else {
            throw InputError(
                path: "", expected: "a number within the range of a double",
                got: "\(text) at \(location(of: start))")
        }
        return v
    }

    // MARK: Strings

    mutating func parseString() throws(InputError) -> String {
        let open = index
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes. Validates UTF-8 in place and makes one String.
        while index < count {
            let b = bytes[index]
            if b == Byte.quote {
                let s = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return s
            }
            if b == Byte.backslash { break }
            if b < 0x20 { throw controlCharacterFailure() }
            if b < 0x80 {
                index += 1
            } else {
                index += try utf8SequenceLength()
            }
        }
        guard index < count else { throw unterminatedString(open: open) }

        // Slow path: copy what was scanned, then decode escapes into the scratch buffer.
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < count {
            let b = bytes[index]
            if b == Byte.quote {
                index += 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if b == Byte.backslash {
                try parseEscape()
            } else if b < 0x20 {
                throw controlCharacterFailure()
            } else if b < 0x80 {
                scratch.append(b)
                index += 1
            } else {
                let n = try utf8SequenceLength()
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<(index + n)]))
                index += n
            }
        }
        throw unterminatedString(open: open)
    }

    func unterminatedString(open: Int) -> InputError {
        InputError(
            path: "", expected: "'\"' to close the string that starts at \(location(of: open))",
            got: "end of input at \(location(of: count))")
    }

    func controlCharacterFailure() -> InputError {
        failure(expected: "a string without raw control characters (escape them, e.g. \\n or \\u0001)")
    }

    /// Length of the valid UTF-8 sequence at `index` (whose first byte is ≥ 0x80), or throws.
    func utf8SequenceLength() throws(InputError) -> Int {
        let b0 = bytes[index]
        let need: Int
        var lo: UInt8 = 0x80
        var hi: UInt8 = 0xBF
        switch b0 {
        case 0xC2...0xDF: need = 1
        case 0xE0: need = 2; lo = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: need = 2
        case 0xED: need = 2; hi = 0x9F
        case 0xF0: need = 3; lo = 0x90
        case 0xF1...0xF3: need = 3
        case 0xF4: need = 3; hi = 0x8F
        default: throw invalidUTF8(at: index)
        }
        guard index + need < count else { throw invalidUTF8(at: index) }
        let b1 = bytes[index + 1]
        guard b1 >= lo, b1 <= hi else { throw invalidUTF8(at: index) }
        var k = 2
        while k <= need {
            let b = bytes[index + k]
            guard b & 0xC0 == 0x80 else { throw invalidUTF8(at: index) }
            k += 1
        }
        return need + 1
    }

    func invalidUTF8(at position: Int) -> InputError {
        InputError(
            path: "", expected: "valid UTF-8",
            got: "byte 0x\(hex2(bytes[position])) at \(location(of: position))")
    }

    mutating func parseEscape() throws(InputError) {
        let escapeStart = index
        index += 1  // backslash
        guard index < count else { throw unterminatedString(open: escapeStart) }
        let c = bytes[index]
        index += 1
        switch c {
        case Byte.quote: scratch.append(Byte.quote)
        case Byte.backslash: scratch.append(Byte.backslash)
        case Byte.slash: scratch.append(Byte.slash)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(Byte.newline)
        case UInt8(ascii: "r"): scratch.append(Byte.carriageReturn)
        case UInt8(ascii: "t"): scratch.append(Byte.tab)
        case UInt8(ascii: "u"):
            var scalar = try hex4(escapeStart: escapeStart)
            if scalar >= 0xD800, scalar <= 0xDBFF {
                let lowStart = index
                guard index + 1 < count, bytes[index] == Byte.backslash, bytes[index + 1] == UInt8(ascii: "u") else {
                    throw InputError(
                        path: "", expected: "a low surrogate \\uDC00-\\uDFFF after a high surrogate",
                        got: "\(describe(at: index)) at \(location(of: index))")
                }
                index += 2
                let low = try hex4(escapeStart: lowStart)
                guard low >= 0xDC00, low <= 0xDFFF else {
                    throw InputError(
                        path: "", expected: "a low surrogate \\uDC00-\\uDFFF after a high surrogate",
                        got: "\\u\(hex4String(low)) at \(location(of: lowStart))")
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if scalar >= 0xDC00, scalar <= 0xDFFF {
                throw InputError(
                    path: "", expected: "a Unicode scalar (a low surrogate must follow a high surrogate)",
                    got: "\\u\(hex4String(scalar)) at \(location(of: escapeStart))")
            }
            appendUTF8(scalar)
        default:
            index = escapeStart
            throw InputError(
                path: "", expected: "an escape sequence (\\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX)",
                got: "\(describeEscape(at: escapeStart)) at \(location(of: escapeStart))")
        }
    }

    /// Reads four hex digits after `\u`.
    mutating func hex4(escapeStart: Int) throws(InputError) -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard index < count, let d = hexValue(bytes[index]) else {
                throw InputError(
                    path: "", expected: "four hex digits after \\u",
                    got: "\(describe(at: index)) at \(location(of: index))")
            }
            v = v << 4 | d
            index += 1
        }
        return v
    }

    mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | (scalar >> 6)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | (scalar >> 12)))
            scratch.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        default:
            scratch.append(UInt8(0xF0 | (scalar >> 18)))
            scratch.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
            scratch.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            scratch.append(UInt8(0x80 | (scalar & 0x3F)))
        }
    }

    // MARK: Error rendering

    func failure(expected: String) -> InputError {
        InputError(path: "", expected: expected, got: "\(describe(at: index)) at \(location(of: index))")
    }

    /// "line L, column C" of a byte offset; columns count Unicode scalars, both 1-based.
    func location(of position: Int) -> String {
        var line = 1
        var column = 1
        var k = 0
        let end = min(position, count)
        while k < end {
            let b = bytes[k]
            if b == Byte.newline {
                line += 1
                column = 1
            } else if b & 0xC0 != 0x80 {
                column += 1
            }
            k += 1
        }
        return "line \(line), column \(column)"
    }

    /// A short rendering of what is at a position: `'x'`, `'NaN'`, a control character or end of input.
    func describe(at position: Int) -> String {
        guard position < count else { return "end of input" }
        let b = bytes[position]
        if b < 0x20 || b == 0x7F { return "control character U+00\(hex2(b))" }
        if b < 0x80 {
            if isWordByte(b) { return quotedToken(from: position) }
            return "'\(Character(Unicode.Scalar(b)))'"
        }
        var probe = self
        probe.index = position
        do throws(InputError) {
            let n = try probe.utf8SequenceLength()
            let s = String(decoding: UnsafeBufferPointer(rebasing: bytes[position..<(position + n)]), as: UTF8.self)
            return "'\(s)'"
        } catch {
            return "byte 0x\(hex2(b))"
        }
    }

    func describeEscape(at position: Int) -> String {
        guard position + 1 < count else { return "'\\'" }
        let b = bytes[position + 1]
        if b < 0x20 || b >= 0x7F { return "'\\' followed by \(describe(at: position + 1))" }
        return "'\\\(Character(Unicode.Scalar(b)))'"
    }

    /// The run of letters, digits, '.', '+' and '-' starting at a position, quoted (at most 24 bytes).
    func quotedToken(from position: Int) -> String {
        var end = position
        while end < count, end - position < 24 {
            let b = bytes[end]
            guard isWordByte(b) || b == Byte.dot || b == Byte.plus || b == Byte.minus else { break }
            end += 1
        }
        if end == position { end = position + 1 }
        return "'\(String(decoding: UnsafeBufferPointer(rebasing: bytes[position..<end]), as: UTF8.self))'"
    }
}

@inline(__always)
func isDigit(_ b: UInt8) -> Bool { b >= Byte.zero && b <= Byte.nine }

@inline(__always)
func isWordByte(_ b: UInt8) -> Bool {
    (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F
}

@inline(__always)
private func hexValue(_ b: UInt8) -> UInt32? {
    switch b {
    case 0x30...0x39: return UInt32(b - 0x30)
    case 0x41...0x46: return UInt32(b - 0x41 + 10)
    case 0x61...0x66: return UInt32(b - 0x61 + 10)
    default: return nil
    }
}

private let hexDigits: [Character] = Array("0123456789ABCDEF")

private func hex2(_ b: UInt8) -> String {
    String([hexDigits[Int(b >> 4)], hexDigits[Int(b & 0xF)]])
}

private func hex4String(_ v: UInt32) -> String {
    String([hexDigits[Int(v >> 12 & 0xF)], hexDigits[Int(v >> 8 & 0xF)], hexDigits[Int(v >> 4 & 0xF)], hexDigits[Int(v & 0xF)]])
}
