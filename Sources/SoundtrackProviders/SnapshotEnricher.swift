import Foundation
import SoundtrackContext

/// Fills the sections a snapshot lacks from providers, and reports which source filled what.
///
/// - `weather` (when missing and the snapshot has coordinates): the weather chain (cache, then each
///   provider in order).
/// - `calendar` (when missing): the user's stored events (imported from ICS files), then Google
///   Calendar (only for ``googleCalendarUser``: the tokens open one person's calendar); events overlapping `[at, at + lookahead]`, at most 200, each with its category (classified
///   from the title by ``CalendarClassifier``) and without its title (titles are sensitive).
///
/// A section the phone sent is never replaced. A failing provider never fails the pick: the snapshot
/// goes on without that section, and the report says why.
public struct SnapshotEnricher: Sendable {
    /// Stored calendar events of a user overlapping a window: `(user, from, to)`.
    public typealias StoredEvents = @Sendable (String, Date, Date) throws -> [CalendarEvent]

    /// The weather chain, if any.
    public var weather: WeatherService?
    /// Google Calendar, if configured.
    public var googleCalendar: GoogleCalendarClient?
    /// The only user whose snapshots Google Calendar fills (its tokens open one person's calendar).
    public var googleCalendarUser: String?
    /// The store's imported events, if any.
    public var storedEvents: StoredEvents?
    /// How far ahead of `at` events are taken, in seconds.
    public var lookahead: Double

    /// Creates an enricher.
    public init(
        weather: WeatherService?, googleCalendar: GoogleCalendarClient?, googleCalendarUser: String? = nil, storedEvents: StoredEvents?,
        lookahead: Double = 12 * 3600
    ) {
        self.weather = weather
        self.googleCalendar = googleCalendar
        self.googleCalendarUser = googleCalendarUser
        self.storedEvents = storedEvents
        self.lookahead = lookahead
    }

    /// The snapshot with missing sections filled where a source could, and what each source did.
    public func enrich(_ snapshot: Snapshot) async -> (snapshot: Snapshot, report: [EnrichmentEntry]) {
        var s = snapshot
        var report: [EnrichmentEntry] = []
        if s.weather == nil {
            if let lat = s.location?.lat, let lon = s.location?.lon {
                if let weather {
                    let outcome = await weather.current(lat: lat, lon: lon)
                    s.weather = outcome.weather
                    report += outcome.report
                } else {
                    report.append(EnrichmentEntry(section: "weather", source: "none", status: .skipped, reason: "not_configured"))
                }
            } else {
                report.append(EnrichmentEntry(section: "weather", source: "none", status: .skipped, reason: "no_coordinates"))
            }
        }
        if s.calendar == nil {
            let from = s.at.date, to = s.at.date.addingTimeInterval(lookahead)
            if let storedEvents {
                do {
                    let events = try storedEvents(s.user, from, to)
                    if !events.isEmpty {
                        s.calendar = CalendarInfo(events: Array(events.prefix(Snapshot.maxEvents)))
                        report.append(EnrichmentEntry(section: "calendar", source: "stored-events", status: .filled))
                    } else {
                        report.append(EnrichmentEntry(section: "calendar", source: "stored-events", status: .skipped, reason: "no_events"))
                    }
                } catch {
                    report.append(EnrichmentEntry(section: "calendar", source: "stored-events", status: .failed, reason: "store_error"))
                }
            }
            let google = googleCalendarUser == s.user ? googleCalendar : nil
            if s.calendar == nil, let googleCalendar = google {
                do {
                    let found = try await googleCalendar.events(from: from, to: to)
                    s.calendar = CalendarInfo(events: found.prefix(Snapshot.maxEvents).map { Self.event($0, offset: s.at.offsetSeconds) })
                    report.append(EnrichmentEntry(section: "calendar", source: "google-calendar", status: .filled))
                } catch {
                    report.append(EnrichmentEntry(section: "calendar", source: "google-calendar", status: .failed, reason: error.code))
                }
            }
            if storedEvents == nil, google == nil {
                report.append(EnrichmentEntry(section: "calendar", source: "none", status: .skipped, reason: "not_configured"))
            }
        }
        return (s, report)
    }

    /// A snapshot event from an occurrence: its category, no title, times in the snapshot's offset.
    public static func event(_ o: CalendarOccurrence, offset: Int) -> CalendarEvent {
        CalendarEvent(
            title: nil, start: Timestamp(date: o.start.date, offsetSeconds: offset), end: Timestamp(date: o.end.date, offsetSeconds: offset),
            allDay: o.allDay, category: o.title.map(CalendarClassifier.classify) ?? .other)
    }
}
