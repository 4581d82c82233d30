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

/// A person's settings: `GET` and `PATCH /v1/users/{id}/settings`.
extension SoundtrackAPI {
    func getSettings(_ request: Request, context: APIRequestContext, id: String) throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.authorize(user: id)
        return Self.json(try live.settings(user: id).json)
    }

    /// `PATCH /v1/users/{id}/settings`: the settings the body names, `true` or `false`; the others
    /// stay. 400 naming the first unknown setting or value that is not a boolean (nothing changes).
    func patchSettings(_ request: Request, context: APIRequestContext, id: String) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.authorize(user: id)
        let change = try Self.parseJSON(try await readBody(request))
        let (settings, locationTurnedOff) = try await live.updateSettings(user: id) { s in try s.apply(change) }
        // The coordinates just removed from the tables leave the write-ahead log too.
        if locationTurnedOff { try await truncateLog() }
        return Self.json(settings.json)
    }
}
