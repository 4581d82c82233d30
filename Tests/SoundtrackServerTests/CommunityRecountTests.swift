import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SoundtrackContext
import SoundtrackEngine
import SoundtrackRules
import Testing

@testable import SoundtrackServer
@testable import SoundtrackStore

/// A running service stops using what the community learned from a forgotten person: the model it
/// loaded at start, and the events it counted since, are counted again from the feedback log the
/// forget cleaned, whoever forgot the person.
@Suite struct CommunityRecountTests {
    /// Likes of `tracks` by `user`, a minute apart from `hour` o'clock, each with a snapshot, as one batch.
    static func likes(_ user: String, _ tracks: [String], hour: Int = 8) -> String {
        let events = tracks.enumerated().map { i, track in
            let at = String(format: "2026-03-14T%02d:%02d:00+01:00", hour, i)
            let snapshot = #"{"user": "\#(user)", "at": "\#(at)", "location": {"place": "library"}, "tags": {"mood": "focused"}}"#
            return #"{"id": "l-\#(user)-\#(hour)-\#(i)", "user": "\#(user)", "at": "\#(at)", "track": "\#(track)", "signal": "like", "snapshot": \#(snapshot)}"#
        }
        return "[" + events.joined(separator: ",") + "]"
    }

    /// A read-only pick of 50 tracks for `user` in the library.
    static func pick(_ live: LiveRecommender, user: String) async throws -> Pick {
        let snapshot = try Array(Doc.snapshot(user: user).utf8).withUnsafeBytes { raw in try Snapshot.decode(bytes: raw) }
        return try await live.pick(snapshot, top: 50, learn: false)
    }

    /// Feedback of three people through the service: A likes the two tracks B likes and ten more,
    /// so A's co-likes bring those ten to B's picks (and A's likes to the most liked); C likes
    /// four others. Returns the ten tracks only A liked.
    static func threePeople(_ client: some TestClientProtocol, _ f: Fixture) async throws -> [String] {
        let tracks = try f.service.store.allTracks().map(\.id)
        let onlyA = Array(tracks[300..<310])
        for (user, liked) in [("a", [tracks[3], tracks[4]] + onlyA), ("b", [tracks[3], tracks[4]]), ("c", Array(tracks[200..<204]))] {
            let r = try await client.send(.post, "/v1/feedback", key: f.keys[user], body: Self.likes(user, liked))
            #expect(r.status == .ok, "\(r.text)")
        }
        return onlyA
    }

    /// The community model a service ranks with.
    static func model(_ live: LiveRecommender) throws -> Community {
        try #require(live.community).snapshot
    }

    /// The model of a service opened afresh on the fixture's database: what a recount must give.
    static func freshModel(_ f: Fixture) throws -> Community {
        let fresh = try Fixture.service(path: f.path, logger: f.logs.logger)
        return try #require(fresh.engine.community as? SharedCommunity).snapshot
    }

    /// A service of three people with a community model and no blend refits, whose model is
    /// counted again only when a forget wakes the recount or a test calls it (not by the timer).
    static func fixture() throws -> Fixture {
        try Fixture(users: ["a", "b", "c"], community: true) {
            $0.blendRefit = nil
            $0.communityRecountInterval = .seconds(3600)
        }
    }

    @Test("After a forget through the service, B's picks and the community are those of a service opened on the database anew")
    func forgetThroughTheService() async throws {
        let f = try Self.fixture()
        try await f.api.buildApplication().test(.router) { client in
            let onlyA = try await Self.threePeople(client, f)
            let index = try f.service.store.allTracks().map(\.id)
            let before = try await Self.pick(f.api.live, user: "b")
            #expect(before.ranked.contains { onlyA.contains($0.id) }, "A's co-likes reach B's pick")
            #expect(try Self.model(f.api.live).stats(of: index.firstIndex(of: onlyA[0])!).likes == 1)

            let r = try await client.send(.delete, "/v1/users/a", key: f.admin)
            #expect(r.status == .noContent, "\(r.text)")
            try await waitUntil(seconds: 60) { f.api.live.community?.generation == 1 }

            let after = try await Self.pick(f.api.live, user: "b")
            let fresh = try SoundtrackAPI(
                service: Fixture.service(path: f.path, logger: f.logs.logger), configuration: f.api.configuration, logger: f.logs.logger)
            #expect(after == (try await Self.pick(fresh.live, user: "b")), "the running service picks as a service opened after the forget")
            #expect(after != before)
            #expect(!after.ranked.contains { onlyA.contains($0.id) })
            let running = try Self.model(f.api.live), opened = try Self.model(fresh.live)
            #expect(running == opened && running.version == opened.version && running.mostLiked(64) == opened.mostLiked(64))
            #expect(running.stats(of: index.firstIndex(of: onlyA[0])!).likes == 0)
            // The recount's thread (at nice 19) logs after the swap: the line may come a little later.
            try await waitUntil(seconds: 60) { f.logs.text.contains("community model counted again after a forget") }
        }
    }

