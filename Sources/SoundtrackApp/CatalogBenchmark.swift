import Foundation
import SoundtrackCatalog
import SoundtrackStore

/// Catalog benchmarks: import through SQLite, and similar-track queries over the index.
public enum CatalogBenchmark {
    /// One timed catalog import.
    public struct ImportRun: Sendable {
        /// Rows accepted.
        public var rows: Int
        /// Wall time in seconds (read, validate, upsert, commit).
        public var seconds: Double
        /// Rows per second.
        public var rate: Double { seconds > 0 ? Double(rows) / seconds : 0 }
    }

    /// Imports `file` into a new database at `databasePath` (deleted first) and times it.
    /// - Throws: when the file cannot be read or the database cannot be written.
    public static func timeImport(_ file: URL, databasePath: String) throws -> ImportRun {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: databasePath + suffix) }
        let store = try Store(path: databasePath)
        let t0 = DispatchTime.now().uptimeNanoseconds
        let report = try store.importCatalog(file)
        let t1 = DispatchTime.now().uptimeNanoseconds
        return ImportRun(rows: report.accepted, seconds: Double(t1 - t0) / 1e9)
    }

    /// Latencies in microseconds of `queries` similar-track queries (k = `k`) from evenly spread
    /// tracks of the index.
    public static func similarLatencies(_ index: CatalogIndex, queries: Int, k: Int = 10) -> [Double] {
        guard index.count > 0 else { return [] }
        var out: [Double] = []
        out.reserveCapacity(queries)
        let step = max(1, index.count / max(1, queries))
        for q in 0..<queries {
            let row = (q * step + q) % index.count
            let t0 = DispatchTime.now().uptimeNanoseconds
            let hits = index.similar(toTrack: row, k: k)
            let t1 = DispatchTime.now().uptimeNanoseconds
            precondition(hits.count <= k)
            out.append(Double(t1 - t0) / 1000)
        }
        return out
    }

    /// A table of import runs.
    public static func importTable(title: String, _ runs: [ImportRun]) -> [String] {
        var lines = [title, "  " + TextColumns.row(["run", "rows", "seconds", "rows/s"], widths: [-6, 10, 10, 12])]
        for (i, r) in runs.enumerated() {
            lines.append(String(format: "  %-6d %10d %10.2f %12.0f", i + 1, r.rows, r.seconds, r.rate))
        }
        return lines
    }
}

/// Plain-text table columns: `String(format:)` does not pad `%@` on Linux.
enum TextColumns {
    /// The cells joined by one space, each padded to its width (negative: left-aligned).
    static func row(_ cells: [String], widths: [Int]) -> String {
        zip(cells, widths).map { cell, w in
            let pad = String(repeating: " ", count: max(0, abs(w) - cell.count))
            return w < 0 ? cell + pad : pad + cell
        }.joined(separator: " ")
    }
}
