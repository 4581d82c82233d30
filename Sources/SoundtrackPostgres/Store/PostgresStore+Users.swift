import Foundation
import PostgresNIO
import SoundtrackContext
import SoundtrackStore

extension PostgresStore {
    /// Adds a person with default settings (``PersonStore/addUser(_:at:)``).
    /// - Throws: `RuleError.userExists`; ``PostgresStoreError/noEmailKey`` for an email without a key.
    public func addUser(_ user: NewUser, at: Date) throws {
        let hash = try user.email.map { email in
            guard let emailKey else { throw PostgresStoreError.noEmailKey }
            return emailKey.hash(email)
        }
        try transaction(locking: [user.id]) { tx in
            if try Self.userExists(tx, user.id) { throw RuleError.userExists(user.id) }
            let scheme = hash == nil ? nil : EmailHashScheme.hmacSHA256.rawValue
            let age = user.age.map(Int64.init)
            try tx.execute(
                """
                INSERT INTO users (user_id, email_hash, email_hash_scheme, age, region, created_at)
                VALUES (\(user.id), \(hash), \(scheme), \(age), \(user.region), \(StoredForm.timestamp(at)))
                """)
            try tx.execute("INSERT INTO user_settings (user_id) VALUES (\(user.id))")
        }
    }

    /// Whether a person exists.
    public func userExists(_ id: String) throws -> Bool {
        try transaction(locking: [], readOnly: true) { tx in try Self.userExists(tx, id) }
    }

    static func userExists(_ tx: PostgresTransaction, _ id: String) throws -> Bool {
        !(try tx.query("SELECT 1 FROM users WHERE user_id = \(id)").isEmpty)
    }

    /// A person as `users show` lists them, or `nil`.
    public func user(_ id: String) throws -> Store.UserSummary? {
        try transaction(locking: [], readOnly: true) { tx in
            let rows = try tx.query(
                """
                SELECT u.user_id, u.email_hash, u.email_hash_scheme, u.age, u.region, u.created_at,
                       (SELECT count(*) FROM bins b WHERE b.user_id = u.user_id),
                       (SELECT count(*) FROM feedback f WHERE f.user_id = u.user_id),
                       (SELECT count(*) FROM picks p WHERE p.user_id = u.user_id)
                FROM users u WHERE u.user_id = \(id)
                """)
            guard let row = rows.first else { return nil }
            let (user, hash, scheme, age, region, created, bins, feedback, picks) =
                try row.decode((String, String?, String?, Int?, String?, String, Int, Int, Int).self)
            return Store.UserSummary(
                id: user, emailHash: hash, emailHashScheme: hash.map { _ in scheme.flatMap(EmailHashScheme.init(rawValue:)) ?? .sha256 },
                age: age, region: region, createdAt: Timestamp(rfc3339: created)?.date ?? Date(timeIntervalSince1970: 0),
                bins: bins, feedback: feedback, picks: picks)
        }
    }

    // MARK: - Settings

    /// A person's settings (the defaults when their row is missing).
    /// - Throws: `RuleError.unknownUser`.
    public func settings(user: String) throws -> UserSettings {
        try transaction(locking: [], readOnly: true) { tx in
            guard try Self.userExists(tx, user) else { throw RuleError.unknownUser(user) }
            return try Self.settings(tx, user: user)
        }
    }

    /// Changes a person's settings in one transaction (``PersonStore/updateSettings(user:_:)``).
    /// - Throws: `RuleError.unknownUser`, what `change` throws (nothing is written then).
    @discardableResult
    public func updateSettings(user: String, _ change: (inout UserSettings) throws -> Void) throws -> UserSettings {
        try transaction(locking: [user]) { tx in
            guard try Self.userExists(tx, user) else { throw RuleError.unknownUser(user) }
            var settings = try Self.settings(tx, user: user)
            let before = settings
            try change(&settings)
            try Self.writeSettings(tx, user: user, settings, scrubLocation: before.locationServices && !settings.locationServices)
            return settings
        }
    }

    static func settings(_ tx: PostgresTransaction, user: String) throws -> UserSettings {
        let rows = try tx.query(
            "SELECT location_services, volume_control, keep_raw_snapshots, calendar_titles FROM user_settings WHERE user_id = \(user)")
        guard let row = rows.first else { return UserSettings() }
        let (location, volume, keep, titles) = try row.decode((Int64, Int64, Int64, Int64).self)
        return UserSettings(locationServices: location != 0, volumeControl: volume != 0, keepRawSnapshots: keep != 0, calendarTitles: titles != 0)
    }

