import Foundation
import SoundtrackApp
import SoundtrackContext

/// Big-chunk reading of a file or standard input, for the JSON Lines commands.
final class ChunkReader: @unchecked Sendable {
    let fd: Int32
    let size: Int?
    /// The path given, for messages (`-` for standard input).
    let path: String
    private let owned: Bool

    /// Opens a file, or standard input for `-`.
    /// - Throws: ``InputError`` (exit status 2) for a path that is missing, unreadable or a directory.
    init(_ path: String) throws {
        self.path = path
        if path == "-" {
            fd = 0
            owned = false
            size = nil
        } else {
            let f = open(path, O_RDONLY)
            guard f >= 0 else {
                throw InputError(path: "", expected: "a readable file", got: "'\(path)' (not found or unreadable)")
            }
            var st = stat()
            let known = fstat(f, &st) == 0
            if known, st.st_mode & S_IFMT == S_IFDIR {
                close(f)
                throw InputError(path: "", expected: "a readable file", got: "'\(path)' (a directory)")
            }
            fd = f
            owned = true
            size = known ? Int(st.st_size) : nil
        }
    }

    deinit { if owned { close(fd) } }

    /// Reads into `buffer`: how many bytes were read, 0 at the end of input.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let n = Foundation.read(fd, buffer.baseAddress!, buffer.count)
            if n < 0 {
                if errno == EINTR { continue }
                throw CLIError("cannot read \(path == "-" ? "standard input" : path): \(String(cString: strerror(errno)))")
            }
            return n
        }
    }
}

/// Writing to a file or standard output.
final class OutputFile {
    let fd: Int32
    private let owned: Bool

    /// Creates (truncating) a file, or standard output for `-`.
    init(_ path: String) throws {
        if path == "-" {
            fd = 1
            owned = false
        } else {
            let f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard f >= 0 else { throw CLIError("cannot write \(path): \(String(cString: strerror(errno)))") }
            fd = f
            owned = true
        }
    }

    deinit { if owned { close(fd) } }

    func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Writes the byte ranges one after the other (writev, up to 1,024 ranges a call).
    func write(_ pieces: [UnsafeRawBufferPointer]) throws {
        var vectors = pieces.filter { $0.count > 0 }.map { iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count) }
        var first = 0
        while first < vectors.count {
            let count = min(1024, vectors.count - first)
            let n = vectors.withUnsafeMutableBufferPointer { writev(fd, $0.baseAddress! + first, Int32(count)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CLIError("write failed: \(String(cString: strerror(errno)))")
            }
            // Skip what was written; a partial write leaves the rest of one range for the next call.
            var left = n
            while left > 0 && first < vectors.count {
                if left >= vectors[first].iov_len {
                    left -= vectors[first].iov_len
                    first += 1
                } else {
                    vectors[first].iov_base = vectors[first].iov_base! + left
                    vectors[first].iov_len -= left
                    left = 0
                }
            }
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var off = 0
        while off < bytes.count {
            let n = Foundation.write(fd, bytes.baseAddress! + off, bytes.count - off)
            if n < 0 {
                if errno == EINTR { continue }
                throw CLIError("write failed: \(String(cString: strerror(errno)))")
            }
            off += n
        }
    }

    func write(_ s: String) throws { try write(Array(s.utf8)) }
}

/// A runtime failure with a message (exit 1).
struct CLIError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// Where rejected records go: a JSON Lines report file (`--errors FILE`), else the first few on standard error.
final class ErrorSink {
    private let file: OutputFile?
    private(set) var count = 0
    private(set) var lines: [Int] = []
    static let shownOnStderr = 20

    init(path: String?) throws {
        file = try path.map { try OutputFile($0) }
    }

    func report(_ e: LineError) throws {
        count += 1
        if lines.count < 10 { lines.append(e.line) }
        if let file {
            var out: [UInt8] = []
            e.json().write(into: &out)
            out.append(0x0A)
            try file.write(out)
        } else if count <= Self.shownOnStderr {
            Progress.clearLine()
            stderr("error: \(e.description)")
        }
    }

    /// A hint when errors were left off standard error.
    var hint: String? {
        file == nil && count > Self.shownOnStderr ? "(\(count - Self.shownOnStderr) more errors not shown; use --errors FILE for the full report)" : nil
    }
}

/// A progress bar on standard error, only when it is a terminal.
final class Progress {
    let total: Int?
    let unit: String
    let enabled: Bool
    private let start = DispatchTime.now().uptimeNanoseconds
    private var last: UInt64 = 0

    init(total: Int?, unit: String) {
        self.total = total
        self.unit = unit
        enabled = isatty(2) == 1
    }

    static func clearLine() {
        if isatty(2) == 1 { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    /// Seconds since the start.
    var elapsed: Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }

    /// Updates the bar: `records` done, `done` of ``total`` (bytes or records).
    func update(records: Int, done: Int) {
        guard enabled else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        guard now - last > 100_000_000 else { return }
        last = now
        let t = elapsed
        let rate = t > 0 ? Double(records) / t : 0
        var line = ""
        if let total, total > 0 {
            let f = min(1, Double(done) / Double(total))
            let width = 30
            let filled = Int(f * Double(width))
            let eta = f > 0 ? t * (1 - f) / f : 0
            line =
                "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
                + String(format: "%3.0f%% ", f * 100)
                + "\(records) \(unit)  \(Int(rate))/s  ETA \(Self.duration(eta))"
        } else {
            line = "\(records) \(unit)  \(Int(rate))/s  \(Self.duration(t))"
        }
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
    }

    func finish() {
        if enabled { Self.clearLine() }
    }

    static func duration(_ s: Double) -> String {
        s < 60 ? String(format: "%.0fs", s) : String(format: "%dm%02ds", Int(s) / 60, Int(s) % 60)
    }
}
