import Crypto
import Foundation
import Synchronization

/// The secret key under which the store hashes users' email addresses (HMAC-SHA256), so that
/// someone holding only the database cannot confirm a guessed address by hashing it.
///
/// The key must live apart from the database: a copy of the database alone then gives no way to
/// test an address. A key file is 64 or more hex digits (32 bytes or more), for example made with
/// `openssl rand -hex 32`.
///
/// ```swift
/// let key = try EmailKey(hex: "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff")
/// key.hash("ana@example.org")   // 64 hex digits, not the plain SHA-256 of the address
/// ```
public struct EmailKey: Sendable {
    /// The fewest bytes a key may have (the output size of SHA-256).
    public static let minimumBytes = 32

    /// The key's bytes (`SymmetricKey` is not `Sendable`: it is made for each hash). Never printed:
    /// the key describes and reflects itself as redacted.
    let bytes: [UInt8]

    /// A key from its bytes.
    /// - Throws: ``EmailKeyError/tooShort(bytes:)`` for fewer than ``minimumBytes`` bytes.
    public init(bytes: [UInt8]) throws(EmailKeyError) {
        guard bytes.count >= Self.minimumBytes else { throw .tooShort(bytes: bytes.count) }
        self.bytes = bytes
    }

    /// A key from hex text (surrounding white space is ignored), as a key file holds it.
    /// - Throws: ``EmailKeyError/notHex`` or ``EmailKeyError/tooShort(bytes:)``.
    public init(hex: String) throws(EmailKeyError) {
        let digits = Array(hex.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        guard digits.count % 2 == 0 else { throw .notHex }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let hi = Self.nibble(digits[i]), let lo = Self.nibble(digits[i + 1]) else { throw .notHex }
            bytes.append(hi << 4 | lo)
            i += 2
        }
        try self.init(bytes: bytes)
    }

