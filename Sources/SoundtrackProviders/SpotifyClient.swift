import Foundation
import SoundtrackCatalog
import SoundtrackContext

/// The Spotify Web API: search, tracks, and a user's library (saved tracks, top tracks, and the
/// playlists the user created), as catalog ``Track``s without audio features.
///
/// Spotify no longer grants recommendations or audio features to new apps, so this client never
/// calls `/v1/recommendations` or `/v1/audio-features`; the engine uses the catalog's features where
/// present. App-only calls (search, tracks) use the client-credentials tokens when given, else the
/// user's; library calls need the user's tokens. Tokens are refreshed a minute before their one-hour
/// expiry and after a 401.
public struct SpotifyClient: Sendable {
    /// The Web API's base URL (`https://api.spotify.com`).
    public var baseURL: URL
    /// Client-credentials tokens (app-only), if configured.
    public var appTokens: OAuthTokens?
    /// The user's tokens (authorization-code grant, refreshed with the refresh token), if configured.
    public var userTokens: OAuthTokens?

    /// Creates a client.
    public init(baseURL: URL, appTokens: OAuthTokens?, userTokens: OAuthTokens?) {
        self.baseURL = baseURL
        self.appTokens = appTokens
        self.userTokens = userTokens
    }

    private func get(_ path: String, _ query: [(String, String)] = [], user: Bool) async throws(ProviderError) -> JSONValue {
        guard let tokens = user ? userTokens : (appTokens ?? userTokens) else {
            throw .notConfigured(user ? "a Spotify user token (refresh token)" : "Spotify client credentials or a user token")
        }
        let url = HTTPRequest.url(base: baseURL, path: path, query: query)
        return try await tokens.authorizedJSON(HTTPRequest(url: url, headers: ["Accept": "application/json"]))
    }

    /// `GET /v1/search?type=track`: up to `limit` (1…50) tracks.
    public func searchTracks(_ query: String, limit: Int = 20) async throws(ProviderError) -> [Track] {
        let json = try await get("/v1/search", [("q", query), ("type", "track"), ("limit", String(min(max(limit, 1), 50)))], user: false)
        guard case let .array(items)? = json["tracks"]?["items"] else {
            throw .malformed(InputError(path: "tracks.items", expected: "an array", got: json["tracks"]?["items"]?.typeDescription ?? "nothing"))
        }
        return items.compactMap(Self.track)
    }

    /// `GET /v1/tracks?ids=…` in chunks of 50; unknown ids are left out.
    public func tracks(ids: [String]) async throws(ProviderError) -> [Track] {
        var out: [Track] = []
        let bare = ids.map { $0.hasPrefix("spotify:track:") ? String($0.dropFirst(14)) : $0 }
        var i = 0
        while i < bare.count {
            let chunk = bare[i..<min(i + 50, bare.count)]
            let json = try await get("/v1/tracks", [("ids", chunk.joined(separator: ","))], user: false)
            guard case let .array(items)? = json["tracks"] else {
                throw .malformed(InputError(path: "tracks", expected: "an array", got: json["tracks"]?.typeDescription ?? "nothing"))
            }
            out.append(contentsOf: items.compactMap(Self.track))
            i += 50
        }
        return out
    }

    /// `GET /v1/me`: the user's Spotify id.
    public func currentUserID() async throws(ProviderError) -> String {
        let json = try await get("/v1/me", user: true)
        guard let id = json["id"]?.stringText, !id.isEmpty else {
            throw .malformed(InputError(path: "id", expected: "a non-empty string", got: json["id"]?.typeDescription ?? "nothing"))
        }
        return id
    }

    /// `GET /v1/me/tracks`, paged by 50: the user's saved tracks with when they were saved.
    public func savedTracks(maxPages: Int = 200) async throws(ProviderError) -> [(track: Track, addedAt: Timestamp?)] {
        var out: [(track: Track, addedAt: Timestamp?)] = []
        try await paged("/v1/me/tracks", limit: 50, maxPages: maxPages) { item in
            if let t = item["track"].flatMap(Self.track) { out.append((t, item["added_at"]?.stringText.flatMap(Timestamp.init(rfc3339:)))) }
        }
        return out
    }

    /// `GET /v1/me/top/tracks` (up to 50, `time_range` `short_term`, `medium_term` or `long_term`).
    public func topTracks(timeRange: String = "medium_term", limit: Int = 50) async throws(ProviderError) -> [Track] {
        let json = try await get("/v1/me/top/tracks", [("limit", String(min(max(limit, 1), 50))), ("time_range", timeRange)], user: true)
        guard case let .array(items)? = json["items"] else {
            throw .malformed(InputError(path: "items", expected: "an array", got: json["items"]?.typeDescription ?? "nothing"))
        }
        return items.compactMap(Self.track)
    }

