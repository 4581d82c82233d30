import Foundation
import SoundtrackContext

/// The two catalog encodings of docs/formats.md.
public enum CatalogFormat: String, Sendable, CaseIterable, Codable {
    /// CSV with a header line (RFC 4180).
    case csv
    /// JSON Lines: one JSON object a line, with the CSV column names as keys.
    case jsonLines = "jsonl"

    /// The format a file name's extension implies: `.csv`, or `.jsonl`, `.ndjson`, `.json`.
    public init?(pathExtension: String) {
        switch pathExtension.lowercased() {
        case "csv": self = .csv
        case "jsonl", "ndjson", "json": self = .jsonLines
        default: return nil
        }
    }
}

/// What a catalog read did: how many tracks were accepted, and why the others were not.
public struct CatalogReadReport: Sendable, Equatable {
    /// The format that was read.
    public var format: CatalogFormat
    /// Tracks handed to the callback.
    public var accepted: Int = 0
    /// The rejected records, each with its line, field and reason (the first
    /// ``CatalogReader/maxRecordedErrors`` of them; ``rejectedCount`` counts all).
    public var rejected: [InputError] = []
    /// The number of rejected records, including those not kept in ``rejected``.
    public var rejectedCount: Int = 0
    /// Columns (CSV header names, or JSON keys) that are not catalog fields and were ignored,
    /// in order of first appearance.
    public var ignoredColumns: [String] = []
    /// Physical lines read (the header included).
    public var lines: Int = 0

    /// Creates an empty report.
    public init(format: CatalogFormat) {
        self.format = format
    }
}

/// Reads a track catalog (CSV or JSON Lines, docs/formats.md) as a stream of validated tracks.
///
/// The input is read in chunks of ``chunkSize`` bytes, so memory use does not grow with the
/// file. A record with a bad value is rejected with its line, field and reason and reading
/// goes on; the caller decides what to do with ``CatalogReadReport/rejected``. Only a
/// problem that makes the whole input unreadable (no header, a missing required column, an
/// unknown format, an I/O error) throws.
///
/// ```swift
/// var tracks: [Track] = []
/// let report = try CatalogReader().read(contentsOf: url) { tracks.append($0) }
/// for e in report.rejected { log(e.description) }  // "line 12: energy: expected a number in 0...1, got 1.7"
/// ```
///
/// Validation: `track_id` non-empty and unique within the input; `year` 1000…2100;
/// `duration_ms` > 0; `popularity` 0…100; `tempo` 0…300; `loudness` −60…5; the other audio
/// features 0…1; numbers finite (and whole for the integer fields). An empty CSV cell or a
/// JSON `null` is a missing value. `genres` is split on `;` and trimmed (JSON Lines also
/// takes an array of strings); `artist` is kept as written.
public struct CatalogReader: Sendable {
    /// Bytes read at a time from a file.
    public var chunkSize: Int
    /// At most this many rejections are kept in the report (all are counted).
    public var maxRecordedErrors: Int
    /// Whether a track id seen before in the same input rejects the record.
    public var rejectsDuplicateIDs: Bool

    /// Creates a reader.
    /// - Parameters:
    ///   - chunkSize: bytes read at a time (at least 1).
    ///   - maxRecordedErrors: how many rejections the report keeps.
    ///   - rejectsDuplicateIDs: reject a record whose `track_id` appeared earlier.
    public init(chunkSize: Int = 1 << 20, maxRecordedErrors: Int = 10_000, rejectsDuplicateIDs: Bool = true) {
        self.chunkSize = max(1, chunkSize)
        self.maxRecordedErrors = max(0, maxRecordedErrors)
        self.rejectsDuplicateIDs = rejectsDuplicateIDs
    }

    /// Reads a catalog file, calling `onTrack` for every valid track in file order.
    /// - Parameters:
    ///   - url: a file URL.
    ///   - format: the encoding; `nil` guesses from the extension (`.csv`, `.jsonl`, `.json`).
    ///   - onTrack: receives each accepted track; an error it throws stops the read and is rethrown.
    /// - Returns: the counts and the rejected records.
    /// - Throws: ``InputError`` for an unknown format or an unusable CSV header; file errors;
    ///   whatever `onTrack` throws.
    public func read(
        contentsOf url: URL, format: CatalogFormat? = nil, onTrack: (Track) throws -> Void
    ) throws -> CatalogReadReport {
        let format = try format ?? Self.guessFormat(url)
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        return try read(from: handle, format: format, onTrack: onTrack)
    }

    /// Reads a catalog from an open file handle (a file, a pipe, standard input) until its end.
    /// - Throws: as ``read(contentsOf:format:onTrack:)``.
    public func read(
        from handle: FileHandle, format: CatalogFormat, onTrack: (Track) throws -> Void
    ) throws -> CatalogReadReport {
        var driver = Driver(format: format, reader: self)
        while true {
            guard let chunk = try handle.read(upToCount: chunkSize), !chunk.isEmpty else { break }
            try chunk.withUnsafeBytes { try driver.feed($0, onTrack) }
        }
        return try driver.finish(onTrack)
    }

