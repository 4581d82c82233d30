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

/// A person's history: `GET /v1/users/{id}/history`.
extension SoundtrackAPI {
    /// `GET /v1/users/{id}/history?since=&limit=&cursor=`: the person's stored picks, newest first,
    /// each with the feedback that named it, a page at a time (`limit`, 1…500, default 50); the
    /// answer's `next_cursor` (`null` on the last page) is the `cursor` of the next page.
    func getHistory(_ request: Request, context: APIRequestContext, id: String) throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.authorize(user: id)
        let query = try HistoryQuery(request.uri.queryParameters)
        let entries = try live.store.history(user: id, before: query.cursor, since: query.since, limit: query.limit)
        let next: JSONValue = entries.count == query.limit ? entries.last.map { .string(String($0.seq)) } ?? .null : .null
        return Self.json(.object([("entries", .array(entries.map(\.json))), ("next_cursor", next)]))
    }
}
