import Foundation
import Logging
import NIOSSL
import PostgresNIO
import Synchronization

/// Where a PostgreSQL database is and how to reach it, read from a `postgres://` URL.
///
/// ```swift
/// let endpoint = try PostgresEndpoint(url: "postgres://soundtrack:secret@127.0.0.1:5432/soundtrack?sslmode=disable")
/// try await endpoint.withConnection(logger: logger) { connection in
///     try await PostgresMigrator().migrate(connection, logger: logger)
/// }
/// ```
///
/// The URL's form is libpq's: `postgres://` or `postgresql://`, a user (required) and a password
/// (percent-encoded), a host (a name, an IPv4 address or a bracketed IPv6 address), a port (default
/// 5432), a database (default: the user's name) and one parameter, `sslmode`: `disable`, `prefer`
/// (the default: TLS when the server offers it) or `require`. With TLS the server's certificate and
/// name are verified against the system's trust roots.
public struct PostgresEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// How the connection uses TLS (the URL's `sslmode`).
    public enum TLSMode: String, Sendable, CaseIterable {
        /// Never.
        case disable
        /// When the server offers it.
        case prefer
        /// Always; the connection fails when the server does not offer it.
        case require
    }

    /// The server's host name or address (an IPv6 address without its brackets).
    public var host: String
    /// The server's port (5432 when the URL gives none).
    public var port: Int
    /// The user to log in as.
    public var username: String
    /// The user's password, percent-decoded (`nil`: none given).
    public var password: String?
    /// The database (the user's name when the URL gives none).
    public var database: String
    /// Whether the connection uses TLS (`sslmode`; `prefer` when the URL gives none).
    public var tls: TLSMode

    /// Reads a `postgres://` URL.
    /// - Throws: ``PostgresURLError`` naming what is wrong with it (never the password).
    public init(url: String) throws(PostgresURLError) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            throw .notAURL
        }
        guard scheme == "postgres" || scheme == "postgresql" else { throw .scheme(scheme) }
        guard let host = components.host, !host.isEmpty else { throw .missing("host") }
        guard let user = components.user, !user.isEmpty else { throw .missing("user") }
        var database = components.path
        if database.hasPrefix("/") { database.removeFirst() }
        guard !database.contains("/") else { throw .database(database) }
        var tls = TLSMode.prefer
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode" else { throw .parameter(item.name) }
            guard let value = item.value, let mode = TLSMode(rawValue: value) else { throw .sslmode(item.value ?? "") }
            tls = mode
        }
        if let port = components.port, !(1...65535).contains(port) { throw .port(port) }
        // URLComponents keeps an IPv6 host's brackets; the socket address takes it without them.
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.port = components.port ?? 5432
        self.username = user
        self.password = components.password
        // `URLComponents.path` is already percent-decoded: decoding it again would read `%2541` as `A`.
        self.database = database.isEmpty ? user : database
        self.tls = tls
    }

    /// The same server and credentials, another database (tests make a database of their own).
    public func with(database: String) -> PostgresEndpoint {
        var copy = self
        copy.database = database
        return copy
    }

    /// The URL without its password, for logs and messages.
    public var redactedURL: String {
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        return "postgres://\(username)\(password == nil ? "" : ":…")@\(host):\(port)/\(database)?sslmode=\(tls.rawValue)"
    }

    /// The ``redactedURL``: an endpoint printed or logged shows no password.
    public var description: String { redactedURL }

    /// The postgres-nio configuration of a connection to this endpoint.
    /// - Throws: NIOSSL's error when the system's TLS configuration cannot be loaded.
    public func configuration() throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS
        switch self.tls {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require: tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
        return PostgresConnection.Configuration(host: host, port: port, username: username, password: password, database: database, tls: tls)
    }

    /// Opens a connection; the caller closes it (or use ``withConnection(logger:_:)``).
    public func connect(logger: Logger) async throws -> PostgresConnection {
        try await PostgresConnection.connect(configuration: configuration(), id: connectionIDs.add(1, ordering: .relaxed).newValue, logger: logger)
    }

    /// Runs `body` on a new connection and closes the connection after it, also when it throws.
    public func withConnection<T: Sendable>(logger: Logger, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await connect(logger: logger)
        let result: T
        do {
            result = try await body(connection)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
        return result
    }
}

/// The ids of the connections this process opens (postgres-nio logs them).
private let connectionIDs = Atomic<Int>(0)

/// What is wrong with a `postgres://` URL. Its description never holds the password.
public enum PostgresURLError: Error, Equatable, CustomStringConvertible {
    /// Not a URL at all.
    case notAURL
    /// A scheme other than `postgres` or `postgresql`.
    case scheme(String)
    /// A part the URL must have (`host`, `user`).
    case missing(String)
    /// A database name with a `/` in it.
    case database(String)
    /// A port outside 1…65535.
    case port(Int)
    /// A query parameter other than `sslmode`.
    case parameter(String)
    /// An `sslmode` other than `disable`, `prefer` or `require`.
    case sslmode(String)

    public var description: String {
        switch self {
        case .notAURL: "not a URL (expected postgres://user:password@host:port/database)"
        case .scheme(let s): "the scheme is \(s), expected postgres or postgresql"
        case .missing(let part): "the URL has no \(part) (expected postgres://user:password@host:port/database)"
        case .database(let d): "\"\(d)\" is not a database name (one path segment)"
        case .port(let p): "the port \(p) is not in 1...65535"
        case .parameter(let name): "unknown parameter \(name) (only sslmode is read)"
        case .sslmode(let v): "sslmode=\(v): expected one of \(PostgresEndpoint.TLSMode.allCases.map(\.rawValue).joined(separator: ", "))"
        }
    }
}
