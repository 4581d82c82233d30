import Foundation

/// Turns free text (place labels, event titles) into comparable tokens.
///
/// Tokens are maximal runs of letters and digits, lower-cased, with diacritics folded
/// (`Révisions` → `revisions`, `Größe` → `grosse`, `Łódź` → `lodz`). Everything else
/// (spaces, punctuation, dashes, symbols, emoji) separates tokens.
///
/// ```swift
/// TextNormalizer.tokens("Study group – Algorithmen & Café")  // ["study", "group", "algorithmen", "cafe"]
/// ```
public enum TextNormalizer {
    /// The normalised tokens of a text.
    ///
    /// - Parameter text: any text.
    /// - Returns: lower-case, diacritic-free tokens in order.
    public static func tokens(_ text: String) -> [String] {
        var tokens: [String] = []
        var current: [UInt8] = []
        current.reserveCapacity(32)
        for scalar in text.unicodeScalars {
            let v = scalar.value
            var separator = false
            if v < 0x80 {
                let b = UInt8(v)
                switch b {
                case 0x30...0x39, 0x61...0x7A: current.append(b)
                case 0x41...0x5A: current.append(b + 0x20)
                default: separator = true
                }
            } else if let folded = latinFold[v] {
                current.append(contentsOf: folded.utf8)
            } else {
                switch scalar.properties.generalCategory {
                case .nonspacingMark, .spacingMark, .enclosingMark:
                    break  // a combining accent: part of the letter before it
                case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                    .decimalNumber, .letterNumber, .otherNumber:
                    for s in String(scalar).decomposedStringWithCanonicalMapping.lowercased().unicodeScalars
                    where !isMark(s) {
                        current.append(contentsOf: String(s).utf8)
                    }
                default:
                    separator = true
                }
            }
            if separator, !current.isEmpty {
                tokens.append(String(decoding: current, as: UTF8.self))
                current.removeAll(keepingCapacity: true)
            }
        }
        if !current.isEmpty { tokens.append(String(decoding: current, as: UTF8.self)) }
        return tokens
    }

    static func isMark(_ s: Unicode.Scalar) -> Bool {
        switch s.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }

    /// Folds of the Latin-1 Supplement and Latin Extended-A/B letters to lower-case ASCII.
    static let latinFold: [UInt32: String] = {
        var table: [UInt32: String] = [:]
        let special: [UInt32: String] = [
            0xDF: "ss", 0x1E9E: "ss", 0xC6: "ae", 0xE6: "ae", 0x152: "oe", 0x153: "oe", 0xD8: "o", 0xF8: "o",
            0x141: "l", 0x142: "l", 0x110: "d", 0x111: "d", 0xD0: "d", 0xF0: "d", 0xDE: "th", 0xFE: "th",
            0x131: "i", 0x126: "h", 0x127: "h", 0x166: "t", 0x167: "t", 0x132: "ij", 0x133: "ij"
        ]
        for v in UInt32(0xC0)...UInt32(0x24F) {
            if let s = special[v] {
                table[v] = s
                continue
            }
            guard let scalar = Unicode.Scalar(v), scalar.properties.isAlphabetic else { continue }
            let base = String(scalar).decomposedStringWithCanonicalMapping.lowercased().unicodeScalars.filter { !isMark($0) }
            if !base.isEmpty, base.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic) }) {
                table[v] = String(String.UnicodeScalarView(base))
            }
        }
        for (v, s) in special { table[v] = s }
        return table
    }()
}
