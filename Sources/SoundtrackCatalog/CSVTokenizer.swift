/// An incremental RFC 4180 tokenizer: bytes in (in chunks of any size), records out.
///
/// Handles quoted fields, doubled quotes inside them, commas and line breaks inside
/// quotes, LF, CRLF and lone-CR line ends (also split across chunks). Blank lines are
/// skipped. A quote inside an unquoted field is kept literally; text after a closing
/// quote, or a quote never closed, marks the record malformed (it is still emitted, with
/// ``CSVRecord/problem`` set, so the caller can report it and go on).
struct CSVTokenizer {
    private enum State { case fieldStart, unquoted, quoted, quoteInQuoted }

    private var state = State.fieldStart
    private var bytes: [UInt8] = []
    private var ends: [Int] = []
    private var hasContent = false
    private var skipLF = false
    private var problem: (expected: String, got: String)?
    /// The 1-based physical line being read.
    private(set) var line = 1
    private var recordLine = 1
    /// Whether the last byte fed was a line break.
    private(set) var endedWithLineBreak = false

    init() {
        bytes.reserveCapacity(1024)
        ends.reserveCapacity(32)
    }

    private static let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","),
        lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")

    /// Feeds a chunk; calls `onRecord` for every record completed in it.
    mutating func feed(_ chunk: UnsafeRawBufferPointer, _ onRecord: (CSVRecord) throws -> Void) rethrows {
        let quote = Self.quote, comma = Self.comma, lf = Self.lf, cr = Self.cr
        var i = 0
        let n = chunk.count
        if n > 0 { endedWithLineBreak = chunk[n - 1] == lf || chunk[n - 1] == cr }
        while i < n {
            let b = chunk[i]
            i += 1
            if skipLF {
                skipLF = false
                if b == lf { continue }
            }
            switch state {
            case .unquoted:
                if b == comma {
                    ends.append(bytes.count)
                    state = .fieldStart
                } else if b == lf || b == cr {
                    try endRecord(terminator: b, onRecord)
                } else {
                    // Copy the run up to the next comma or line break in one go.
                    let start = i - 1
                    while i < n, chunk[i] != comma, chunk[i] != lf, chunk[i] != cr { i += 1 }
                    bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[start..<i]))
                }
            case .fieldStart:
                if b == quote {
                    state = .quoted
                    hasContent = true
                } else if b == comma {
                    ends.append(bytes.count)
                    hasContent = true
                } else if b == lf || b == cr {
                    try endRecord(terminator: b, onRecord)
                } else {
                    let start = i - 1
                    while i < n, chunk[i] != comma, chunk[i] != lf, chunk[i] != cr { i += 1 }
                    bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[start..<i]))
                    state = .unquoted
                    hasContent = true
                }
            case .quoted:
                if b == quote {
                    state = .quoteInQuoted
                } else if b == lf {
                    line += 1
                    bytes.append(b)
                } else {
                    let start = i - 1
                    while i < n, chunk[i] != quote, chunk[i] != lf { i += 1 }
                    bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[start..<i]))
                }
            case .quoteInQuoted:
                if b == quote {
                    bytes.append(quote)
                    state = .quoted
                } else if b == comma {
                    ends.append(bytes.count)
                    state = .fieldStart
                } else if b == lf || b == cr {
                    try endRecord(terminator: b, onRecord)
                } else {
                    if problem == nil {
                        problem = ("a comma or line end after a closing quote", CatalogField.quote(String(decoding: [b], as: UTF8.self)))
                    }
                    bytes.append(b)
                    state = .unquoted
                }
            }
        }
    }

    /// Ends the input: emits the last record if the input did not end with a line break.
    mutating func finish(_ onRecord: (CSVRecord) throws -> Void) rethrows {
        skipLF = false
        if state == .quoted, problem == nil {
            problem = ("a closing quote", "the end of the input")
        }
        if hasContent || !bytes.isEmpty {
            try endRecord(terminator: nil, onRecord)
        }
    }

    private mutating func endRecord(terminator: UInt8?, _ onRecord: (CSVRecord) throws -> Void) rethrows {
        let startLine = recordLine
        if let t = terminator {
            line += 1
            if t == Self.cr { skipLF = true }
        }
        recordLine = line
        defer {
            bytes.removeAll(keepingCapacity: true)
            ends.removeAll(keepingCapacity: true)
            hasContent = false
            problem = nil
            state = .fieldStart
        }
        if !hasContent && bytes.isEmpty && ends.isEmpty { return }  // blank line
        ends.append(bytes.count)
        let problem = self.problem
        try bytes.withUnsafeBytes { raw in
            try ends.withUnsafeBufferPointer { e in
                try onRecord(CSVRecord(bytes: raw, ends: e, line: startLine, problem: problem))
            }
        }
    }
}

/// One CSV record, valid only during the callback that receives it.
struct CSVRecord {
    /// The unescaped bytes of all fields, concatenated.
    let bytes: UnsafeRawBufferPointer
    /// The end offset of each field in `bytes`.
    let ends: UnsafeBufferPointer<Int>
    /// The line the record starts on (1-based).
    let line: Int
    /// A structural problem (an unclosed quote, text after a closing quote).
    let problem: (expected: String, got: String)?

    var count: Int { ends.count }

    /// The bytes of field `i`.
    func field(_ i: Int) -> UnsafeRawBufferPointer {
        let start = i == 0 ? 0 : ends[i - 1]
        return UnsafeRawBufferPointer(rebasing: bytes[start..<ends[i]])
    }
}
