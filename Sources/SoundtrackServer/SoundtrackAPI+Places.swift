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

/// A person's places: `GET /v1/users/{id}/places`, `PUT …/places/{place}`.
extension SoundtrackAPI {
    /// `GET /v1/users/{id}/places`: the places learned from the person's coordinates.
    func getPlaces(_ request: Request, context: APIRequestContext, id: String) throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.authorize(user: id)
        return Self.json(.object([("places", .array(try live.places(user: id).map(\.json)))]))
    }

    /// `PUT /v1/users/{id}/places/{place}` with `{"name": "home"}` (or `null` to remove the name):
    /// the place as named; 404 for a place the person does not have, 400 naming a bad name.
    func putPlace(_ request: Request, context: APIRequestContext, id: String, place: String) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.authorize(user: id)
        let r = try JSONObjectReader(Self.parseJSON(try await readBody(request)), base: "")
        try r.rejectUnknown(["name"])
        _ = try r.require("name", "a string or null")
        let name = try r.string("name", maxLength: 4 * LearnedPlace.maxNameLength).map { try LearnedPlace.validName($0) }
        return Self.json(try await live.namePlace(user: id, place: place, name: name).json)
    }
}
