import Foundation
import SoundtrackContext
import SoundtrackPostgres
import SoundtrackRules
import SoundtrackStore
import Testing

/// The semantics of ``HistoryStore``, written once and run on the SQLite store and the PostgreSQL
/// store: a person's picks newest first with their answers, pages by cursor and time, and the
/// same pages from both stores for the same day.
@Suite("A person's history, on SQLite and PostgreSQL")
struct HistoryConformanceTests {
    static let t0 = Date(timeIntervalSince1970: 1_773_200_000)

    @Test("Picks come newest first, each with the event that answered it; pages by cursor and by time; no one else's", arguments: Backend.allCases)
    func pages(backend: Backend) async throws {
        try await backend.withStore { s in
            let store = s.store, history = s.store
            try store.addUser(NewUser(id: "u-1"), at: Self.t0)
            try store.addUser(NewUser(id: "u-2"), at: Self.t0)
            let (picks, events) = try Person.day(store, user: "u-1", picks: 12)
            let all = try history.history(user: "u-1", before: nil, since: nil, limit: Store.historyPageLimit)
            #expect(all.map(\.pickId) == picks.reversed().map(\.pick.pickId))
            #expect(zip(all, all.dropFirst()).allSatisfy { $0.seq > $1.seq })
            #expect(all.map(\.track) == picks.reversed().map(\.pick.track.id))
            let answered = Dictionary(uniqueKeysWithValues: events.map { ($0.pickId!, $0) })
            for entry in all {
                if let event = answered[entry.pickId] {
                    #expect(entry.feedback == [.init(signal: event.signal.rawValue, at: event.at.date, rating: event.rating)], "\(entry.pickId)")
                } else {
                    #expect(entry.feedback.isEmpty, "\(entry.pickId) was not answered")
                }
                #expect(entry.title == nil && entry.artist == nil, "the day's tracks are not in this store's catalog")
            }
            #expect(all.contains { $0.binLabel != nil })
            // Pages of five by the cursor: the same entries, in the same order.
            var paged: [Store.HistoryEntry] = [], cursor: Int64?
            repeat {
                let page = try history.history(user: "u-1", before: cursor, since: nil, limit: 5)
                #expect(page.count <= 5)
                paged += page
                cursor = page.count == 5 ? page.last!.seq : nil
            } while cursor != nil
            #expect(paged == all)
            // Since the seventh pick's time: the last six picks.
            let since = try history.history(user: "u-1", before: nil, since: picks[6].pick.at.date, limit: 100)
            #expect(since.map(\.pickId) == picks[6...].reversed().map(\.pick.pickId))
            #expect(try history.history(user: "u-2", before: nil, since: nil, limit: 10).isEmpty)
            #expect(throws: RuleError.unknownUser("u-none")) { try history.history(user: "u-none", before: nil, since: nil, limit: 10) }
        }
    }

    @Test("The same day through both stores reads back as the same history")
    func sameOnBothStores() async throws {
        try await Backend.sqlite.withStore { sqlite in
            try await Backend.postgres.withStore { postgres in
                var pages: [[Store.HistoryEntry]] = []
                for s in [sqlite, postgres] {
                    // The catalog less a fifth of it: some picks' tracks have a title, some not.
                    try s.store.upsertTracks(Person.tracks.enumerated().filter { $0.offset % 5 != 0 }.map(\.element))
                    try s.store.addUser(NewUser(id: "u-1"), at: Self.t0)
                    try Person.day(s.store, user: "u-1", picks: 30)
                    pages.append(try s.store.history(user: "u-1", before: nil, since: nil, limit: Store.historyPageLimit))
                }
                #expect(pages[0].count == 30)
                #expect(pages[0].contains { $0.title != nil && $0.artist != nil } && pages[0].contains { $0.title == nil })
                #expect(pages[0].contains { $0.binLabel == nil }, "the day merges a bin away: its picks keep no label")
                #expect(pages[0] == pages[1])
            }
        }
    }
}
