import Foundation
import SoundtrackContext
import SoundtrackEngine
import SoundtrackStore

/// A user's bins as the front-ends show them: a readable table (`soundtrack bins`, the demo) and
/// the wire JSON (`bins --json`, `GET /v1/users/{id}/bins`).
public enum BinTable {
    /// One line per bin: id, label, size, likes, dislikes, observations, prior, best tracks.
    public static func render(_ bins: [Bin], store: Store) throws -> [String] {
        guard !bins.isEmpty else { return ["  (no bins)"] }
        let ids = bins.flatMap { best($0).map(\.trackId) }
        let meta = try store.tracks(ids: ids)
        var rows: [[String]] = [["bin", "label", "songs", "likes", "dislikes", "seen", "prior", "best tracks"]]
        for b in bins {
            let likes = b.songs.reduce(0) { $0 + $1.likes }
            let dislikes = b.songs.reduce(0) { $0 + $1.dislikes }
            let top = best(b).map { meta[$0.trackId]?.title ?? $0.trackId }.joined(separator: "; ")
            rows.append([b.id, b.label, "\(b.songs.count)", "\(likes)", "\(dislikes)", "\(b.observations)", b.prior ?? "-", top])
        }
        var widths = [Int](repeating: 0, count: rows[0].count)
        for r in rows { for (i, c) in r.enumerated() where i < r.count - 1 { widths[i] = max(widths[i], c.count) } }
        return rows.map { r in
            "  "
                + r.enumerated().map { i, c in i < r.count - 1 ? c.padding(toLength: widths[i], withPad: " ", startingAt: 0) : c }
                .joined(separator: "  ")
        }
    }

    static func best(_ b: Bin) -> [BinSong] {
        Array(b.songs.filter { $0.likes > 0 }.sorted { ($0.likes - $0.dislikes, $1.trackId) > ($1.likes - $1.dislikes, $0.trackId) }.prefix(3))
    }

    /// The bins as a JSON array (for `bins --json`): id, label, observations, prior and songs with counts.
    public static func json(_ bins: [Bin], user: String) -> String {
        JSONValue.array(
            bins.map { b in
                .object([
                    ("id", .string(b.id)), ("user", .string(user)), ("label", .string(b.label)),
                    ("observations", .number(Double(b.observations))),
                    ("prior", b.prior.map(JSONValue.string) ?? .null),
                    ("created_at", .string(Timestamp(date: b.createdAt, offsetSeconds: 0).rfc3339)),
                    (
                        "songs",
                        .array(
                            b.songs.map {
                                .object([("track", .string($0.trackId)), ("likes", .number(Double($0.likes))), ("dislikes", .number(Double($0.dislikes)))])
                            })
                    )
                ])
            }
        ).serialized()
    }
}