    /// Reads a catalog held in memory.
    /// - Throws: as ``read(contentsOf:format:onTrack:)``.
    public func read(data: Data, format: CatalogFormat, onTrack: (Track) throws -> Void) throws -> CatalogReadReport {
        var driver = Driver(format: format, reader: self)
        try data.withUnsafeBytes { raw in
            var start = 0
            while start < raw.count {
                let end = min(raw.count, start + chunkSize)
                try driver.feed(UnsafeRawBufferPointer(rebasing: raw[start..<end]), onTrack)
                start = end
            }
        }
        return try driver.finish(onTrack)
    }

    /// Reads a whole catalog held in memory into an array.
    public func read(data: Data, format: CatalogFormat) throws -> (tracks: [Track], report: CatalogReadReport) {
        var tracks: [Track] = []
        let report = try read(data: data, format: format) { tracks.append($0) }
        return (tracks, report)
    }

    /// Reads a whole catalog file into an array.
    public func read(contentsOf url: URL, format: CatalogFormat? = nil) throws -> (tracks: [Track], report: CatalogReadReport) {
        var tracks: [Track] = []
        let report = try read(contentsOf: url, format: format) { tracks.append($0) }
        return (tracks, report)
    }

    public static func guessFormat(_ url: URL) throws(InputError) -> CatalogFormat {
        guard let f = CatalogFormat(pathExtension: url.pathExtension) else {
            throw InputError(
                path: "", expected: "a .csv, .jsonl or .json catalog (or an explicit format)",
                got: CatalogField.quote(url.lastPathComponent))
        }
        return f
    }
}

extension CatalogReader {
    /// Strips a UTF-8 byte order mark and routes chunks to the parser of the format.
    struct Driver {
        private var bomPending: [UInt8] = []
        private var bomDecided = false
        private var csv = CSVTokenizer()
        private var csvHandler = CSVCatalogHandler()
        private var lines = LineSplitter()
        private var report: ReportBuilder
        private let format: CatalogFormat

        init(format: CatalogFormat, reader: CatalogReader) {
            self.format = format
            report = ReportBuilder(format: format, reader: reader)
        }

        mutating func feed(_ chunk: UnsafeRawBufferPointer, _ onTrack: (Track) throws -> Void) throws {
            if bomDecided { return try parse(chunk, onTrack) }
            var rest = chunk[...]
            while bomPending.count < 3, let b = rest.first {
                bomPending.append(b)
                rest = rest.dropFirst()
            }
            if bomPending.count < 3 && Self.bom.starts(with: bomPending) { return }
            try decideBOM(onTrack)
            try parse(UnsafeRawBufferPointer(rebasing: rest), onTrack)
        }

        mutating func finish(_ onTrack: (Track) throws -> Void) throws -> CatalogReadReport {
            if !bomDecided { try decideBOM(onTrack) }
            switch format {
            case .csv:
                try csv.finish { r in try csvHandler.handle(r, &report, onTrack) }
                if !csvHandler.headerSeen {
                    throw InputError(path: "header", expected: "a header line naming the columns", got: "an empty input", line: 1)
                }
                report.report.lines = csv.line - (csv.endedWithLineBreak ? 1 : 0)
            case .jsonLines:
                try lines.finish { line, n in try JSONLinesCatalogHandler.handle(line, n, &report, onTrack) }
                report.report.lines = lines.line
            }
            return report.report
        }

        private static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]

        private mutating func decideBOM(_ onTrack: (Track) throws -> Void) throws {
            bomDecided = true
            let pending = bomPending
            bomPending = []
            if pending == Self.bom { return }
            try pending.withUnsafeBytes { try parse($0, onTrack) }
        }

        private mutating func parse(_ chunk: UnsafeRawBufferPointer, _ onTrack: (Track) throws -> Void) throws {
            switch format {
            case .csv:
                try csv.feed(chunk) { r in try csvHandler.handle(r, &report, onTrack) }
            case .jsonLines:
                try lines.feed(chunk) { line, n in try JSONLinesCatalogHandler.handle(line, n, &report, onTrack) }
            }
        }
    }

    /// Counts, keeps rejections and checks ids for repeats.
    struct ReportBuilder {
        var report: CatalogReadReport
        private var seen: [UInt64: Int] = [:]
        private var ignored = Set<String>()
        private let maxErrors: Int
        private let checkDuplicates: Bool

        init(format: CatalogFormat, reader: CatalogReader) {
            report = CatalogReadReport(format: format)
            maxErrors = reader.maxRecordedErrors
            checkDuplicates = reader.rejectsDuplicateIDs
        }

        mutating func accept(_ track: Track, line: Int, _ onTrack: (Track) throws -> Void) throws {
            if checkDuplicates {
                let h = StableHash.fnv1a(track.id)
                if let first = seen[h] {
                    reject(
                        InputError(
                            path: CatalogField.trackID.column, expected: "an id not used before (first on line \(first))",
                            got: CatalogField.quote(track.id), line: line))
                    return
                }
                seen[h] = line
            }
            try onTrack(track)
            report.accepted += 1
        }

        /// Records a column or key that is not a catalog field (once).
        mutating func ignore(_ name: String) {
            if ignored.insert(name).inserted { report.ignoredColumns.append(name) }
        }

        mutating func reject(_ error: InputError) {
            report.rejectedCount += 1
            if report.rejected.count < maxErrors { report.rejected.append(error) }
        }
    }
}
