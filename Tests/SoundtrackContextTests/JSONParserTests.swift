import Foundation
import Testing

@testable import SoundtrackContext

/// The description of the error that parsing `text` throws, or nil when it parses.
func parseError(_ text: String) -> String? {
    do {
        _ = try JSONParser.parse(text)
        return nil
    } catch {
        return error.description
    }
}

func parseError(_ data: Data) -> String? {
    do {
        _ = try JSONParser.parse(data)
        return nil
    } catch {
        return error.description
    }
}

func parseError(bytes: [UInt8]) -> String? {
    do {
        _ = try JSONParser.parse(bytes)
        return nil
    } catch {
        return error.description
    }
}

@Suite("JSON parser")
struct JSONParserTests {
    @Test func parsesADocument() throws {
        let v = try JSONParser.parse(
            #"""
            { "user": "u-1", "n": [1, -2.5, 3e2, true, false, null], "o": {"k": {}} , "e": [] }
            """#)
        #expect(
            v
                == .object([
                    ("user", .string("u-1")),
                    ("n", .array([.number(1), .number(-2.5), .number(300), .bool(true), .bool(false), .null])),
                    ("o", .object([("k", .object([]))])),
                    ("e", .array([]))
                ]))
        #expect(v["user"] == .string("u-1"))
        #expect(v["missing"] == nil)
    }

    @Test func keepsKeyOrder() throws {
        let v = try JSONParser.parse(#"{"z":1,"a":2,"m":3}"#)
        guard case .object(let pairs) = v else { Issue.record("not an object"); return }
        #expect(pairs.map(\.0) == ["z", "a", "m"])
    }

    @Test(arguments: [
        ("0", 0.0), ("-0", -0.0), ("7", 7), ("-12", -12), ("1.5", 1.5), ("0.1", 0.1), ("1e2", 100), ("1E-2", 0.01),
        ("2.5e+3", 2500), ("123456789012345678901234567890", 1.2345678901234568e29),
        ("9007199254740993", 9007199254740992), ("2.2250738585072014e-308", 2.2250738585072014e-308),
        ("5e-324", Double.leastNonzeroMagnitude), ("1e-400", 0), ("1.7976931348623157e308", 1.7976931348623157e308),
        ("0.000001", 0.000001), ("3.14159265358979323846", 3.141592653589793), ("1e22", 1e22), ("1e23", 1e23),
        ("-0.0", -0.0), ("100000000000000000000000e-3", 1e20)
    ])
    func parsesNumbers(text: String, expected: Double) throws {
        let v = try JSONParser.parse(text)
        guard case .number(let x) = v else { Issue.record("not a number"); return }
        #expect(x == expected)
        #expect(x.sign == expected.sign)
    }

    @Test func numbersMatchTheStandardLibrary() throws {
        var rng = SplitMix(seed: 42)
        for _ in 0..<5000 {
            let intDigits = Int(rng.next() % 12)
            let fracDigits = Int(rng.next() % 12)
            var text = rng.next() % 2 == 0 ? "-" : ""
            text += intDigits == 0 ? "0" : String(1 + rng.next() % 9)
            for _ in 0..<max(0, intDigits - 1) { text += String(rng.next() % 10) }
            if fracDigits > 0 {
                text += "."
                for _ in 0..<fracDigits { text += String(rng.next() % 10) }
            }
            if rng.next() % 3 == 0 { text += "e\(Int(rng.next() % 60) - 30)" }
            let v = try JSONParser.parse(text)
            #expect(v == .number(Double(text)!), "\(text)")
        }
    }

    @Test(arguments: [
        (#""plain""#, "plain"),
        (#""a\"b\\c\/d""#, "a\"b\\c/d"),
        (#""\b\f\n\r\t""#, "\u{08}\u{0C}\n\r\t"),
        (#""\u0041\u00e9\u65E5""#, "Aé日"),
        (#""\ud83c\udfb5 music""#, "🎵 music"),
        (#""\u0000""#, "\u{0}"),
        ("\"é日本🎵\"", "é日本🎵"),
        ("\"mixed é \\n 🎵\"", "mixed é \n 🎵"),
        (#""""#, "")
    ])
    func parsesStrings(text: String, expected: String) throws {
        #expect(try JSONParser.parse(text) == .string(expected))
    }

    @Test func skipsAByteOrderMark() throws {
        #expect(try JSONParser.parse([0xEF, 0xBB, 0xBF] + Array("[1]".utf8)) == .array([.number(1)]))
    }

