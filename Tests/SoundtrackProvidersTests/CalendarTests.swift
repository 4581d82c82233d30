import Foundation
import SoundtrackContext
import SoundtrackTestSupport
import Testing

@testable import SoundtrackProviders

@Suite struct ICSTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    static func date(_ s: String) -> Date { Timestamp(rfc3339: s)!.date }

    @Test func parsesAllDayTZIDFoldedAndEscapedEvents() throws {
        let cal = try ICSCalendar.parse(Fixtures.text("calendar.ics"), defaultTimeZone: Self.berlin)
        #expect(cal.events.count == 3)
        #expect(cal.errors.count == 1)
        #expect(cal.errors.first?.path == "VEVENT.DTSTART")
        #expect(cal.errors.first?.line == 34)
        let day = cal.occurrences(from: Self.date("2026-03-14T00:00:00+01:00"), to: Self.date("2026-03-15T00:00:00+01:00"))
        #expect(day.count == 2)
        let holiday = try #require(day.first { $0.uid == "holiday@example.org" })
        #expect(holiday.allDay)
        #expect(holiday.start.rfc3339 == "2026-03-14T00:00:00+01:00")
        #expect(holiday.end.rfc3339 == "2026-03-15T00:00:00+01:00")
        let study = try #require(day.first { $0.uid == "study@example.org" })
        #expect(study.title == "Study group, algorithms ; graphs and a long title that is folded over two lines")
        #expect(study.start.rfc3339 == "2026-03-14T06:30:00Z")
        #expect(study.end.date.timeIntervalSince(study.start.date) == 5400)
        #expect(!study.allDay)
    }

    @Test func weeklyRuleWithCountBydayAndExdateAcrossDST() throws {
        let cal = try ICSCalendar.parse(Fixtures.text("calendar.ics"), defaultTimeZone: Self.berlin)
        let gym = cal.occurrences(from: Self.date("2026-01-01T00:00:00Z"), to: Self.date("2027-01-01T00:00:00Z")).filter { $0.uid == "gym-weekly@example.org" }
        // COUNT=10 on Mondays and Thursdays from March 2; March 5 is an EXDATE (it still counts).
        #expect(
            gym.map(\.start.rfc3339) == [
                "2026-03-02T18:00:00+01:00", "2026-03-09T18:00:00+01:00", "2026-03-12T18:00:00+01:00",
                "2026-03-16T18:00:00+01:00", "2026-03-19T18:00:00+01:00", "2026-03-23T18:00:00+01:00",
                "2026-03-26T18:00:00+01:00", "2026-03-30T18:00:00+02:00", "2026-04-02T18:00:00+02:00"
            ])
        #expect(gym.allSatisfy { $0.end.date.timeIntervalSince($0.start.date) == 5400 && $0.title == "Gym – leg day" })
        // A window keeps only the occurrences that overlap it.
        let week = cal.occurrences(from: Self.date("2026-03-16T00:00:00+01:00"), to: Self.date("2026-03-23T00:00:00+01:00"))
        #expect(week.filter { $0.uid == "gym-weekly@example.org" }.count == 2)
    }

    @Test func dailyMonthlyUntilIntervalAndOverrides() throws {
        let text = """
            BEGIN:VCALENDAR
            BEGIN:VEVENT
            UID:standup
            DTSTART:20260302T080000Z
            DURATION:PT15M
            RRULE:FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR;UNTIL=20260310T235959Z
            END:VEVENT
            BEGIN:VEVENT
            UID:standup
            RECURRENCE-ID:20260304T080000Z
            DTSTART:20260304T100000Z
            DTEND:20260304T101500Z
            SUMMARY:Standup (moved)
            END:VEVENT
            BEGIN:VEVENT
            UID:review
            DTSTART;TZID=America/New_York:20260101T090000
            DTEND;TZID=America/New_York:20260101T100000
            RRULE:FREQ=MONTHLY;INTERVAL=2;BYDAY=-1FR;COUNT=3
            SUMMARY:Team review
            END:VEVENT
            BEGIN:VEVENT
            UID:cancelled
            DTSTART:20260305T080000Z
            STATUS:CANCELLED
            END:VEVENT
            END:VCALENDAR
            """
        let cal = try ICSCalendar.parse(text)
        let all = cal.occurrences(from: Self.date("2026-01-01T00:00:00Z"), to: Self.date("2027-01-01T00:00:00Z"))
        let standup = all.filter { $0.uid == "standup" }.map(\.start.rfc3339)
        #expect(
            standup == [
                "2026-03-02T08:00:00Z", "2026-03-03T08:00:00Z", "2026-03-04T10:00:00Z", "2026-03-05T08:00:00Z",
                "2026-03-06T08:00:00Z", "2026-03-09T08:00:00Z", "2026-03-10T08:00:00Z"
            ])
        // The last Friday of every other month, in New York time.
        #expect(
            all.filter { $0.uid == "review" }.map(\.start.rfc3339) == [
                "2026-01-30T09:00:00-05:00", "2026-03-27T09:00:00-04:00", "2026-05-29T09:00:00-04:00"
            ])
        #expect(!all.contains { $0.uid == "cancelled" })
    }

    @Test func rejectsWhatIsNotACalendarAndNamesBadRules() throws {
        #expect(throws: InputError.self) { try ICSCalendar.parse("hello") }
        let cal = try ICSCalendar.parse("BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:x\nDTSTART:20260302T080000Z\nRRULE:FREQ=YEARLY\nEND:VEVENT\nEND:VCALENDAR\n")
        #expect(cal.events.isEmpty)
        #expect(cal.errors.first?.path == "VEVENT.RRULE.FREQ")
        #expect(cal.errors.first?.line == 5)
        let tz = try ICSCalendar.parse("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;TZID=Mars/Olympus:20260302T080000\nEND:VEVENT\nEND:VCALENDAR\n")
        #expect(tz.errors.first?.path == "VEVENT.DTSTART.TZID")
    }
}

