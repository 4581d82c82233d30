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

    /// The snapshot a member's pick reads: the shared one, as the member's.
    public static func memberSnapshot(_ shared: Snapshot, member: String) -> Snapshot {
        var s = shared
        s.user = member
        return s
    }

    /// A group pick from the members' read-only picks of the shared snapshot (``GroupPick``).
    /// - Throws: ``RuleError/noContext`` when every track the members rank was heard lately (`exclude`).
    public static func groupPick(members: [String], picks: [Pick], top: Int, exclude: Set<String> = []) throws(RuleError) -> GroupPick {
        guard let pick = GroupPick(members: members, picks: picks, top: top, exclude: exclude) else { throw .noContext }
        return pick
    }
}