    /// A playlist of the user's.
    public struct Playlist: Sendable, Equatable {
        /// The playlist id.
        public var id: String
        /// Its name.
        public var name: String
        /// The owner's Spotify id.
        public var ownerID: String
    }

    /// `GET /v1/me/playlists`, paged by 50: every playlist in the user's library (created and followed).
    public func playlists(maxPages: Int = 40) async throws(ProviderError) -> [Playlist] {
        var out: [Playlist] = []
        try await paged("/v1/me/playlists", limit: 50, maxPages: maxPages) { item in
            if let id = item["id"]?.stringText, let owner = item["owner"]?["id"]?.stringText {
                out.append(Playlist(id: id, name: item["name"]?.stringText ?? "", ownerID: owner))
            }
        }
        return out
    }

    /// `GET /v1/playlists/{id}/tracks`, paged by 100: the playlist's tracks (episodes, local files and
    /// removed tracks are left out).
    public func playlistTracks(_ playlistID: String, maxPages: Int = 100) async throws(ProviderError) -> [Track] {
        var out: [Track] = []
        let id = playlistID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? playlistID
        try await paged("/v1/playlists/\(id)/tracks", limit: 100, maxPages: maxPages) { item in
            if let t = item["track"].flatMap(Self.track) { out.append(t) }
        }
        return out
    }

    /// What `soundtrack import spotify-library` reads: the user's saved tracks, top tracks and the
    /// playlists the user created (owner = the user; followed playlists are not the user's taste).
    public struct Library: Sendable {
        /// The user's Spotify id.
        public var userID: String
        /// Saved ("liked") tracks with when they were saved.
        public var saved: [(track: Track, addedAt: Timestamp?)]
        /// Top tracks.
        public var top: [Track]
        /// The user's own playlists and their tracks.
        public var playlists: [(playlist: Playlist, tracks: [Track])]
        /// Playlists followed but not created by the user (not read).
        public var skippedPlaylists: [Playlist]
    }

    /// Reads the whole library (see ``Library``).
    public func library() async throws(ProviderError) -> Library {
        let me = try await currentUserID()
        let saved = try await savedTracks()
        let top = try await topTracks()
        let all = try await playlists()
        let own = Self.ownPlaylists(all, userID: me)
        var lists: [(playlist: Playlist, tracks: [Track])] = []
        for p in own { lists.append((p, try await playlistTracks(p.id))) }
        return Library(userID: me, saved: saved, top: top, playlists: lists, skippedPlaylists: all.filter { $0.ownerID != me })
    }

    /// The playlists the user created: those whose owner is the user.
    public static func ownPlaylists(_ playlists: [Playlist], userID: String) -> [Playlist] {
        playlists.filter { $0.ownerID == userID }
    }

    /// Reads a paging object page by page (`limit`/`offset`) while `next` is not null.
    private func paged(_ path: String, limit: Int, maxPages: Int, _ each: (JSONValue) -> Void) async throws(ProviderError) {
        var offset = 0
        for _ in 0..<maxPages {
            let json = try await get(path, [("limit", String(limit)), ("offset", String(offset))], user: true)
            guard case let .array(items)? = json["items"] else {
                throw .malformed(InputError(path: "items", expected: "an array", got: json["items"]?.typeDescription ?? "nothing"))
            }
            items.forEach(each)
            guard let next = json["next"], next != .null, !items.isEmpty else { return }
            offset += items.count
        }
    }

    /// A catalog track from a Spotify track object (`nil` for episodes, local files and nulls).
    ///
    /// Id `spotify:track:<id>`, `name` → title, artists joined with ", ", album name, the year of
    /// `album.release_date`, `duration_ms`, `popularity`; no genres, no audio features.
    public static func track(_ json: JSONValue) -> Track? {
        guard case .object = json, json["type"]?.stringText ?? "track" == "track", json["is_local"] != .bool(true),
            let id = json["id"]?.stringText, !id.isEmpty, let name = json["name"]?.stringText, !name.isEmpty
        else { return nil }
        var artists: [String] = []
        if case let .array(a)? = json["artists"] { artists = a.compactMap { $0["name"]?.stringText } }
        guard !artists.isEmpty else { return nil }
        let year = json["album"]?["release_date"]?.stringText.flatMap { Int($0.prefix(4)) }.flatMap { (1000...2100).contains($0) ? $0 : nil }
        let duration = json["duration_ms"]?.doubleValue.flatMap { $0 > 0 ? Int($0) : nil }
        let popularity = json["popularity"]?.doubleValue.flatMap { (0...100).contains($0) ? Int($0) : nil }
        return Track(
            id: "spotify:track:\(id)", title: name, artist: artists.joined(separator: ", "),
            album: json["album"]?["name"]?.stringText, year: year, durationMs: duration, popularity: popularity)
    }
}
