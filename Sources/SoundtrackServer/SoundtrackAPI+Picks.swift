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

/// `POST /v1/picks`: a snapshot → a pick.
extension SoundtrackAPI {
    func postPick(_ request: Request, context: APIRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let body = try await readBody(request)
        var snapshot = try body.withUnsafeReadableBytes { raw throws(InputError) in try Snapshot.decode(bytes: raw) }
        try principal.authorize(user: snapshot.user)
        let query = request.uri.queryParameters
        let top = try Self.top(request)
        var learn = true
        if let l = query.get("learn") {
            guard l == "true" || l == "false" else {
                throw InputError(path: "learn", expected: "true or false", got: "'\(l.prefix(20))'")
            }
            learn = l == "true"
        }
        var report: [EnrichmentEntry] = []
        if let enricher = configuration.enricher {
            // The providers never see what the person's settings keep from the engine (coordinates, calendar titles).
            snapshot = Rules.permitted(snapshot, settings: try live.settings(user: snapshot.user))
            (snapshot, report) = await enricher.enrich(snapshot)
        }
        let pick = try await live.pick(snapshot, top: top, learn: learn)
        if !report.isEmpty {
            return Self.json(EnrichmentEntry.annotate(pick.json(includeRanked: top > 1), with: report))
        }
        // The hand-written encoder: the bytes of `pick.json(includeRanked:).serialized()` without the tree.
        let scratch = ByteArena(capacity: 4096)
        PickEncoder.write(pick, includeRanked: top > 1, into: scratch)
        return scratch.withUnsafeBytes { Self.json(bytes: $0) }
    }

    /// The `top` query parameter: how many ranked tracks to return (1 when absent).
    /// - Throws: 400 naming `top` for anything but an integer in 1...100.
    static func top(_ request: Request) throws(InputError) -> Int {
        guard let t = request.uri.queryParameters.get("top") else { return 1 }
        guard let n = Int(t), (1...100).contains(n) else {
            throw InputError(path: "top", expected: "an integer in 1...100", got: "'\(t.prefix(20))'")
        }
        return n
    }
}
