import Foundation

/// A user to add: the input of `soundtrack users add` and `POST /v1/users`, validated.
///
/// ```swift
/// let u = try NewUser(json: JSONParser.parse(#"{"id":"u-7","age":31}"#))
/// ```
public struct NewUser: Sendable, Equatable {
    /// The user's id: 1 to 128 characters and code points, no control characters.
    public var id: String
    /// The email address, trimmed and lower-cased (the store keeps only its keyed hash).
    public var email: String?
    /// Age in years, 13...120.
    public var age: Int?
    /// A region such as `DE` or `US-CA`, 1 to 64 code points, none a control character.
    public var region: String?

    static let knownFields = ["id", "email", "age", "region"]
    /// The longest user id, in Unicode code points (as the store's schema counts).
    public static let maxIdCodePoints = 128
    /// The longest region, in Unicode code points (as the store's schema counts).
    public static let maxRegionCodePoints = 64

    /// Validates a user's fields.
    /// - Throws: ``InputError`` naming the first field that breaks a rule.
    public init(id: String, email: String? = nil, age: Int? = nil, region: String? = nil) throws(InputError) {
        self.id = try Validate.identifier(.string(id), path: "id")
        // The store counts a user's id and region in code points (SQLite's length()), the
        // validators in characters (grapheme clusters): "5" and a skin-tone modifier are one
        // character and two code points. Counted both ways, an id the validators accept is one the
        // store takes, instead of a failed insert.
        if id.unicodeScalars.count > Self.maxIdCodePoints {
            throw InputError(
                path: "id", expected: "a user id of at most \(Self.maxIdCodePoints) Unicode code points",
                got: "\(id.unicodeScalars.count) code points")
        }
        if let age, !(13...120).contains(age) {
            throw InputError(path: "age", expected: "an age in 13...120", got: "\(age)")
        }
        // Without control characters, as ids: SQLite's length() stops at a NUL, so a region that
        // starts with one failed the table's CHECK (a 500, found by scripts/api-fuzz.sh).
        if let region,
            region.isEmpty || region.unicodeScalars.count > Self.maxRegionCodePoints
                || region.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        {
            throw InputError(
                path: "region", expected: "a region of 1 to \(Self.maxRegionCodePoints) Unicode code points without control characters",
                got: Got.quoted(region))
        }
        self.email = try email.map { e throws(InputError) in try Self.normalisedEmail(e) }
        self.age = age
        self.region = region
    }

    /// An email address as it is hashed: trimmed of white space and lower-cased. The only checks:
    /// it contains `@` and has at most 254 characters.
    /// - Throws: ``InputError`` (path `email`) for anything else.
    public static func normalisedEmail(_ e: String) throws(InputError) -> String {
        let norm = e.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard norm.contains("@"), norm.count <= 254 else {
            throw InputError(path: "email", expected: "an email address", got: Got.quoted(e))
        }
        return norm
    }

    /// Validates a parsed JSON object (`id`, and optional `email`, `age`, `region`; `null` means absent).
    /// - Throws: ``InputError`` naming the first field that breaks a rule.
    public init(json: JSONValue, strict: Bool = false) throws(InputError) {
        let r = try JSONObjectReader(json, base: "")
        try r.rejectUnknown(Self.knownFields, strict: strict)
        try self.init(
            id: r.identifier("id"), email: r.string("email", maxLength: 254), age: r.optionalInteger("age", in: 13...120),
            region: r.string("region", maxLength: 64))
    }
}
