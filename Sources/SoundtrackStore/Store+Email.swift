import Foundation
import GRDB
import SoundtrackContext

/// How a user's `email_hash` was made.
public enum EmailHashScheme: String, Sendable, Equatable, CaseIterable {
    /// HMAC-SHA256 of the normalised address under the store's ``EmailKey``: what every address
    /// is hashed with now.
    case hmacSHA256 = "hmac-sha256"
    /// The unkeyed SHA-256 of the normalised address: rows written before schema v8. Anyone holding
    /// the database can confirm a guessed address against it; it is replaced by a keyed hash when
    /// the address is next supplied (``Store/setEmail(_:user:)``, ``Store/emailMatches(_:user:)``).
    case sha256

    /// The scheme of a stored hash from its `email_hash_scheme` column: a hash without one was
    /// written by a build before schema v8 (into a database it had not migrated), so it is SHA-256.
    static func of(_ column: String?) -> EmailHashScheme {
        column.flatMap(EmailHashScheme.init(rawValue:)) ?? .sha256
    }
}

extension Store {
    /// The email key, read or created on first use (see ``EmailKeySource/file(_:)``), checked
    /// against the fingerprint recorded with the database's keyed hashes (recorded on first use:
    /// a database migrated to v9 with keyed hashes records the key it is first given).
    /// Called inside a write transaction.
    /// - Throws: ``EmailKeyError``, ``EmailKeyError/otherKey(source:)`` for a key other than the recorded one.
    func emailKey(_ db: Database) throws -> EmailKey {
        let key = try emailKeys.key {
            try Int.fetchOne(db, sql: "SELECT count(*) FROM users WHERE email_hash_scheme = ?", arguments: [EmailHashScheme.hmacSHA256.rawValue]) ?? 0
        }
        let fingerprint = key.fingerprint
        if let recorded = try String.fetchOne(db, sql: "SELECT value FROM store_settings WHERE name = 'email_key_fingerprint'") {
            guard recorded == fingerprint else { throw EmailKeyError.otherKey(source: emailKeys.sourceDescription) }
        } else {
            try db.execute(sql: "INSERT INTO store_settings (name, value) VALUES ('email_key_fingerprint', ?)", arguments: [fingerprint])
        }
        return key
    }

    /// Replaces a user's email (`nil`: removes it); the address is normalised as ``NewUser`` does
    /// and stored only as its keyed hash, which also re-keys a legacy hash.
    /// - Throws: ``InputError`` for an address that is not one; ``RuleError/unknownUser(_:)``;
    ///   ``EmailKeyError`` when the email key cannot be had.
    public func setEmail(_ email: String?, user id: String) throws {
        let normalised = try email.map { e throws(InputError) in try NewUser.normalisedEmail(e) }
        try database.write { db in
            guard try Self.userExists(db, id) else { throw RuleError.unknownUser(id) }
            let hash = try normalised.map { try emailKey(db).hash($0) }
            try db.execute(
                sql: "UPDATE users SET email_hash = ?, email_hash_scheme = ? WHERE id = ?",
                arguments: [hash, hash == nil ? nil : EmailHashScheme.hmacSHA256.rawValue, id])
        }
    }

    /// Whether `email` is the user's address (normalised first, as ``NewUser`` does). A legacy
    /// hash (``EmailHashScheme/sha256``) that matches is replaced by the keyed hash: the address
    /// was supplied, so it can be hashed again.
    /// - Returns: false for a user without an email, or another address.
    /// - Throws: ``RuleError/unknownUser(_:)``; ``EmailKeyError`` when the email key cannot be had.
    public func emailMatches(_ email: String, user id: String) throws -> Bool {
        guard let normalised = try? NewUser.normalisedEmail(email) else { return false }
        return try database.write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT email_hash, email_hash_scheme FROM users WHERE id = ?", arguments: [id]) else {
                throw RuleError.unknownUser(id)
            }
            guard let stored: String = row["email_hash"] else { return false }
            switch EmailHashScheme.of(row["email_hash_scheme"]) {
            case .hmacSHA256:
                return try emailKey(db).hash(normalised) == stored
            case .sha256:
                guard Hashing.sha256Hex(normalised) == stored else { return false }
                try db.execute(
                    sql: "UPDATE users SET email_hash = ?, email_hash_scheme = ? WHERE id = ?",
                    arguments: [try emailKey(db).hash(normalised), EmailHashScheme.hmacSHA256.rawValue, id])
                return true
            }
        }
    }
}
