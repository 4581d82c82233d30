import Foundation
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackRules
import SoundtrackStore
import Testing

/// The rules of a feedback event, one by one, on states in memory: each verdict, the order in
/// which they are checked, and that a rejected event changes nothing.
@Suite("Rules")
struct RulesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let tracks: [Track] = try! CatalogReader().read(contentsOf: root.appendingPathComponent("datasets/catalog-small.csv")).tracks
    static let rules: Rules = {
        let m = try! Models.bundled()
        return Rules(engine: Recommender(config: m.config, catalog: IndexCatalog(CatalogIndex(tracks: tracks)), priors: m.priors, seed: 3))
    }()

    static func at(_ minute: Int) -> Timestamp {
        Timestamp(date: Date(timeIntervalSince1970: 1_773_468_000 + Double(minute * 60)), offsetSeconds: 3600)
    }

    static func snapshot(_ user: String, _ minute: Int, place: String = "library") -> Snapshot {
        Snapshot(
            user: user, at: at(minute), location: Location(lat: 52.5, lon: 13.4, speedMps: 0, place: place),
            motion: Motion(activity: place == "gym" ? .running : .stationary, heartRateBpm: place == "gym" ? 150 : 65))
    }

    static func event(
        _ id: String, _ user: String = "u-1", minute: Int, track: String = tracks[3].id, pick: String? = nil, snapshot: Bool = true
    )
        -> FeedbackEvent
    {
        FeedbackEvent(
            id: id, user: user, at: at(minute), track: track, signal: .like, pickId: pick, snapshot: snapshot ? Self.snapshot(user, minute) : nil)
    }

    static func user(_ id: String = "u-1") -> CachedUserState {
        CachedUserState(state: rules.engine.newUser(id))
    }

    static func noPicks(_ id: String) -> PickRecord? { nil }

    /// Stages `event` with the pick it names looked up in `picks`, as the front ends do.
    static func stage(_ event: FeedbackEvent, user: inout CachedUserState, picks: [String: PickRecord]) throws(RuleError) -> FeedbackVerdict {
        try rules.stageFeedback(event, appliedBy: nil, user: &user, pick: Rules.pickNamed(by: event, appliedBy: nil) { picks[$0] })
    }

    @Test("An applied event gets the user's next sequence number and moves the user's time on")
    func applied() throws {
        var u = Self.user()
        let v = try Self.rules.stageFeedback(Self.event("e1", minute: 10), appliedBy: nil, user: &u, pick: nil)
        guard case let .applied(row) = v else { Issue.record("\(v)"); return }
        #expect(row.seq == 1 && u.feedbackSeq == 1)
        #expect(u.lastEventAt == Self.at(10).date.timeIntervalSince1970)
        #expect(!u.state.changes.isEmpty)
        // The snapshot is kept in the row only for users who keep raw snapshots.
        #expect(row.event.snapshot == nil && !row.keepSnapshot)
        var keeper = Self.user("u-2")
        keeper.keepRawSnapshots = true
        let kept = try Self.rules.stageFeedback(Self.event("e2", "u-2", minute: 10), appliedBy: nil, user: &keeper, pick: nil)
        guard case let .applied(row2) = kept else { Issue.record("\(kept)"); return }
        #expect(row2.event.snapshot != nil && row2.keepSnapshot)
    }

    @Test("Catching up applies the pending events in order, to the state of applying them one by one; one that does not fit fails by name")
    func catchUp() throws {
        let events = (0..<6).map { Self.event("c\($0)", minute: 10 + $0) }
        var direct = Self.user()
        var rows: [FeedbackRow] = []
        for e in events {
            if case let .applied(row) = try Self.rules.stageFeedback(e, appliedBy: nil, user: &direct, pick: nil) { rows.append(row) }
        }
        #expect(rows.count == 6)
        // The first two applied and stored; the other four committed as pending events.
        var stored = Self.user()
        for e in events.prefix(2) { _ = try Self.rules.stageFeedback(e, appliedBy: nil, user: &stored, pick: nil) }
        stored.pending = (2..<6).map { i in
            PendingEvent(seq: rows[i].seq, event: events[i], bin: rows[i].outcome.bin, switchedTo: rows[i].outcome.switchedTo)
        }
        var caught = stored
        try Self.rules.catchUp(&caught, pick: Self.noPicks)
        #expect(caught.pending.isEmpty)
        #expect(caught.feedbackSeq == 6 && caught.lastEventAt == direct.lastEventAt)
        #expect(caught.state.bins == direct.state.bins)
        #expect(caught.state.weights == direct.state.weights)
        #expect(caught.state.session == direct.state.session)
        // An event whose sequence number does not follow the state's (a state behind by more than its
        // pending events) is not applied as if it did.
        var gap = stored
        gap.pending[0].seq = 4
        #expect(throws: CatchUpError.self) { try Self.rules.catchUp(&gap, pick: Self.noPicks) }
        do {
            var gap2 = stored
            gap2.pending[0].seq = 4
            try Self.rules.catchUp(&gap2, pick: Self.noPicks)
        } catch {
            #expect("\(error)".contains("feedback event 'c2' (applied_seq 4) does not apply again"))
        }
        // The community counted the events when they were first applied (or when it was rebuilt from
        // the feedback rows): catching up does not count them again.
        let community = SharedCommunity()
        let counting = Rules(engine: Self.rules.engine.with(community: community))
        var again = stored
        try counting.catchUp(&again, pick: Self.noPicks)
        #expect(again.state.bins == direct.state.bins)
        #expect(community.snapshot.stats(of: 3).events == 0)
        var live = caught
        _ = try counting.stageFeedback(Self.event("c6", minute: 30), appliedBy: nil, user: &live, pick: nil)
        #expect(community.snapshot.stats(of: 3).events == 1)  // what a first application records
        // Nor one that lands in another bin than its row says (another seed, other models).
        var elsewhere = stored
        elsewhere.pending[1].bin += 1
        do {
            try Self.rules.catchUp(&elsewhere, pick: Self.noPicks)
            Issue.record("caught up an event into another bin than its row's")
        } catch {
            #expect("\(error)".contains("feedback event 'c3' (applied_seq 4) does not apply again (it lands in bin"))
        }
    }

    @Test("Rule 1: an id applied by the same user is a duplicate, by another user a conflict; nothing else is checked first")
    func ids() throws {
        var u = Self.user()
        // A duplicate wins over everything after it: here an unknown track and a time out of order.
        u.lastEventAt = Self.at(100).date.timeIntervalSince1970
        let before = u.state.changes
        #expect(try Self.rules.stageFeedback(Self.event("e1", minute: 1, track: "nope"), appliedBy: "u-1", user: &u, pick: nil) == .duplicate)
        #expect(throws: RuleError.eventIdTaken("e1")) {
            try Self.rules.stageFeedback(Self.event("e1", minute: 1), appliedBy: "u-2", user: &u, pick: nil)
        }
        #expect(u.state.changes == before && u.feedbackSeq == 0)
        // Of an unknown user too: the id first, then the user.
        #expect(try Self.rules.stageFeedbackOfUnknownUser(Self.event("e1", "ghost", minute: 1), appliedBy: "ghost") == .duplicate)
        #expect(throws: RuleError.eventIdTaken("e1")) { try Self.rules.stageFeedbackOfUnknownUser(Self.event("e1", "ghost", minute: 1), appliedBy: "u-1") }
        #expect(throws: RuleError.unknownUser("ghost")) { try Self.rules.stageFeedbackOfUnknownUser(Self.event("e1", "ghost", minute: 1), appliedBy: nil) }
        var none: CachedUserState? = nil
        #expect(throws: RuleError.unknownUser("ghost")) {
            try Self.rules.stageFeedback(Self.event("e1", "ghost", minute: 1), appliedBy: nil, user: &none, pick: nil)
        }
    }

    @Test("Rule 4: an event earlier than the user's previous one is out of order; the same time is not; an unknown track is named first")
    func timeOrder() throws {
        var u = Self.user()
        _ = try Self.rules.stageFeedback(Self.event("e1", minute: 10), appliedBy: nil, user: &u, pick: nil)
        let state = u.state.bins
        // Rejected for its track whether or not later events were applied: the same reason on every run.
        #expect(throws: RuleError.unknownTrack("nope", field: "track")) {
            try Self.rules.stageFeedback(Self.event("e0", minute: 9, track: "nope"), appliedBy: nil, user: &u, pick: nil)
        }
        #expect(throws: RuleError.outOfOrder(at: Self.at(9), previous: Self.at(10).date)) {
            try Self.rules.stageFeedback(Self.event("e2", minute: 9), appliedBy: nil, user: &u, pick: nil)
        }
        #expect(u.state.bins == state && u.feedbackSeq == 1)
        #expect(try Self.rules.stageFeedback(Self.event("e3", minute: 10), appliedBy: nil, user: &u, pick: nil) != .duplicate)
        #expect(RuleError.outOfOrder(at: Self.at(9), previous: Self.at(10).date).description.contains("previous event (2026-03-14T07:10:00+01:00)"))
    }

    @Test("Rules 3 and 5: the track, then the pick the event names")
    func trackAndPick() throws {
        var u = Self.user(), other = Self.user("u-2")
        let pick = Self.rules.stagePick(Self.snapshot("u-1", 5), state: &u.state).row.record
        let theirs = Self.rules.stagePick(Self.snapshot("u-2", 5), state: &other.state).row.record
        let picks = [pick.pickId: pick, theirs.pickId: theirs]
        // The track first (it does not depend on the user's past): an unknown pick and an unknown track name the track.
        #expect(throws: RuleError.unknownTrack("nope", field: "track")) {
            try Self.stage(Self.event("e1", minute: 6, track: "nope", pick: "p-nope", snapshot: false), user: &u, picks: picks)
        }
        #expect(throws: RuleError.unknownTrack("nope", field: "track")) {
            try Self.stage(Self.event("e1", minute: 6, track: "nope", pick: pick.pickId, snapshot: false), user: &u, picks: picks)
        }
        #expect(throws: RuleError.unknownPick("p-nope", user: "u-1")) {
            try Self.stage(Self.event("e1", minute: 6, pick: "p-nope", snapshot: false), user: &u, picks: picks)
        }
        #expect(throws: RuleError.pickOfAnotherUser(theirs.pickId, user: "u-1")) {
            try Self.stage(Self.event("e1", minute: 6, pick: theirs.pickId, snapshot: true), user: &u, picks: picks)
        }
        #expect(throws: RuleError.noContext) {
            try Self.stage(Self.event("e1", minute: 6, snapshot: false), user: &u, picks: picks)
        }
        // A pick whose bin is gone: rejected alone, the snapshot is the context when there is one.
        var gone = u
        gone.state.bins.removeAll { $0.number == pick.binNumber }
        #expect(throws: RuleError.pickBinGone(pick.pickId)) {
            try Self.stage(Self.event("e1", minute: 6, pick: pick.pickId, snapshot: false), user: &gone, picks: picks)
        }
        #expect(try Self.stage(Self.event("e1", minute: 6, pick: pick.pickId, snapshot: true), user: &gone, picks: picks) != .duplicate)
        // A pick of the user with its bin: applied in that bin.
        let v = try Self.stage(Self.event("e2", minute: 6, pick: pick.pickId, snapshot: false), user: &u, picks: picks)
        #expect(v.outcome?.bin == pick.binNumber)
    }

    @Test("A pick that learns moves the pick counter and numbers its row by the counter before it; a preview changes nothing")
    func picks() throws {
        var u = Self.user()
        let a = Self.rules.stagePick(Self.snapshot("u-1", 1), state: &u.state)
        let b = Self.rules.stagePick(Self.snapshot("u-1", 2, place: "gym"), state: &u.state)
        #expect(a.row.seq == 0 && b.row.seq == 1 && u.state.pickCounter == 2)
        let before = u.state
        _ = Self.rules.previewPick(Self.snapshot("u-1", 3, place: "home"), state: u.state)
        #expect(u.state.bins == before.bins && u.state.pickCounter == before.pickCounter)
        var none: CachedUserState? = nil
        #expect(throws: RuleError.unknownUser("u-9")) { try Self.rules.stagePick(Self.snapshot("u-9", 1), user: &none) }
        #expect(throws: RuleError.unknownTrack("nope", field: "song")) {
            var u2: CachedUserState? = Self.user("u-2")
            _ = try Self.rules.stageOnboarding(Self.snapshot("u-2", 1), song: "nope", user: &u2)
        }
    }

    @Test("A rule error carries its field and message, and an InputError made of it says the same")
    func errorText() {
        let e = RuleError.eventIdTaken("e-7")
        #expect(e.field == "id")
        #expect(e.description == "id: expected an event id not used by another user, got 'e-7'")
        #expect(InputError(e).description == e.description)
    }

    @Test("permitted(_:settings:) removes calendar titles with calendar_titles off, keeping times and the app's category")
    func calendarTitlesOff() throws {
        let snapshot = try Snapshot.decode(
            Data(
                #"""
                {"user": "u-1", "at": "2026-03-11T17:30:00+01:00", "calendar": {"events": [
                  {"title": "Leg day at the gym", "start": "2026-03-11T17:00:00+01:00", "end": "2026-03-11T18:30:00+01:00"},
                  {"title": "Team sync", "start": "2026-03-11T19:00:00+01:00", "category": "work"}]}}
                """#.utf8))
        var settings = UserSettings()
        #expect(Rules.permitted(snapshot, settings: settings) == snapshot)
        settings.calendarTitles = false
        let seen = Rules.permitted(snapshot, settings: settings)
        #expect(seen.calendar?.events.map(\.title) == [nil, nil])
        #expect(seen.calendar?.events.map(\.start) == snapshot.calendar?.events.map(\.start))
        #expect(seen.calendar?.events.map(\.category) == [nil, .work])
        // The title decided the current event's category; without it the feature is gone.
        let extractor = FeatureExtractor()
        let workout = FeatureLayout.require("calendar.workout")
        #expect(extractor.extract(snapshot).values[workout] == 1)
        #expect(extractor.extract(seen).values[workout] == 0)
    }
}
