import Foundation
import GRDB
import SoundtrackContext

extension Store {
    /// A user's settings (`user_settings`; the defaults when the row is missing).
    /// - Throws: ``RuleError/unknownUser(_:)``; database errors.
    public func settings(user: String) throws -> UserSettings {
        try database.read { db in
            guard try Self.userExists(db, user) else { throw RuleError.unknownUser(user) }
            return try Self.settings(db, user: user)
        }
    }

    /// Changes a user's settings in one transaction: `change` gets the stored ones and may throw
    /// (nothing is written then).
    /// - Returns: the settings as stored.
    /// - Throws: ``RuleError/unknownUser(_:)``, what `change` throws, database errors.
    @discardableResult
    public func updateSettings(user: String, _ change: (inout UserSettings) throws -> Void) throws -> UserSettings {
        try database.write { db in
            guard try Self.userExists(db, user) else { throw RuleError.unknownUser(user) }
            var settings = try Self.settings(db, user: user)
            let before = settings
            try change(&settings)
            try Self.writeSettings(db, user: user, settings, scrubLocation: before.locationServices && !settings.locationServices)
            return settings
        }
    }

    /// Writes a user's settings; with `scrubLocation` (location services just turned off) nothing
    /// learned or kept from coordinates stays: the person's places are deleted, and the
    /// coordinates, accuracy and speed are removed from the snapshots their feedback rows keep.
    /// (Events waiting in `pending_events` are left as they are: they must apply again as they
    /// did, so the state that includes them is written first, by the service and by `settings set`.)
    static func writeSettings(_ db: Database, user: String, _ settings: UserSettings, scrubLocation: Bool) throws {
        let titlesTurnedOff = try Self.settings(db, user: user).calendarTitles && !settings.calendarTitles
        try db.execute(
            sql: """
                INSERT INTO user_settings (user_id, location_services, volume_control, keep_raw_snapshots, calendar_titles) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(user_id) DO UPDATE SET location_services = excluded.location_services,
                    volume_control = excluded.volume_control, keep_raw_snapshots = excluded.keep_raw_snapshots,
                    calendar_titles = excluded.calendar_titles
                """, arguments: [user, settings.locationServices, settings.volumeControl, settings.keepRawSnapshots, settings.calendarTitles])
        if titlesTurnedOff { try scrubCalendarTitles(db, user: user) }
        guard scrubLocation else { return }
        try db.execute(sql: "DELETE FROM places WHERE user_id = ?", arguments: [user])
        try db.execute(
            sql: """
                UPDATE feedback SET snapshot = json_remove(snapshot, '$.location.lat', '$.location.lon', '$.location.accuracy_m', '$.location.speed_mps')
                WHERE user_id = ? AND snapshot IS NOT NULL AND json_valid(snapshot)
                """, arguments: [user])
    }

    /// Removes what was read from a person's calendar titles (`calendar_titles` just turned off):
    /// the titles of their imported events, which also lose the category read from them, and the
    /// titles in the snapshots their feedback keeps.
    static func scrubCalendarTitles(_ db: Database, user: String) throws {
        try db.execute(sql: "UPDATE calendar_events SET title = NULL, category = 'other' WHERE user_id = ?", arguments: [user])
        try db.execute(
            sql: """
                UPDATE feedback SET snapshot = json_set(snapshot, '$.calendar.events', json((
                    SELECT json_group_array(json(json_remove(e.value, '$.title'))) FROM json_each(feedback.snapshot, '$.calendar.events') AS e)))
                WHERE user_id = ? AND snapshot IS NOT NULL AND json_valid(snapshot) AND json_type(snapshot, '$.calendar.events') = 'array'
                """, arguments: [user])
    }

    static func settings(_ db: Database, user: String) throws -> UserSettings {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT location_services, volume_control, keep_raw_snapshots, calendar_titles FROM user_settings WHERE user_id = ?",
                arguments: [user])
        else { return UserSettings() }
        return UserSettings(locationServices: row[0], volumeControl: row[1], keepRawSnapshots: row[2], calendarTitles: row[3])
    }
}
