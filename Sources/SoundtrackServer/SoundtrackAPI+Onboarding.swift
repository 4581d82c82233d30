import Foundation
import HTTPTypes
import Hummingbird
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackProviders

/// `POST /v1/users/{id}/onboard`: a person's first bin from one song they want to hear now.
extension SoundtrackAPI {
    /// The body of an onboarding: `song` (a track id of the catalog, or, with Spotify configured,
    /// what to search Spotify for), and optionally the `snapshot` of now (its `user` must be the
    /// path's; without one, a snapshot of the user at the server's time).
    struct OnboardRequest {
        var song: String
        var snapshot: Snapshot

        init(_ json: JSONValue, user: String, now: Date) throws(InputError) {
            let r = try JSONObjectReader(json, base: "")
            try r.rejectUnknown(["song", "snapshot"])
            _ = try r.require("song", "a track id of the catalog, or a Spotify search")
            song = try r.string("song", maxLength: 512, nonEmpty: true)!
            if let raw = r.value("snapshot") {
                snapshot = try Snapshot(json: raw, path: "snapshot")
                guard snapshot.user == user else {
                    throw InputError(path: "snapshot.user", expected: "the user of the path ('\(user)')", got: "'\(snapshot.user)'")
                }
            } else {
                snapshot = Snapshot(user: user, at: Timestamp(date: now, offsetSeconds: 0))
            }
        }
    }

    /// Onboards the path's user: their own key or an admin key; an admin key creates a user that
    /// does not exist yet (201), in the same transaction as the onboarding, so that one that fails
    /// leaves no user behind. A song outside the catalog is searched on Spotify when a client is
    /// configured (``ServerConfiguration/spotify``) and its first hit added to the catalog.
    func postOnboard(_ request: Request, context: APIRequestContext, id: String) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.authorize(user: id)
        let body = try OnboardRequest(Self.parseJSON(try await readBody(request)), user: id, now: configuration.clock.now())
        let song = try await catalogTrack(for: body.song)
        let (pick, created) = try await live.onboard(body.snapshot, song: song, createUser: principal.role == .admin)
        var response = Self.json(pick.json())
        if created { response.status = .created }
        return response
    }

    /// The catalog's track for what an onboarding names: the track itself when the catalog has
    /// it, else Spotify's first hit for it as a search (added to the catalog when new).
    /// - Throws: 400 naming `song` when the catalog lacks it and there is no Spotify client or no
    ///   hit; 502 `provider_failed` when the search fails.
    private func catalogTrack(for song: String) async throws -> String {
        if live.hasTrack(song) { return song }
        guard let spotify = configuration.spotify else {
            throw InputError(path: "song", expected: "a track id of the catalog", got: "'\(song.prefix(80))'")
        }
        let found: [Track]
        do {
            found = try await spotify.searchTracks(song, limit: 1)
        } catch {
            throw APIError(.badGateway, code: "provider_failed", message: "the Spotify search for the song failed (\(error.code))", field: "song")
        }
        guard let track = found.first else {
            throw InputError(path: "song", expected: "a track id of the catalog or a search Spotify finds a track for", got: "'\(song.prefix(80))'")
        }
        if !live.hasTrack(track.id) { _ = try live.addToCatalog([track]) }
        return track.id
    }
}
