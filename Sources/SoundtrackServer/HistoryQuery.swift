import Foundation
import Hummingbird
import SoundtrackContext
import SoundtrackStore

/// The query of `GET /v1/users/{id}/history`: `since` (RFC 3339), `limit` (1…500, default 50) and
/// `cursor` (the `next_cursor` of the page before). A bad value is a 400 naming the parameter.
struct HistoryQuery {
    var since: Date?
    var limit = 50
    var cursor: Int64?

    init(_ parameters: Parameters) throws(InputError) {
        for (name, _) in parameters where !["since", "limit", "cursor"].contains(String(name)) {
            throw InputError(path: String(name), expected: "one of since, limit, cursor", got: "an unknown parameter")
        }
        if let text = parameters.get("since") {
            guard let t = Timestamp(rfc3339: String(text)) else {
                throw InputError(path: "since", expected: "an RFC 3339 time", got: "'\(text.prefix(40))'")
            }
            since = t.date
        }
        if let text = parameters.get("limit") {
            guard let n = Int(String(text)), (1...Store.historyPageLimit).contains(n) else {
                throw InputError(path: "limit", expected: "a whole number 1...\(Store.historyPageLimit)", got: "'\(text.prefix(40))'")
            }
            limit = n
        }
        if let text = parameters.get("cursor") {
            guard let n = Int64(String(text)), n >= 0 else {
                throw InputError(path: "cursor", expected: "the next_cursor of an earlier page", got: "'\(text.prefix(40))'")
            }
            cursor = n
        }
    }
}