    @Test func parsesDataAndRawBytes() throws {
        let data = Data(#"{"a":[1]}"#.utf8)
        let expected = JSONValue.object([("a", .array([.number(1)]))])
        #expect(try JSONParser.parse(data) == expected)
        let v = try data.withUnsafeBytes { raw in try JSONParser.parse(bytes: raw) }
        #expect(v == expected)
    }

    @Test(arguments: [
        ("", "input: expected a JSON value, got end of input at line 1, column 1"),
        ("   ", "input: expected a JSON value, got end of input at line 1, column 4"),
        ("[1, 2,]", "input: expected a JSON value, got ']' at line 1, column 7"),
        (#"{"a":1,}"#, "input: expected a string key, got '}' at line 1, column 8"),
        (#"{,}"#, "input: expected a string key or '}', got ',' at line 1, column 2"),
        (#"{a:1}"#, "input: expected a string key or '}', got 'a' at line 1, column 2"),
        (#"{"a" 1}"#, "input: expected ':' after the key, got '1' at line 1, column 6"),
        ("[1 2]", "input: expected ',' or ']', got '2' at line 1, column 4"),
        (#"{"a":1 "b":2}"#, "input: expected ',' or '}', got '\"' at line 1, column 8"),
        ("[1", "input: expected ',' or ']', got end of input at line 1, column 3"),
        (#"{"a":1"#, "input: expected ',' or '}', got end of input at line 1, column 7"),
        ("1 2", "input: expected end of input, got '2' at line 1, column 3"),
        ("{} x", "input: expected end of input, got 'x' at line 1, column 4"),
        ("01", "input: expected a number without leading zeros, got '01' at line 1, column 1"),
        ("[-007]", "input: expected a number without leading zeros, got '-007' at line 1, column 2"),
        ("-", "input: expected a digit after '-', got end of input at line 1, column 2"),
        ("-x", "input: expected a digit after '-', got 'x' at line 1, column 2"),
        ("1.", "input: expected a digit after '.', got end of input at line 1, column 3"),
        (".5", "input: expected a JSON value, got '.' at line 1, column 1"),
        ("1.e3", "input: expected a digit after '.', got 'e3' at line 1, column 3"),
        ("1e", "input: expected a digit in the exponent, got end of input at line 1, column 3"),
        ("1e+", "input: expected a digit in the exponent, got end of input at line 1, column 4"),
        ("+1", "input: expected a JSON value, got '+' at line 1, column 1"),
        ("1e999", "input: expected a number within the range of a double, got 1e999 at line 1, column 1"),
        ("[-1.5e400]", "input: expected a number within the range of a double, got -1.5e400 at line 1, column 2"),
        ("NaN", "input: expected a JSON value, got 'NaN' at line 1, column 1"),
        ("Infinity", "input: expected a JSON value, got 'Infinity' at line 1, column 1"),
        ("-Infinity", "input: expected a digit after '-', got 'Infinity' at line 1, column 2"),
        ("tru", "input: expected a JSON value, got 'tru' at line 1, column 1"),
        ("truex", "input: expected a JSON value, got 'truex' at line 1, column 1"),
        ("nul", "input: expected a JSON value, got 'nul' at line 1, column 1"),
        ("[True]", "input: expected a JSON value, got 'True' at line 1, column 2"),
        ("'a'", "input: expected a JSON value, got ''' at line 1, column 1"),
        ("// comment\n1", "input: expected a JSON value, got '/' at line 1, column 1"),
        ("\"abc", "input: expected '\"' to close the string that starts at line 1, column 1, got end of input at line 1, column 5"),
        ("\"a\tb\"", "input: expected a string without raw control characters (escape them, e.g. \\n or \\u0001), got control character U+0009 at line 1, column 3"),
        ("\"a\\n\nb\"", "input: expected a string without raw control characters (escape them, e.g. \\n or \\u0001), got control character U+000A at line 1, column 5"),
        (#""\x""#, #"input: expected an escape sequence (\" \\ \/ \b \f \n \r \t or \uXXXX), got '\x' at line 1, column 2"#),
        (#""\u12G4""#, #"input: expected four hex digits after \u, got 'G4' at line 1, column 6"#),
        (#""\u12""#, #"input: expected four hex digits after \u, got '"' at line 1, column 6"#),
        (#""\uD83D""#, #"input: expected a low surrogate \uDC00-\uDFFF after a high surrogate, got '"' at line 1, column 8"#),
        (#""\uD83Dx""#, #"input: expected a low surrogate \uDC00-\uDFFF after a high surrogate, got 'x' at line 1, column 8"#),
        (#""\uD83D\u0041""#, #"input: expected a low surrogate \uDC00-\uDFFF after a high surrogate, got \u0041 at line 1, column 8"#),
        (#""\uDE00""#, #"input: expected a Unicode scalar (a low surrogate must follow a high surrogate), got \uDE00 at line 1, column 2"#),
        (#"{"a":1,"a":2}"#, #"input: expected unique keys in an object, got a second "a" at line 1, column 8"#),
        ("{\n  \"user\": \"u\",\n  \"at\": tru\n}", "input: expected a JSON value, got 'tru' at line 3, column 9"),
        ("[\"é日\", x]", "input: expected a JSON value, got 'x' at line 1, column 8"),
        ("[é]", "input: expected a JSON value, got 'é' at line 1, column 2")
    ])
    func rejectsMalformedInput(text: String, message: String) {
        #expect(parseError(text) == message)
    }

    @Test(
        arguments: [
            ([0x22, 0xFF, 0x22], "input: expected valid UTF-8, got byte 0xFF at line 1, column 2"),
            ([0x22, 0xC0, 0xAF, 0x22], "input: expected valid UTF-8, got byte 0xC0 at line 1, column 2"),  // overlong '/'
            ([0x22, 0xED, 0xA0, 0x80, 0x22], "input: expected valid UTF-8, got byte 0xED at line 1, column 2"),  // encoded surrogate
            ([0x22, 0x61, 0xE6, 0x97, 0x22], "input: expected valid UTF-8, got byte 0xE6 at line 1, column 3"),  // truncated
            ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], "input: expected valid UTF-8, got byte 0xF4 at line 1, column 2"),  // > U+10FFFF
            ([0x22, 0x80, 0x22], "input: expected valid UTF-8, got byte 0x80 at line 1, column 2"),  // lone continuation
            ([0x22, 0x5C, 0x6E, 0xFF, 0x22], "input: expected valid UTF-8, got byte 0xFF at line 1, column 4"),  // after an escape
            ([0x5B, 0xFF, 0x5D], "input: expected a JSON value, got byte 0xFF at line 1, column 2")
        ] as [([UInt8], String)])
    func rejectsInvalidUTF8(bytes: [UInt8], message: String) {
        #expect(parseError(bytes: bytes) == message)
    }

    @Test func rejectsDuplicateKeysInLargeObjects() {
        let keys = (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        #expect(parseError("{\(keys)}") == nil)
        #expect(parseError("{\(keys),\"k17\":0}")?.hasPrefix("input: expected unique keys in an object, got a second \"k17\"") == true)
        // Keys are compared as Swift strings: canonically equivalent spellings are the same key.
        #expect(parseError(#"{"é":1,"e\u0301":2}"#) == #"input: expected unique keys in an object, got a second "é" at line 1, column 8"#)
        #expect(parseError(#"{"e":1,"é":2}"#) == nil)
        #expect(parseError(Data()) == "input: expected a JSON value, got end of input at line 1, column 1")
        // Same key in different objects is fine.
        #expect(parseError(#"[{"a":1},{"a":2}]"#) == nil)
    }

    @Test func limitsDepth() throws {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(parseError(ok) == nil)
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(parseError(deep) == "input: expected at most 64 nested arrays and objects, got '[' at line 1, column 65")
        let objects = String(repeating: #"{"a":"#, count: 3) + "1" + String(repeating: "}", count: 3)
        #expect(throws: InputError.self) { try JSONParser.parse(objects, maxDepth: 2) }
        #expect(try JSONParser.parse(objects, maxDepth: 3)["a"]?["a"]?["a"] == .number(1))
        // A huge nesting must not overflow the stack.
        #expect(parseError(String(repeating: "[", count: 100_000))?.contains("nested") == true)
    }

    @Test func serializesCompactly() {
        let v = JSONValue.object([
            ("b", .number(3)), ("a", .number(0.45)), ("n", .number(-0.0)), ("big", .number(1e20)),
            ("neg", .number(-12)), ("small", .number(1e-7)), ("t", .bool(true)), ("z", .null),
            ("s", .string("q\"b\\s/\n\t\u{01}é🎵")), ("arr", .array([.number(1), .array([]), .object([])]))
        ])
        #expect(v.serialized() == #"{"b":3,"a":0.45,"n":0,"big":1e+20,"neg":-12,"small":1e-07,"t":true,"z":null,"s":"q\"b\\s/\n\t\u0001é🎵","arr":[1,[],{}]}"#)
        #expect(JSONValue.number(.infinity).serialized() == "null")
        #expect(JSONValue.number(999_999_999_999_999).serialized() == "999999999999999")
        #expect(JSONValue.number(1e15).serialized() == "1000000000000000")
        #expect(JSONValue.number(1e17).serialized() == "1e+17")
        #expect(JSONValue.number(9_007_199_254_740_992).serialized() == "9007199254740992")
        #expect(JSONValue.number(2.5).serialized() == "2.5")
    }

    @Test func roundTripsThroughSerialization() throws {
        let text = #"""
            {"user":"u-1042","at":"2026-03-14T07:42:10+01:00","x":[0.1,-3,1.5e-9,12345678.875,true,null],
             "s":"tab\tquote\"back\\slash é 🎵 \u0007","o":{"k":{"deep":[[[]]]}}}
            """#
        let v = try JSONParser.parse(text)
        let again = try JSONParser.parse(v.serialized())
        #expect(again == v)
        #expect(again.serialized() == v.serialized())
    }
}

/// A small deterministic generator for property tests.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        return StableHash.mix(state)
    }
}
