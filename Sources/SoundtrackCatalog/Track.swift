/// One track of a catalog: identity, metadata and (optionally) its audio features.
///
/// Field names follow the catalog format of docs/formats.md when encoded (`track_id`,
/// `duration_ms`…); the audio features are nested under `audio`.
///
/// ```swift
/// let t = Track(id: "spotify:track:3e9HZxeyfWwjeyPAMmWSSQ", title: "thank u, next",
///               artist: "Ariana Grande", genres: ["dance pop", "pop"],
///               audio: AudioFeatures(tempo: 107, energy: 0.65))
/// ```
public struct Track: Sendable, Equatable, Codable {
    /// The catalog's identifier (a Spotify URI in the shipped catalog). Never empty.
    public var id: String
    /// The title as the catalog gives it.
    public var title: String
    /// The artist or artists; the shipped catalog separates several with `; `.
    public var artist: String
    /// The album name, when the catalog has one.
    public var album: String?
    /// Release year (1000…2100).
    public var year: Int?
    /// Genres (from the `;`-separated `genres` column), trimmed, in catalog order.
    public var genres: [String]
    /// Duration in milliseconds (> 0).
    public var durationMs: Int?
    /// Popularity 0…100 (Spotify's scale).
    public var popularity: Int?
    /// Audio features; every one may be missing.
    public var audio: AudioFeatures

    /// Creates a track.
    public init(
        id: String, title: String, artist: String, album: String? = nil, year: Int? = nil,
        genres: [String] = [], durationMs: Int? = nil, popularity: Int? = nil,
        audio: AudioFeatures = AudioFeatures()
    ) {
        self.id = id
        self.title = title
        self.artist = artist
        self.album = album
        self.year = year
        self.genres = genres
        self.durationMs = durationMs
        self.popularity = popularity
        self.audio = audio
    }

    enum CodingKeys: String, CodingKey {
        case id = "track_id", title, artist, album, year, genres
        case durationMs = "duration_ms", popularity, audio
    }
}

/// Spotify-style audio features of a track, each optional (many catalogs lack them).
///
/// Units and ranges are those of the catalog format: `tempo` in BPM (0…300), `loudness`
/// in dB (−60…5), the others in 0…1.
public struct AudioFeatures: Sendable, Equatable, Codable {
    /// Estimated tempo in beats per minute; 0 means no beat was detected.
    public var tempo: Double?
    /// Perceived intensity, 0…1.
    public var energy: Double?
    /// Musical positiveness, 0…1.
    public var valence: Double?
    /// Suitability for dancing, 0…1.
    public var danceability: Double?
    /// Confidence that the track is acoustic, 0…1.
    public var acousticness: Double?
    /// Likelihood that the track has no vocals, 0…1.
    public var instrumentalness: Double?
    /// Presence of spoken words, 0…1.
    public var speechiness: Double?
    /// Average loudness in dB, −60…5.
    public var loudness: Double?

    /// Creates a set of features; omitted ones are missing.
    public init(
        tempo: Double? = nil, energy: Double? = nil, valence: Double? = nil,
        danceability: Double? = nil, acousticness: Double? = nil, instrumentalness: Double? = nil,
        speechiness: Double? = nil, loudness: Double? = nil
    ) {
        self.tempo = tempo
        self.energy = energy
        self.valence = valence
        self.danceability = danceability
        self.acousticness = acousticness
        self.instrumentalness = instrumentalness
        self.speechiness = speechiness
        self.loudness = loudness
    }

    /// True when no feature is present.
    public var isEmpty: Bool {
        tempo == nil && energy == nil && valence == nil && danceability == nil
            && acousticness == nil && instrumentalness == nil && speechiness == nil && loudness == nil
    }
}
