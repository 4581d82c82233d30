import Foundation
import SoundtrackCatalog
import SoundtrackEngine

/// A deterministic synthetic catalog in the CSV format of docs/formats.md, for import benchmarks at a
/// scale no committed file has (a million rows and more).
///
/// Rows look like real ones: Spotify-style ids, titles with commas and quotes (so the CSV needs
/// quoting), one to four genres drawn from a real genre vocabulary, and audio features in their
/// documented ranges; about one row in ten has no audio features at all, as in real catalogs.
///
/// ```swift
/// var out = Data()
/// SyntheticCatalog(seed: 7, genres: ["pop", "rock"]).write(rows: 1000) { out.append($0) }
/// ```
public struct SyntheticCatalog: Sendable {
    /// The seed: the same seed and row count give the same bytes.
    public var seed: UInt64
    /// The genre vocabulary rows draw from (a synthetic one when empty).
    public var genres: [String]

    /// Creates a generator.
    public init(seed: UInt64 = 1, genres: [String] = []) {
        self.seed = seed
        self.genres = genres.isEmpty ? (0..<400).map { "genre \($0)" } : genres
    }

    /// The CSV header of docs/formats.md.
    public static let header =
        "track_id,title,artist,album,year,genres,duration_ms,popularity,tempo,energy,valence,danceability,acousticness,instrumentalness,speechiness,loudness\n"

    /// Writes the header and `rows` data rows in chunks of about 1 MiB to `sink`.
    public func write(rows: Int, to sink: (Data) throws -> Void) rethrows {
        var rng = SeededGenerator(seed: seed)
        var buf = Data(Self.header.utf8)
        buf.reserveCapacity(1 << 20 + 4096)
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        let words = ["love", "night", "blue", "fire", "home", "road", "heart", "rain", "gold", "light", "wild", "summer", "river", "dream", "city", "echo"]
        for i in 0..<rows {
            var id = [UInt8]("spotify:track:".utf8)
            for _ in 0..<22 { id.append(alphabet[Int(rng.next() % 62)]) }
            buf.append(contentsOf: id)
            let w1 = words[Int(rng.next() % 16)], w2 = words[Int(rng.next() % 16)]
            // Every seventh title needs quoting: a comma, and sometimes an embedded quote.
            let title = i % 7 == 0 ? "\"\(w1), \(w2) \"\"\(i)\"\"\"" : "\(w1) \(w2) \(i)"
            let artist = "Artist \(rng.next() % 50_000)"
            let year = 1960 + Int(rng.next() % 66)
            var g: [String] = []
            for _ in 0...Int(rng.next() % 4) { g.append(genres[Int(rng.next() % UInt64(genres.count))]) }
            var line = ",\(title),\(artist),Album \(rng.next() % 200_000),\(year),\(g.joined(separator: ";")),\(120_000 + Int(rng.next() % 240_000)),\(rng.next() % 101)"
            if rng.next() % 10 == 0 {
                line += ",,,,,,,,\n"
            } else {
                func f(_ x: Double) -> String { Self.fixed4(x) }
                line +=
                    ",\(f(60 + rng.unit() * 140)),\(f(rng.unit())),\(f(rng.unit())),\(f(rng.unit())),\(f(rng.unit())),\(f(rng.unit() * rng.unit())),\(f(rng.unit() * 0.5)),\(f(-30 + rng.unit() * 30))\n"
            }
            buf.append(contentsOf: line.utf8)
            if buf.count >= 1 << 20 {
                try sink(buf)
                buf.removeAll(keepingCapacity: true)
            }
        }
        if !buf.isEmpty { try sink(buf) }
    }

    /// `x` with exactly four decimals (what `%.4f` prints), without the cost of `String(format:)`.
    static func fixed4(_ x: Double) -> String {
        let scaled = Int((abs(x) * 10_000).rounded())
        let frac = scaled % 10_000
        let digits = String(frac)
        return (x < 0 && scaled != 0 ? "-" : "") + "\(scaled / 10_000)." + String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// Writes the catalog to a file (replacing it).
    public func write(rows: Int, to url: URL) throws {
        FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try write(rows: rows) { try handle.write(contentsOf: $0) }
    }
}
