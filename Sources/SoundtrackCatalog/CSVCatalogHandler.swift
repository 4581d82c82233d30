import SoundtrackContext

/// Turns CSV records into tracks: the first record is the header, the others are tracks.
struct CSVCatalogHandler {
    /// The catalog field of each header column (`nil` for ignored columns).
    private var columns: [CatalogField?] = []
    private(set) var headerSeen = false
    private(set) var ignored: [String] = []

    mutating func handle(
        _ record: CSVRecord, _ report: inout CatalogReader.ReportBuilder, _ onTrack: (Track) throws -> Void
    ) throws {
        guard headerSeen else {
            try readHeader(record)
            for name in ignored { report.ignore(name) }
            return
        }
        let track: Track
        do throws(InputError) {
            track = try convert(record)
        } catch {
            report.reject(error.at(line: record.line))
            return
        }
        try report.accept(track, line: record.line, onTrack)
    }

    private mutating func readHeader(_ record: CSVRecord) throws(InputError) {
        headerSeen = true
        if let p = record.problem {
            throw InputError(path: "header", expected: p.expected, got: p.got, line: record.line)
        }
        var names: [String] = []
        for i in 0..<record.count {
            guard let s = String(validating: record.field(i), as: UTF8.self) else {
                throw InputError(path: "header", expected: "UTF-8 text", got: "invalid bytes", line: record.line)
            }
            names.append(CatalogField.trim(s).lowercased())
        }
        var seen = Set<CatalogField>()
        for name in names {
            guard let f = CatalogField.byColumn[name] else {
                columns.append(nil)
                ignored.append(name)
                continue
            }
            guard seen.insert(f).inserted else {
                throw InputError(path: "header", expected: "each column once", got: "'\(name)' twice", line: record.line)
            }
            columns.append(f)
        }
        for f in CatalogField.required where !seen.contains(f) {
            throw InputError(
                path: "header", expected: "a '\(f.column)' column",
                got: CatalogField.quote(names.joined(separator: ",")), line: record.line)
        }
    }

    private func convert(_ record: CSVRecord) throws(InputError) -> Track {
        if let p = record.problem {
            throw InputError(path: "", expected: p.expected, got: p.got)
        }
        guard record.count == columns.count else {
            throw InputError(path: "", expected: "\(columns.count) fields as in the header", got: "\(record.count)")
        }
        var draft = TrackDraft()
        for (i, column) in columns.enumerated() {
            guard let field = column else { continue }
            let raw = record.field(i)
            switch field.kind {
            case .text:
                let bytes = field == .trackID ? CatalogField.trimmedASCII(raw) : raw
                guard let s = String(validating: bytes, as: UTF8.self) else {
                    throw InputError(path: field.column, expected: "UTF-8 text", got: "invalid bytes")
                }
                draft.setText(field, s)
            case .genres:
                guard Self.isUTF8(raw) else {
                    throw InputError(path: field.column, expected: "UTF-8 text", got: "invalid bytes")
                }
                draft.genres = CatalogField.splitGenres(raw)
            case .integer, .number:
                let text = CatalogField.trimmedASCII(raw)
                if text.isEmpty { continue }
                guard let v = DecimalParser.parse(text) else {
                    throw InputError(
                        path: field.column, expected: field.expectation,
                        got: CatalogField.quote(String(decoding: text, as: UTF8.self)))
                }
                draft.setNumber(field, try field.validate(v, got: String(decoding: text, as: UTF8.self)))
            }
        }
        return try draft.build()
    }

    private static func isUTF8(_ raw: UnsafeRawBufferPointer) -> Bool {
        if raw.allSatisfy({ $0 < 0x80 }) { return true }
        return String(validating: raw, as: UTF8.self) != nil
    }
}
