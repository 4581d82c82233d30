import Foundation
import GRDB
import SoundtrackContext

/// An API key of the HTTP service as stored: never the secret, only its SHA-256 hash.
public struct APIKeyRecord: Sendable, Equatable {
    /// What a key may reach.
    public enum Role: String, Sendable, Equatable {
        /// One user's own picks, feedback and bins.
        case user
        /// Every user, and managing users.
        case admin
    }

    /// The public identifier of the key (the part of the secret before the second `_`), for listing and revoking.
    public var id: String
    /// Lower-case hex SHA-256 of the whole secret.
    public var hash: String
    /// What the key may reach.
    public var role: Role
    /// The user a `user` key belongs to; `nil` for an admin key.
    public var user: String?
    /// A free label (who or what the key is for).
    public var label: String?
    /// When the key was created.
    public var createdAt: Date
    /// When the key was revoked; a revoked key authenticates nothing.
    public var revokedAt: Date?

    /// Creates a record.
    public init(id: String, hash: String, role: Role, user: String?, label: String?, createdAt: Date, revokedAt: Date? = nil) {
        self.id = id
        self.hash = hash
        self.role = role
        self.user = user
        self.label = label
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}

extension Store {
    /// Stores a new API key (its hash only).
    /// - Throws: ``RuleError/unknownUser(_:)``, ``RuleError/keyExists(_:)`` for an id or secret in use, ``InputError`` (`label`) for a label over 128 characters.
    public func insertKey(_ key: APIKeyRecord) throws {
        if let label = key.label, label.count > 128 {
            throw InputError(path: "label", expected: "a label of at most 128 characters", got: "\(label.count) characters")
        }
        try database.write { db in
            if let user = key.user, try !Self.userExists(db, user) { throw RuleError.unknownUser(user) }
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM api_keys WHERE id = ? OR hash = ?", arguments: [key.id, key.hash]) == true {
                throw RuleError.keyExists(key.id)
            }
            try db.execute(
                sql: "INSERT INTO api_keys (id, hash, role, user_id, label, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [key.id, key.hash, key.role.rawValue, key.user, key.label, Timestamp(date: key.createdAt, offsetSeconds: 0).rfc3339])
        }
    }

    /// The key whose secret hashes to `hash`, revoked or not; `nil` when there is none.
    public func key(hash: String) throws -> APIKeyRecord? {
        try database.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM api_keys WHERE hash = ?", arguments: [hash]).map(Self.keyRecord)
        }
    }

    /// Every key's id and whether it is revoked, in one query: for a cache of looked-up keys to
    /// revalidate all its entries at once.
    public func keyRevocations() throws -> [String: Bool] {
        try database.read { db in
            var out: [String: Bool] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT id, revoked_at IS NOT NULL FROM api_keys")
            while let r = try rows.next() { out[r[0]] = r[1] }
            return out
        }
    }

    /// All keys, by creation time then id (hashes included, secrets never stored).
    public func keys() throws -> [APIKeyRecord] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM api_keys ORDER BY created_at, id").map(Self.keyRecord)
        }
    }

    /// Revokes a key by id.
    /// - Returns: false when there is no such key or it was already revoked.
    @discardableResult
    public func revokeKey(id: String, at: Date) throws -> Bool {
        try database.write { db in
            try db.execute(
                sql: "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                arguments: [Timestamp(date: at, offsetSeconds: 0).rfc3339, id])
            return db.changesCount > 0
        }
    }

    private static func keyRecord(_ r: Row) -> APIKeyRecord {
        APIKeyRecord(
            id: r["id"], hash: r["hash"], role: APIKeyRecord.Role(rawValue: r["role"]) ?? .user, user: r["user_id"],
            label: r["label"], createdAt: Timestamp(rfc3339: r["created_at"])?.date ?? Date(timeIntervalSince1970: 0),
            revokedAt: (r["revoked_at"] as String?).flatMap { Timestamp(rfc3339: $0)?.date })
    }
}