@Suite struct GoogleCalendarTests {
    @Test func refreshesTheTokenOn401AndFollowsPages() async throws {
        try await withStub { stub in
            let path = "/calendar/v3/calendars/primary/events"
            stub.enqueue(
                "GET", path, .status(401, body: #"{"error":{"code":401,"message":"Invalid Credentials"}}"#),
                .fixture("google-events-page1.json"), .fixture("google-events-page2.json"))
            stub.enqueue("POST", "/token", .fixture("google-token.json"))
            let (logger, capture) = capturingLogger()
            let time = TestTime()
            let client = testClient(time, logger: logger)
            let tokens = OAuthTokens(
                accessToken: "ya29.expired-token", grant: .refreshToken("1//refresh-secret"),
                tokenURL: stub.baseURL.appendingPathComponent("token"), clientID: "client-1.apps.googleusercontent.com",
                clientSecret: "google-client-secret", authentication: .formBody, client: client)
            let google = GoogleCalendarClient(baseURL: stub.baseURL, tokens: tokens)
            let events = try await google.events(from: ICSTests.date("2026-03-14T00:00:00+01:00"), to: ICSTests.date("2026-03-15T00:00:00+01:00"))
            #expect(events.map(\.uid) == ["evt-study-1", "evt-holiday"])  // the cancelled one is left out
            #expect(events[0].title == "Study group – algorithms" && events[0].start.rfc3339 == "2026-03-14T07:30:00+01:00")
            #expect(events[1].allDay && events[1].start.rfc3339 == "2026-03-14T00:00:00+01:00")
            let calls = stub.requests(to: path)
            #expect(calls.count == 3)
            #expect(calls[0].header("Authorization") == "Bearer ya29.expired-token")
            #expect(calls[1].header("Authorization") == "Bearer ya29.fresh-google-token")
            #expect(calls[2].header("Authorization") == "Bearer ya29.fresh-google-token")
            #expect(calls[1].query["singleEvents"] == "true" && calls[1].query["orderBy"] == "startTime")
            #expect(calls[1].query["timeMin"] == "2026-03-13T23:00:00Z")
            #expect(calls[2].query["pageToken"] == "CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA")
            let token = try #require(stub.requests(to: "/token").first)
            #expect(token.body.contains("grant_type=refresh_token"))
            #expect(token.body.contains("client_secret=google-client-secret"))
            #expect(await tokens.refreshCount == 1)
            for secret in ["ya29.expired-token", "ya29.fresh-google-token", "1//refresh-secret", "google-client-secret"] {
                #expect(!capture.all.contains { $0.contains(secret) }, "\(secret) was logged")
            }
        }
    }

    @Test func a401WithoutRefreshIsUnauthorized() async throws {
        try await withStub { stub in
            stub.enqueue("GET", "/calendar/v3/calendars/primary/events", .status(401))
            let tokens = OAuthTokens(accessToken: "t", grant: .none, tokenURL: nil, clientID: nil, clientSecret: nil, authentication: .formBody, client: testClient(TestTime()))
            do {
                _ = try await GoogleCalendarClient(baseURL: stub.baseURL, tokens: tokens).events(from: Date(), to: Date().addingTimeInterval(3600))
                Issue.record("expected unauthorized")
            } catch {
                guard case .unauthorized? = error as? ProviderError else { Issue.record("expected .unauthorized, got \(error)"); return }
            }
        }
    }
}
