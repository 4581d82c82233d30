import Foundation

/// A place learned from a user's coordinates: the centre of the points it took and how many.
public struct LearnedPlace: Sendable, Equatable, Codable {
    /// The place's id within its book: `pl-1`, `pl-2`…
    public var id: String
    /// Latitude of the centre, in degrees.
    public var lat: Double
    /// Longitude of the centre, in degrees.
    public var lon: Double
    /// How many points the place has taken.
    public var count: Int
    /// What the person calls the place ("home"), or `nil`: given with `soundtrack places name`
    /// or `PUT /v1/users/{id}/places/{place}`, or taken from a snapshot's `location.place` sent
    /// at the place while it had none.
    public var name: String?

    /// A learned place from its fields.
    public init(id: String, lat: Double, lon: Double, count: Int, name: String? = nil) {
        self.id = id
        self.lat = lat
        self.lon = lon
        self.count = count
        self.name = name
    }

    /// The longest name a place may have, in characters.
    public static let maxNameLength = 64

    /// A name as the person gave it, trimmed: 1…``maxNameLength`` characters (Unicode code points,
    /// as JSON Schema and SQLite count them), no control characters.
    /// - Throws: ``InputError`` at `path` for an empty, too long or unprintable name.
    public static func validName(_ text: String, path: String = "name") throws(InputError) -> String {
        let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let length = name.unicodeScalars.count
        guard length >= 1, length <= maxNameLength else {
            throw InputError(path: path, expected: "a name of 1...\(maxNameLength) characters", got: "\(length) characters")
        }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw InputError(path: path, expected: "a name without control characters", got: "'\(name.prefix(maxNameLength).debugDescription)'")
        }
        return name
    }
}

/// One user's learned places: online leader clustering of the coordinates of their snapshots.
///
/// Each point goes to the nearest place within a radius (great-circle distance), whose
/// centre moves to the running mean of its points, kept at ``precisionDegrees``; a point with no
/// place in reach starts a new one there. The result depends only on the order of the points, so replays agree.
///
/// ```swift
/// var book = PlaceBook()
/// book.resolve(lat: 42.0267, lon: -93.6465, radiusMeters: 150)  // "pl-1"
/// book.resolve(lat: 42.0270, lon: -93.6460, radiusMeters: 150)  // "pl-1" (about 50 m away)
/// book.resolve(lat: 42.0500, lon: -93.6465, radiusMeters: 150)  // "pl-2"
/// ```
public struct PlaceBook: Sendable, Equatable, Codable {
    /// The places in the order they were created.
    public var places: [LearnedPlace]

    /// A book of places (empty for a new user).
    public init(places: [LearnedPlace] = []) {
        self.places = places
    }

    /// The mean Earth radius in metres (IUGG).
    public static let earthRadiusMeters = 6_371_008.8

    /// The precision a place's centre is kept at, in memory and in the store: 0.001° (about 111 m
    /// of latitude, and at most that of longitude). A centre says which neighbourhood, not which
    /// door; points within the radius of a place still join it as before.
    public static let precisionDegrees = 0.001

    /// A coordinate rounded to ``precisionDegrees``.
    public static func coarsened(_ degrees: Double) -> Double {
        (degrees * 1000).rounded() / 1000
    }

    /// Assigns a point to a place, learning from it, and returns the place's id.
    ///
    /// - Parameters:
    ///   - lat: latitude in degrees.
    ///   - lon: longitude in degrees.
    ///   - radiusMeters: how far a point may be from a place's centre to join it.
    /// - Returns: the id of the nearest place within the radius (whose centre and count are
    ///   updated), or of a new place at the point.
    ///   - reserved: ids used before (a vocabulary's place names): a new place is numbered past
    ///     them too, so that a place learned after the book was emptied (location services turned
    ///     off and on again) does not take the name, and so the feature slot, of a forgotten one.
    @discardableResult
    public mutating func resolve(lat: Double, lon: Double, radiusMeters: Double, reserved: [String] = []) -> String {
        if let i = nearestIndex(lat: lat, lon: lon, within: radiusMeters) {
            var p = places[i]
            p.count += 1
            let n = Double(p.count)
            p.lat = PlaceBook.coarsened(p.lat + (lat - p.lat) / n)
            p.lon = PlaceBook.coarsened(PlaceBook.wrapLongitude(p.lon + PlaceBook.wrapLongitude(lon - p.lon) / n))
            places[i] = p
            return p.id
        }
        var next = 1
        for id in places.lazy.map(\.id) + reserved where id.hasPrefix("pl-") {
            if let k = Int(id.dropFirst(3)), k >= next { next = k + 1 }
        }
        let id = "pl-\(next)"
        places.append(LearnedPlace(id: id, lat: PlaceBook.coarsened(lat), lon: PlaceBook.coarsened(lon), count: 1))
        return id
    }

