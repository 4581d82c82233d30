import SoundtrackContext

/// Splits chunks of bytes into lines (LF or CRLF), also across chunk boundaries.
struct LineSplitter {
    private var carry: [UInt8] = []
    /// The number of lines emitted so far (the 1-based number of the last one).
    private(set) var line = 0

    /// Calls `body` with each complete line in the chunk (without its line break) and its number.
    mutating func feed(_ chunk: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer, Int) throws -> Void) rethrows {
        var start = 0
        let n = chunk.count
        var i = 0
        while i < n {
            if chunk[i] == 0x0A {
                line += 1
                if carry.isEmpty {
                    try body(Self.strippingCR(UnsafeRawBufferPointer(rebasing: chunk[start..<i])), line)
                } else {
                    carry.append(contentsOf: chunk[start..<i])
                    try carry.withUnsafeBytes { try body(Self.strippingCR($0), line) }
                    carry.removeAll(keepingCapacity: true)
                }
                start = i + 1
            }
            i += 1
        }
        if start < n { carry.append(contentsOf: chunk[start..<n]) }
    }

    /// Emits the last line if the input did not end with a line break.
    mutating func finish(_ body: (UnsafeRawBufferPointer, Int) throws -> Void) rethrows {
        guard !carry.isEmpty else { return }
        line += 1
        try carry.withUnsafeBytes { try body(Self.strippingCR($0), line) }
        carry.removeAll()
    }

    private static func strippingCR(_ b: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        if let last = b.last, last == 0x0D { return UnsafeRawBufferPointer(rebasing: b.dropLast()) }
        return b
    }
}

/// Turns JSON Lines records into tracks.
enum JSONLinesCatalogHandler {
    static func handle(
        _ line: UnsafeRawBufferPointer, _ number: Int, _ report: inout CatalogReader.ReportBuilder,
        _ onTrack: (Track) throws -> Void
    ) throws {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }  // blank line
        let track: Track
        do throws(InputError) {
            track = try convert(JSONParser.parse(bytes: line)) { report.ignore($0) }
        } catch {
            report.reject(Self.withinLine(error).at(line: number))
            return
        }
        try report.accept(track, line: number, onTrack)
    }

    /// A parser error says "at line 1, column 7" of the one-line document: keep just the column.
    private static func withinLine(_ error: InputError) -> InputError {
        var e = error
        if let r = e.got.range(of: " at line 1, column ") {
            e.got.replaceSubrange(r, with: " at column ")
        }
        return e
    }

    static func convert(_ value: JSONValue, ignoring: (String) -> Void = { _ in }) throws(InputError) -> Track {
        guard case let .object(pairs) = value else {
            throw InputError(path: "", expected: "an object (one track a line)", got: value.typeDescription)
        }
        var draft = TrackDraft()
        var present = Set<CatalogField>()
        for (key, v) in pairs {
            guard let field = CatalogField.byColumn[key] else {
                ignoring(key)
                continue
            }
            if case .null = v { continue }
            present.insert(field)
            switch (field.kind, v) {
            case let (.text, .string(s)), let (.genres, .string(s)):
                draft.setText(field, s)
            case let (.genres, .array(items)):
                var genres: [String] = []
                for (i, item) in items.enumerated() {
                    guard case let .string(g) = item else {
                        throw InputError(path: "\(key)[\(i)]", expected: "a string", got: item.typeDescription)
                    }
                    let t = CatalogField.trim(g)
                    if !t.isEmpty, !genres.contains(t) { genres.append(t) }
                }
                draft.genres = genres
            case let (.integer, .number(d)), let (.number, .number(d)):
                draft.setNumber(field, try field.validate(d, got: CatalogField.render(d)))
            default:
                throw InputError(path: key, expected: field.expectation, got: v.typeDescription)
            }
        }
        for f in CatalogField.required where !present.contains(f) {
            throw InputError(path: f.column, expected: "a string", got: "nothing")
        }
        return try draft.build()
    }
}
