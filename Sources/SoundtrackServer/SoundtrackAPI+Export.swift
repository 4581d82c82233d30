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

/// A person's export: `GET /v1/users/{id}/export`.
extension SoundtrackAPI {
    /// `GET /v1/users/{id}/export`: everything stored about the person (``Store/exportPerson(_:at:)``),
    /// after the person's queued writes are committed, so that it holds what the service answered.
    func getExport(_ request: Request, context: APIRequestContext, id: String) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.authorize(user: id)
        try await live.settle(user: id)
        return Self.json(try live.store.exportPerson(id, at: configuration.clock.now()))
    }
}