    /// The names people gave their places, by place id.
    public var names: [String: String] {
        var out: [String: String] = [:]
        for p in places { if let n = p.name { out[p.id] = n } }
        return out
    }

    /// Names a place (`nil` removes its name).
    /// - Returns: whether the book has a place with this id.
    @discardableResult
    public mutating func name(_ id: String, _ name: String?) -> Bool {
        guard let i = places.firstIndex(where: { $0.id == id }) else { return false }
        places[i].name = name
        return true
    }

    /// Names the nearest place within a radius of a point when it has no name yet, without
    /// learning from the point (a snapshot's label sent at a learned place).
    /// - Returns: the id of the place named, or `nil` when none in reach lacked a name.
    public mutating func nameNearest(lat: Double, lon: Double, within radiusMeters: Double, _ name: String) -> String? {
        guard let i = nearestIndex(lat: lat, lon: lon, within: radiusMeters), places[i].name == nil else { return nil }
        places[i].name = name
        return places[i].id
    }

    /// The nearest place within a radius of a point, without learning from it.
    ///
    /// - Parameters:
    ///   - lat: latitude in degrees.
    ///   - lon: longitude in degrees.
    ///   - radiusMeters: the largest distance to consider.
    /// - Returns: the nearest place (the first created on a tie), or `nil` when none is in reach.
    public func nearest(lat: Double, lon: Double, within radiusMeters: Double) -> LearnedPlace? {
        nearestIndex(lat: lat, lon: lon, within: radiusMeters).map { places[$0] }
    }

    func nearestIndex(lat: Double, lon: Double, within radiusMeters: Double) -> Int? {
        // Degrees of latitude that the radius spans: a cheap filter before the haversine.
        let latSpan = radiusMeters / PlaceBook.earthRadiusMeters * 180 / .pi
        var best: Int? = nil
        var bestDistance = Double.infinity
        for (i, p) in places.enumerated() where abs(p.lat - lat) <= latSpan {
            let d = PlaceBook.distanceMeters(lat1: lat, lon1: lon, lat2: p.lat, lon2: p.lon)
            if d <= radiusMeters, d < bestDistance {
                best = i
                bestDistance = d
            }
        }
        return best
    }

    /// The great-circle distance between two points, by the haversine formula.
    ///
    /// - Parameters:
    ///   - lat1: latitude of the first point, in degrees.
    ///   - lon1: longitude of the first point, in degrees.
    ///   - lat2: latitude of the second point, in degrees.
    ///   - lon2: longitude of the second point, in degrees.
    /// - Returns: the distance in metres.
    public static func distanceMeters(lat1: Double, lon1: Double, lat2: Double, lon2: Double) -> Double {
        let radians = Double.pi / 180
        let dLat = (lat2 - lat1) * radians
        let dLon = (lon2 - lon1) * radians
        let s1 = sin(dLat / 2)
        let s2 = sin(dLon / 2)
        let a = s1 * s1 + cos(lat1 * radians) * cos(lat2 * radians) * s2 * s2
        return 2 * earthRadiusMeters * asin(min(1, a.squareRoot()))
    }

    /// A longitude brought into -180...180.
    static func wrapLongitude(_ lon: Double) -> Double {
        var x = lon
        while x > 180 { x -= 360 }
        while x < -180 { x += 360 }
        return x
    }
}
