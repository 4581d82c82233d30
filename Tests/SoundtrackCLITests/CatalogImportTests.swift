import Foundation
import SoundtrackCatalog
import SoundtrackStore
import SoundtrackTestSupport
import Testing

@testable import SoundtrackApp

@Suite("Catalog import at scale")
struct CatalogImportTests {
    func tempDir() throws -> URL {
        let d = Scratch.directory("st-cat")
        return d
    }

    @Test("The synthetic catalog is deterministic and every row of it imports, quoted titles included")
    func syntheticCatalogImports() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        var a = Data(), b = Data(), c = Data()
        SyntheticCatalog(seed: 3, genres: ["pop", "rock", "jazz"]).write(rows: 3000) { a.append($0) }
        SyntheticCatalog(seed: 3, genres: ["pop", "rock", "jazz"]).write(rows: 3000) { b.append($0) }
        SyntheticCatalog(seed: 4, genres: ["pop", "rock", "jazz"]).write(rows: 3000) { c.append($0) }
        #expect(a == b)
        #expect(a != c)
        let file = dir.appendingPathComponent("s.csv")
        try a.write(to: file)
        let store = try Store(path: dir.appendingPathComponent("s.sqlite").path)
        // Small batches, so that several transactions are exercised.
        let report = try store.importCatalog(file, batchSize: 700)
        #expect(report.accepted == 3000)
        #expect(report.rejectedCount == 0)
        #expect(try store.trackCount() == 3000)
        let tracks = try store.allTracks()
        #expect(tracks.contains { $0.title.contains(",") && $0.title.contains("\"") })
        #expect(tracks.filter { $0.audio.energy == nil }.count > 100)
        #expect(Set(tracks.flatMap(\.genres)).isSubset(of: ["pop", "rock", "jazz"]))
        // Importing the same file again upserts: no new rows.
        _ = try store.importCatalog(file)
        #expect(try store.trackCount() == 3000)
    }

    @Test("fixed4 prints what %.4f prints", arguments: [0.0, 1.0, 0.12345, -5.634, -0.00004, 199.99999, 0.5, -30.0])
    func fixed4(_ x: Double) {
        #expect(SyntheticCatalog.fixed4(x) == String(format: "%.4f", x) || (x > -0.00005 && x < 0 && SyntheticCatalog.fixed4(x) == "0.0000"))
    }
}