    /// Writes a person's settings as the SQLite store does: with `scrubLocation` the person's
    /// places go and the coordinates, accuracy and speed leave the snapshots their feedback keeps;
    /// calendar titles turned off leave their imported events and those snapshots.
    static func writeSettings(_ tx: PostgresTransaction, user: String, _ settings: UserSettings, scrubLocation: Bool) throws {
        let titlesTurnedOff = try Self.settings(tx, user: user).calendarTitles && !settings.calendarTitles
        func flag(_ b: Bool) -> Int64 { b ? 1 : 0 }
        try tx.execute(
            """
            INSERT INTO user_settings (user_id, location_services, volume_control, keep_raw_snapshots, calendar_titles)
            VALUES (\(user), \(flag(settings.locationServices)), \(flag(settings.volumeControl)), \(flag(settings.keepRawSnapshots)),
                \(flag(settings.calendarTitles)))
            ON CONFLICT (user_id) DO UPDATE SET location_services = excluded.location_services,
                volume_control = excluded.volume_control, keep_raw_snapshots = excluded.keep_raw_snapshots,
                calendar_titles = excluded.calendar_titles
            """)
        if titlesTurnedOff {
            try tx.execute("UPDATE calendar_events SET title = NULL, category = 'other' WHERE user_id = \(user)")
            try tx.execute(
                """
                UPDATE feedback SET snapshot = jsonb_set(snapshot::jsonb, '{calendar,events}', (
                    SELECT coalesce(jsonb_agg(e.value - 'title' ORDER BY e.n), '[]'::jsonb)
                    FROM jsonb_array_elements(snapshot::jsonb -> 'calendar' -> 'events') WITH ORDINALITY AS e (value, n)))::text
                WHERE user_id = \(user) AND snapshot IS NOT NULL AND jsonb_typeof(snapshot::jsonb -> 'calendar' -> 'events') = 'array'
                """)
        }
        guard scrubLocation else { return }
        try tx.execute("DELETE FROM places WHERE user_id = \(user)")
        try tx.execute(
            """
            UPDATE feedback SET snapshot = (snapshot::jsonb #- '{location,lat}' #- '{location,lon}' #- '{location,accuracy_m}'
                #- '{location,speed_mps}')::text
            WHERE user_id = \(user) AND snapshot IS NOT NULL
            """)
    }

    // MARK: - API keys

    /// Stores a new API key (its hash only).
    /// - Throws: `RuleError.unknownUser`, `RuleError.keyExists`, `InputError` (`label`) over 128 characters.
    public func insertKey(_ key: APIKeyRecord) throws {
        if let label = key.label, label.count > 128 {
            throw InputError(path: "label", expected: "a label of at most 128 characters", got: "\(label.count) characters")
        }
        try transaction(locking: key.user.map { [$0] } ?? []) { tx in
            if let user = key.user, try !Self.userExists(tx, user) { throw RuleError.unknownUser(user) }
            if try !tx.query("SELECT 1 FROM api_keys WHERE id = \(key.id) OR hash = \(key.hash)").isEmpty {
                throw RuleError.keyExists(key.id)
            }
            try tx.execute(
                """
                INSERT INTO api_keys (id, hash, role, user_id, label, created_at)
                VALUES (\(key.id), \(key.hash), \(key.role.rawValue), \(key.user), \(key.label), \(StoredForm.timestamp(key.createdAt)))
                """)
        }
    }

    /// The key whose secret hashes to `hash`, revoked or not; `nil` when there is none.
    public func key(hash: String) throws -> APIKeyRecord? {
        try transaction(locking: [], readOnly: true) { tx in
            let rows = try tx.query("SELECT id, hash, role, user_id, label, created_at, revoked_at FROM api_keys WHERE hash = \(hash)")
            guard let row = rows.first else { return nil }
            let (id, hash, role, user, label, created, revoked) = try row.decode((String, String, String, String?, String?, String, String?).self)
            return APIKeyRecord(
                id: id, hash: hash, role: APIKeyRecord.Role(rawValue: role) ?? .user, user: user, label: label,
                createdAt: Timestamp(rfc3339: created)?.date ?? Date(timeIntervalSince1970: 0),
                revokedAt: revoked.flatMap { Timestamp(rfc3339: $0)?.date })
        }
    }

    /// Every key's id and whether it is revoked, in one query.
    public func keyRevocations() throws -> [String: Bool] {
        try transaction(locking: [], readOnly: true) { tx in
            var out: [String: Bool] = [:]
            for row in try tx.query("SELECT id, revoked_at IS NOT NULL FROM api_keys") {
                let (id, revoked) = try row.decode((String, Bool).self)
                out[id] = revoked
            }
            return out
        }
    }

    /// Revokes a key by id.
    /// - Returns: false when there is no such key or it was already revoked.
    @discardableResult
    public func revokeKey(id: String, at: Date) throws -> Bool {
        try transaction(locking: []) { tx in
            try tx.execute("UPDATE api_keys SET revoked_at = \(StoredForm.timestamp(at)) WHERE id = \(id) AND revoked_at IS NULL") > 0
        }
    }
}