    /// A new random key of 32 bytes (for in-memory stores and new key files).
    public static func random() -> EmailKey {
        // SymmetricKey draws from the system's secure random source.
        EmailKey(unchecked: SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
    }

    private init(unchecked bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The key as hex text (what a key file holds).
    var hex: String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// The keyed hash of an email address already normalised (trimmed, lower-cased: ``NewUser``),
    /// as 64 hex digits.
    public func hash(_ email: String) -> String {
        HMAC<SHA256>.authenticationCode(for: Data(email.utf8), using: SymmetricKey(data: bytes)).map { String(format: "%02x", $0) }.joined()
    }

    /// The default key file of a database: `<database>.email-key`, beside it.
    public static func defaultFile(forDatabase path: String) -> String {
        path + ".email-key"
    }

    /// Reads a key file.
    /// - Throws: ``EmailKeyError/unreadable(path:reason:)``, or ``EmailKeyError/malformed(path:reason:)``
    ///   for a file that does not hold a key (``init(hex:)``).
    public static func read(file path: String) throws(EmailKeyError) -> EmailKey {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw .unreadable(path: path, reason: "\(error.localizedDescription)")
        }
        do {
            return try EmailKey(hex: text)
        } catch {
            throw .malformed(path: path, reason: error.description)
        }
    }

    /// Creates a key file holding a new random key, readable and writable by its owner only (mode
    /// 0600); fails if the file exists. The key is written to a temporary file beside it, synced,
    /// then linked into place (atomic, and refused if the name exists) and the directory synced: a
    /// crash leaves either no key file or a whole one, and a key file that survives a power loss
    /// with the hashes made under it.
    /// - Throws: ``EmailKeyError/unwritable(path:reason:)``.
    public static func create(file path: String) throws(EmailKeyError) -> EmailKey {
        let key = random()
        func failure() -> EmailKeyError { .unwritable(path: path, reason: String(cString: strerror(errno))) }
        let temporary = "\(path).tmp-\(getpid())"
        unlink(temporary)  // a leftover of a crashed process with the same pid
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure() }
        defer { unlink(temporary) }
        let text = Array((key.hex + "\n").utf8)
        let written = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == text.count, fsync(fd) == 0 else {
            let error = failure()
            close(fd)
            throw error
        }
        close(fd)
        guard link(temporary, path) == 0 else { throw failure() }
        let directory = open((path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent, O_RDONLY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
        return key
    }

    /// A fingerprint of the key (HMAC-SHA256 of a fixed text under it, 64 hex digits): recorded with
    /// the database's keyed hashes, so that another key is refused instead of making hashes that
    /// match nothing stored. It tells nothing of the key.
    public var fingerprint: String {
        hash("soundtrack email key fingerprint v1")
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Why an email key could not be had.
public enum EmailKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Fewer than ``EmailKey/minimumBytes`` bytes.
    case tooShort(bytes: Int)
    /// Not an even number of hex digits.
    case notHex
    /// The key file could not be read.
    case unreadable(path: String, reason: String)
    /// The key file does not hold a key.
    case malformed(path: String, reason: String)
    /// The key file could not be created.
    case unwritable(path: String, reason: String)
    /// The key is not the one the database's keyed hashes were made with (their fingerprints differ).
    case otherKey(source: String)
    /// The key file is missing but users' hashes were made with a key: a new key would not match them.
    case missing(path: String, keyedUsers: Int)

    /// What went wrong, naming the file and what to do.
    public var description: String {
        switch self {
        case let .tooShort(n): "an email key needs at least \(EmailKey.minimumBytes) bytes (\(2 * EmailKey.minimumBytes) hex digits), got \(n)"
        case .notHex: "an email key is an even number of hex digits"
        case let .unreadable(path, reason): "cannot read the email key file \(path): \(reason)"
        case let .malformed(path, reason): "the email key file \(path): \(reason)"
        case let .unwritable(path, reason): "cannot create the email key file \(path): \(reason)"
        case let .otherKey(source):
            "the email key (\(source)) is not the key this database's email hashes were made with: give that key (--email-key-file)"
        case let .missing(path, n):
            "the email key file \(path) is missing, but the email hashes of \(n) users were made with a key: restore the file (or give the key with --email-key-file)"
        }
    }
}

/// Where a store gets its ``EmailKey``.
public enum EmailKeySource: Sendable {
    /// This key.
    case key(EmailKey)
    /// The key in this file, read when an address is first hashed; created (mode 0600) then if it
    /// does not exist and no user's hash needs the old key.
    case file(String)
}

/// The store's email key, resolved once, on first use (a store that never hashes an address never
/// reads or creates a key file).
final class EmailKeyring: Sendable {
    let source: EmailKeySource

    /// Where the key came from, for errors: the file, or "given".
    var sourceDescription: String {
        switch source {
        case let .file(path): "file \(path)"
        case .key: "given"
        }
    }
    private let resolved = Mutex<EmailKey?>(nil)

    init(_ source: EmailKeySource) {
        self.source = source
        if case let .key(k) = source { resolved.withLock { $0 = k } }
    }

    /// The key; `keyedUsers` counts the users whose hash was made with a key (asked only when the
    /// key file does not exist).
    func key(keyedUsers: () throws -> Int) throws -> EmailKey {
        if let k = resolved.withLock({ $0 }) { return k }
        guard case let .file(path) = source else { preconditionFailure("a key source is resolved at init") }
        let key: EmailKey
        if FileManager.default.fileExists(atPath: path) {
            key = try EmailKey.read(file: path)
        } else {
            let n = try keyedUsers()
            guard n == 0 else { throw EmailKeyError.missing(path: path, keyedUsers: n) }
            key = try EmailKey.create(file: path)
        }
        return resolved.withLock { r in
            if let k = r { return k }
            r = key
            return key
        }
    }
}

extension EmailKey: CustomStringConvertible, CustomReflectable {
    /// `EmailKey(redacted)`: a key never reaches a log or an error by being printed.
    public var description: String { "EmailKey(redacted)" }
    /// No children: `dump` and debuggers show no bytes.
    public var customMirror: Mirror { Mirror(self, children: []) }
}
