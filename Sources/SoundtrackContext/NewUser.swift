import Foundation

/// A user to add: the input of `soundtrack users add` and `POST /v1/users`, validated.
///
/// ```swift
/// let u = try NewUser(json: JSONParser.parse(#"{"id":"u-7","age":31}"#))
/// ```
public struct NewUser: Sendable, Equatable {
    /// The user's id: 1 to 128 characters, no control characters.
    public var id: String
    /// The email address, trimmed and lower-cased (the store keeps only its SHA-256 hash).
    public var email: String?
    /// Age in years, 13...120.
    public var age: Int?
    /// A region such as `DE` or `US-CA`, 1 to 64 characters.
    public var region: String?

    static let knownFields = ["id", "email", "age", "region"]

    /// Validates a user's fields.
    /// - Throws: ``InputError`` naming the first field that breaks a rule.
    public init(id: String, email: String? = nil, age: Int? = nil, region: String? = nil) throws(InputError) {
        self.id = try Validate.identifier(.string(id), path: "id")
        if let age, !(13...120).contains(age) {
            throw InputError(path: "age", expected: "an age in 13...120", got: "\(age)")
        }
        if let region, region.isEmpty || region.count > 64 {
            throw InputError(path: "region", expected: "a region of 1 to 64 characters", got: Got.quoted(region))
        }
        self.email = try email.map { e throws(InputError) -> String in
            let norm = e.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            guard norm.contains("@"), norm.count <= 254 else {
                throw InputError(path: "email", expected: "an email address", got: Got.quoted(e))
            }
            return norm
        }
        self.age = age
        self.region = region
    }

    /// Validates a parsed JSON object (`id`, and optional `email`, `age`, `region`; `null` means absent).
    /// - Throws: ``InputError`` naming the first field that breaks a rule.
    public init(json: JSONValue, strict: Bool = false) throws(InputError) {
        let r = try JSONObjectReader(json, base: "")
        try r.rejectUnknown(Self.knownFields, strict: strict)
        try self.init(
            id: r.identifier("id"), email: r.string("email", maxLength: 254), age: r.integer("age", atLeast: 0),
            region: r.string("region", maxLength: 64))
    }
}
