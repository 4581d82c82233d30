import Crypto
import Foundation
import SoundtrackStore

/// API key secrets: `stk_<id>_<secret>`, where `<id>` (12 hex digits) is public and shown by
/// `keys list`, and the whole string is shown once at creation and stored only as its SHA-256.
///
/// ```swift
/// var rng = SystemRandomNumberGenerator()
/// let (secret, record) = APIKeys.generate(role: .user, user: "u-1042", label: nil, at: Date(), using: &rng)
/// try store.insertKey(record)   // keeps record.hash, never `secret`
/// ```
public enum APIKeys {
    /// The prefix of every key.
    public static let prefix = "stk_"

    /// Makes a new key for a role (and user, for `.user`), from the given randomness.
    /// - Returns: the secret to show once, and the record to store.
    public static func generate<R: RandomNumberGenerator>(
        role: APIKeyRecord.Role, user: String?, label: String?, at: Date, using rng: inout R
    ) -> (secret: String, record: APIKeyRecord) {
        let id = hex((0..<6).map { _ in UInt8.random(in: 0...255, using: &rng) })
        let secret = hex((0..<24).map { _ in UInt8.random(in: 0...255, using: &rng) })
        let key = "\(prefix)\(id)_\(secret)"
        return (key, APIKeyRecord(id: id, hash: hash(key), role: role, user: role == .user ? user : nil, label: label, createdAt: at))
    }

    /// The lower-case hex SHA-256 of a key, as stored.
    public static func hash(_ key: String) -> String {
        hex(Array(SHA256.hash(data: Data(key.utf8))))
    }

    /// Whether a string has the shape of a key (cheap check before hashing).
    public static func isWellFormed(_ key: String) -> Bool {
        let u = key.utf8
        guard u.count == 4 + 12 + 1 + 48, key.hasPrefix(prefix) else { return false }
        return u.dropFirst(4).enumerated().allSatisfy { i, c in
            i == 12 ? c == UInt8(ascii: "_") : (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66)
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
