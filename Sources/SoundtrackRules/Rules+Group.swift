import Foundation
import SoundtrackContext
import SoundtrackEngine

extension Rules {
    /// The rules of a group, checked before any member's state is read: two or more members,
    /// each named once. (That every member is a known user is checked as their states are read:
    /// ``RuleError/unknownMember(_:)``.)
    /// - Throws: ``RuleError/groupTooSmall(_:)``, ``RuleError/memberTwice(_:)``.
    public static func checkGroup(_ members: [String]) throws(RuleError) {
        guard members.count >= 2 else { throw .groupTooSmall(members.count) }
        var seen = Set<String>()
        for m in members where !seen.insert(m).inserted { throw .memberTwice(m) }
    }

    /// What a listening session keeps of a shared snapshot, and what its members' feedback carries
    /// as context (as the session's, `user` its id): the time, the place's label, the weather,
    /// the kinds of Bluetooth devices and the tags. Nothing of the sender's own: no coordinates,
    /// calendar, device names, motion, steps or heart rate, and no volume; so no member's event
    /// carries another member's data, and nothing stays of a member who is forgotten.
    public static func sharedContext(_ snapshot: Snapshot, session: String) -> Snapshot {
        let place = snapshot.location?.place.map { Location(place: $0) }
        let devices = snapshot.bluetooth.map { b in Bluetooth(devices: b.devices.map { BluetoothDevice(name: nil, kind: $0.kind) }) }
        return Snapshot(user: session, at: snapshot.at, location: place, weather: snapshot.weather, bluetooth: devices, tags: snapshot.tags)
    }

    /// The snapshot a member's pick reads: the shared one, as the member's.
    public static func memberSnapshot(_ shared: Snapshot, member: String) -> Snapshot {
        var s = shared
        s.user = member
        return s
    }

    /// A group pick from the members' read-only picks of the shared snapshot (``GroupPick``).
    /// - Throws: ``RuleError/nothingToPlay`` when no member's pick ranks a track outside `exclude`.
    public static func groupPick(members: [String], picks: [Pick], top: Int, exclude: Set<String> = []) throws(RuleError) -> GroupPick {
        guard let pick = GroupPick(members: members, picks: picks, top: top, exclude: exclude) else { throw .nothingToPlay }
        return pick
    }
}