    @Test("A forget by another process is noticed at the next look; events applied after the recount are counted once")
    func forgetByAnotherProcess() async throws {
        let f = try Self.fixture()
        let recounts = try #require(f.api.recounts)
        try await f.api.buildApplication().test(.router) { client in
            _ = try await Self.threePeople(client, f)
            #expect(!recounts.recountIfDue(), "nobody forgotten: nothing to count")
            // As `soundtrack users forget a` beside the service.
            #expect(try Store(path: f.path, durable: false).forget(user: "a"))
            #expect(recounts.recountIfDue())
            #expect(!recounts.recountIfDue(), "counted once")
            // More feedback after the recount is recorded in the new model, once.
            let tracks = try f.service.store.allTracks().map(\.id)
            let r = try await client.send(.post, "/v1/feedback", key: f.keys["c"], body: Self.likes("c", Array(tracks[204..<206]), hour: 9))
            #expect(r.status == .ok, "\(r.text)")
            let fresh = try Fixture.service(path: f.path, logger: f.logs.logger)
            let running = try Self.model(f.api.live), opened = try #require(fresh.engine.community as? SharedCommunity).snapshot
            #expect(running == opened && running.version == opened.version)
            let freshAPI = try SoundtrackAPI(service: fresh, configuration: f.api.configuration, logger: f.logs.logger)
            #expect(try await Self.pick(f.api.live, user: "b") == (try await Self.pick(freshAPI.live, user: "b")))
        }
    }

    @Test("A forget during the count starts it over: the model swapped in counts neither person")
    func forgetDuringTheCount() async throws {
        let f = try Self.fixture()
        try await f.api.buildApplication().test(.router) { client in
            _ = try await Self.threePeople(client, f)
            // C forgotten beside the service; A (whose rows come first) while the first count has read
            // its first slice of 5 rows.
            let other = try Store(path: f.path, durable: false)
            #expect(try other.forget(user: "c"))
            var looks = 0
            let replaced = try f.api.live.recountCommunityIfForgotten(slice: 5) {
                looks += 1
                if looks == 2 { #expect((try? other.forget(user: "a")) == true) }
                return false
            }
            // The first count: before its first slice, and before its second (B's two rows left); the second count: one slice.
            #expect(replaced && looks == 3, "counted twice")
            let running = try Self.model(f.api.live), opened = try Self.freshModel(f)
            #expect(running == opened && running.version == opened.version)
            #expect(f.api.live.community?.forgotten == 2)
        }
    }

    @Test("One count at a time: a second call while one counts returns at once and leaves its journal alone")
    func oneCountAtATime() async throws {
        let f = try Self.fixture()
        try await f.api.buildApplication().test(.router) { client in
            _ = try await Self.threePeople(client, f)
            #expect(try Store(path: f.path, durable: false).forget(user: "a"))
            var inner: Bool?
            let replaced = try f.api.live.recountCommunityIfForgotten(slice: 5) {
                // Between the first count's slices: a second call must not start (nor end) a count.
                if inner == nil { inner = try? f.api.live.recountCommunityIfForgotten(slice: 5) }
                return false
            }
            #expect(inner == false && replaced)
            #expect(f.api.live.community?.generation == 1, "replaced once")
            #expect(try Self.model(f.api.live) == Self.freshModel(f))
        }
    }
}
