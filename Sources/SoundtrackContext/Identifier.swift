import Foundation

/// The one form of every id that crosses the boundary (users, events, picks, keys' users, places,
/// in JSON, URL paths and command-line arguments): Unicode Normalization Form C (NFC). Two ids that
/// are the same text in different forms (`café` with `é` as one code point or as `e` and a combining
/// accent; `Å` and the Ångström sign) are one id: normalised when read, they are stored, compared,
/// authorised and cached as one (docs/formats.md, "Identifiers").
///
/// ```swift
/// Identifier.normalized("cafe\u{301}") == "caf\u{E9}"   // true, and the same bytes
/// ```
public enum Identifier {
    /// The id in NFC (ASCII ids, the common case, are returned as they are).
    public static func normalized(_ s: String) -> String {
        if s.utf8.allSatisfy({ $0 < 0x80 }) { return s }
        return s.precomposedStringWithCanonicalMapping
    }
}
