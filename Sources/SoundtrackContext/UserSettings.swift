import Foundation

/// A person's settings: what the engine may do with their snapshots. Read and changed by
/// `soundtrack settings` and `GET`/`PATCH /v1/users/{id}/settings`, stored in `user_settings`.
///
/// ```swift
/// var s = UserSettings()
/// try s.set("keep_raw_snapshots", from: "on")                       // the CLI's words
/// try s.apply(JSONParser.parse(#"{"volume_control": true}"#))        // a PATCH body
/// ```
public struct UserSettings: Sendable, Equatable {
    /// Whether the app may send coordinates for this person (`location_services`, default on).
    public var locationServices = true
    /// Whether the app may adjust the volume (`volume_control`, default off).
    public var volumeControl = false
    /// Whether raw snapshots are stored with the person's feedback (`keep_raw_snapshots`, default
    /// off): coordinates, calendar titles and device names as sent.
    public var keepRawSnapshots = false
    /// Whether the engine may read the titles of the person's calendar events (`calendar_titles`,
    /// default on): off, the rules remove every event's title before anything learns, scores or
    /// stores a snapshot; an event keeps its times and the category the app gave it.
    public var calendarTitles = true

    /// The settings' names, as the store, the CLI and the API spell them.
    public static let keys = ["location_services", "volume_control", "keep_raw_snapshots", "calendar_titles"]

    /// The defaults of a new user.
    public init() {}

    /// Creates settings from their values.
    public init(locationServices: Bool, volumeControl: Bool, keepRawSnapshots: Bool, calendarTitles: Bool = true) {
        self.locationServices = locationServices
        self.volumeControl = volumeControl
        self.keepRawSnapshots = keepRawSnapshots
        self.calendarTitles = calendarTitles
    }

    /// A setting by name; `nil` for an unknown name.
    public subscript(key: String) -> Bool? {
        switch key {
        case "location_services": locationServices
        case "volume_control": volumeControl
        case "keep_raw_snapshots": keepRawSnapshots
        case "calendar_titles": calendarTitles
        default: nil
        }
    }

    /// Sets one setting from a word of the command line: `on`, `true`, `1`, `off`, `false`, `0`.
    /// - Throws: ``InputError`` naming the key (an unknown one: the known ones) or the value.
    public mutating func set(_ key: String, from word: String) throws(InputError) {
        let value: Bool
        switch word.lowercased() {
        case "on", "true", "1": value = true
        case "off", "false", "0": value = false
        default: throw InputError(path: key, expected: "on or off (true, false, 1, 0)", got: Got.quoted(word))
        }
        try set(key, value)
    }

    /// Sets one setting.
    /// - Throws: ``InputError`` for an unknown key, naming the known ones.
    public mutating func set(_ key: String, _ value: Bool) throws(InputError) {
        switch key {
        case "location_services": locationServices = value
        case "volume_control": volumeControl = value
        case "keep_raw_snapshots": keepRawSnapshots = value
        case "calendar_titles": calendarTitles = value
        default:
            throw InputError(path: key, expected: "a setting: one of \(Self.keys.joined(separator: ", "))", got: "an unknown setting")
        }
    }

    /// Applies a change given as a JSON object of settings and booleans (a `PATCH` body); the
    /// settings it leaves out stay as they are. Nothing changes when any entry is wrong.
    /// - Throws: ``InputError`` naming the first unknown key or value that is not `true` or
    ///   `false`; a body that is not an object, or an empty one.
    public mutating func apply(_ change: JSONValue) throws(InputError) {
        guard case let .object(pairs) = change else {
            throw InputError(path: "", expected: "an object of settings and true or false", got: change.typeDescription)
        }
        guard !pairs.isEmpty else {
            throw InputError(path: "", expected: "at least one of \(Self.keys.joined(separator: ", "))", got: "an empty object")
        }
        var next = self
        for (key, value) in pairs {
            guard case let .bool(b) = value else { throw InputError(path: key, expected: "true or false", got: value.typeDescription) }
            try next.set(key, b)
        }
        self = next
    }

    /// The settings as a JSON object, in ``keys`` order.
    public var json: JSONValue {
        .object(Self.keys.map { ($0, .bool(self[$0] ?? false)) })
    }
}
