import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackProviders
import SoundtrackRules
import SoundtrackStore
import Synchronization

/// `POST /v1/feedback`: one event or a batch, answered once committed.
extension SoundtrackAPI {
    func postFeedback(_ request: Request, context: APIRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let body = try await readBody(request)
        let (events, batch) = try Self.feedbackEvents(body, maxEvents: configuration.maxBatchEvents)
        for (i, e) in events.enumerated() where !principal.may(reach: e.user) {
            throw APIError(.forbidden, code: "forbidden", message: "this key may not act on user '\(e.user)'", field: batch ? "[\(i)].user" : "user")
        }
        let results = await live.feedback(events)
        if !batch {
            switch results[0] {
            case let .success(verdict): return Self.json(verdict.json(eventId: events[0].id))
            case let .failure(error): throw error
            }
        }
        var applied = 0, duplicates = 0, rejected = 0
        var items: [JSONValue] = []
        for (i, r) in results.enumerated() {
            switch r {
            case let .success(verdict):
                if case .duplicate = verdict { duplicates += 1 } else { applied += 1 }
                items.append(verdict.json(eventId: events[i].id))
            case let .failure(error):
                rejected += 1
                var e = APIError(error)
                if let f = e.field { e.field = "[\(i)].\(f)" }
                items.append(.object([("id", .string(events[i].id)), ("status", .string("rejected")), ("error", e.json)]))
            }
        }
        return Self.json(
            .object([
                ("applied", .number(Double(applied))), ("duplicates", .number(Double(duplicates))),
                ("rejected", .number(Double(rejected))), ("results", .array(items))
            ]))
    }

    /// The events of a feedback body: one event (an object), or a batch (an array).
    static func feedbackEvents(_ body: ByteBuffer, maxEvents: Int) throws(InputError) -> (events: [FeedbackEvent], batch: Bool) {
        // One event: the fast decoder, straight from the body's bytes (it gives the general path's
        // value and errors, for documents up to the snapshot size limit).
        if body.readableBytes <= Snapshot.maxBytes, firstNonSpace(body) == UInt8(ascii: "{") {
            let event = try body.withUnsafeReadableBytes { raw throws(InputError) in try FeedbackEvent.decode(bytes: raw) }
            return ([event], false)
        }
        let value = try Self.parseJSON(body)
        var events: [FeedbackEvent] = []
        switch value {
        case let .array(items):
            guard !items.isEmpty, items.count <= maxEvents else {
                throw InputError(path: "", expected: "a batch of 1 to \(maxEvents) events", got: "\(items.count) events")
            }
            // Each event is held to the one document limit too, measured as its JSON without
            // spaces (only a body past the limit can hold an event past it).
            let measure = body.readableBytes > Snapshot.maxBytes
            for (i, item) in items.enumerated() {
                if measure {
                    do {
                        try Snapshot.checkSize(item.serialized().utf8.count)
                    } catch {
                        throw InputError(path: "[\(i)]", expected: error.expected, got: error.got)
                    }
                }
                events.append(try FeedbackEvent(json: item, path: "[\(i)]"))
            }
            return (events, true)
        case .object:
            try Snapshot.checkSize(body.readableBytes)  // one event: the limit of every front end
            return ([try FeedbackEvent(json: value)], false)
        default:
            throw InputError(path: "", expected: "a feedback event (an object) or a batch of events (an array)", got: value.typeDescription)
        }
    }

    static func firstNonSpace(_ body: ByteBuffer) -> UInt8? {
        for b in body.readableBytesView where !(b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09) { return b }
        return nil
    }
}
