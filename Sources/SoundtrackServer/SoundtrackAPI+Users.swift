import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import SoundtrackCatalog
import SoundtrackContext
import SoundtrackEngine
import SoundtrackProviders
import SoundtrackRules
import SoundtrackStore
import Synchronization

/// The users: `POST /v1/users`, `GET …/bins`, `PUT …/email`, `DELETE /v1/users/{id}`.
extension SoundtrackAPI {
    func getBins(_ request: Request, context: APIRequestContext, id: String) throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.authorize(user: id)
        let bins = try live.bins(user: id)
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: BinTable.json(bins, user: id))))
    }

    func postUser(_ request: Request, context: APIRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.requireAdmin()
        let body = try await readBody(request)
        let user = try NewUser(json: Self.parseJSON(body))
        try live.addUser(user, at: configuration.clock.now())
        guard let u = try live.store.user(user.id) else { throw APIError.internal }
        var response = Self.json(u.json(counts: false))
        response.status = .created
        return response
    }

    /// Replaces a user's email (`{"email": null}` removes it): stored only as its keyed hash, so a
    /// legacy unkeyed hash is re-keyed when the client supplies the address again.
    func putEmail(_ request: Request, context: APIRequestContext, id: String) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.requireAdmin()
        let body = try await readBody(request)
        let r = try JSONObjectReader(Self.parseJSON(body), base: "")
        _ = try r.require("email", "a string or null")
        let email = try r.string("email", maxLength: 254)
        try live.store.setEmail(email, user: id)
        guard let u = try live.store.user(id) else { throw RuleError.unknownUser(id) }
        return Self.json(u.json(counts: false))
    }

    func deleteUser(_ request: Request, context: APIRequestContext, id: String) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.requireAdmin()
        try await live.forget(user: id)
        authenticator.forgetKeys(of: id)
        try await truncateLog()
        return Response(status: .noContent)
    }

    /// Copies the write-ahead log into the database file and truncates it, so that once a forget
    /// is answered no file of the database holds the person (the deleted rows' pages are zeroed in
    /// the database file, `secure_delete` being on, and the log that still held them is empty).
    /// Tried for up to 10 s, on a thread of its own: the checkpoint waits for readers to leave the
    /// log, holding new writes back 5 ms at a time.
    /// - Throws: 503 `unavailable` when the log could not be emptied in that time (the rows are
    ///   deleted; the next forget empties the log).
    func truncateLog() async throws {
        guard let checkpointer = forgetCheckpointer else { return }
        let clock = configuration.clock, logger = logger
        let emptied: Bool = await withCheckedContinuation { done in
            Thread.detachNewThread {
                let deadline = clock.monotonic() + 10
                repeat {
                    if (try? checkpointer.checkpoint(.truncate)) != nil { return done.resume(returning: true) }
                    Thread.sleep(forTimeInterval: 0.02)
                } while clock.monotonic() < deadline
                done.resume(returning: false)
            }
        }
        guard emptied else {
            logger.error("forget: the write-ahead log could not be emptied in 10 s")
            throw APIError(
                .serviceUnavailable, code: "unavailable",
                message: "the user is deleted, but the database's log could not be emptied yet; the next forget empties it",
                retryAfter: 10)
        }
    }
}
