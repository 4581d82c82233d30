import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// The service's guard on each HTTP/1 connection, after the HTTP codec:
///
/// - **Malformed requests.** A request that does not parse as HTTP (a malformed request line or
///   header) gets the API's JSON error, `400 bad_request`, and the connection closes. Without it the
///   HTTP library answers such a request with an empty 400. A parser error that arrives while a
///   request is being read (its head came and its end did not: a body cut off or malformed) is
///   passed on, so that the request's handler answers it (``SoundtrackAPI`` counts it as a 400):
///   never two responses for one request. One that follows whole requests still waiting for their
///   responses (pipelined) is answered after them, in order.
/// - **Early answers.** A response written before its request's body was read to the end closes the
///   connection (see ``write(context:data:promise:)``), and so does the answer to a `CONNECT`.
/// - **The body timeout.** A request whose body is still incomplete when a read ends gets a timer
///   of `bodyTimeout` on the connection's event loop; if the body's end has not come when it fires,
///   ``BodyTimeout`` is sent down the pipeline, which ends the request's body stream with that error
///   (the handler answers 408 and, the body unread, the connection closes). A request read whole in
///   one go (nearly all) sets no timer: the timeout costs the common request nothing, where a timer
///   task per request on Swift's cooperative pool cost about 4 % of the service's CPU.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// The error that ends a request body's stream when the body took longer than the timeout.
    struct BodyTimeout: Error {}

    /// The most time a request's body may take, from the end of the read that brought its head.
    let bodyTimeout: TimeAmount
    /// The pending body timeout of the request being read.
    private var bodyTimer: Scheduled<Void>?

    init(bodyTimeout: TimeAmount) {
        self.bodyTimeout = bodyTimeout
    }

    /// A request's head was read and its end not yet.
    private var reading = false
    /// Requests read whose responses have not ended yet.
    private var pending = 0
    /// A parser error to answer once the pending responses are written.
    private var answerAfterPending = false
    private var answered = false
    /// A `CONNECT` was read: the HTTP codec then takes what follows for a tunnel's bytes, so the
    /// connection closes after the answer (405) instead of waiting for the idle timeout.
    private var tunnel = false

    /// The body of the answer.
    static let body = #"{"error":{"code":"bad_request","message":"malformed HTTP request"}}"#

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(head):
            reading = true
            pending += 1
            if head.method == .connect { tunnel = true }
        case .end:
            reading = false
            cancelBodyTimer()
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if reading, bodyTimer == nil {
            bodyTimer = context.eventLoop.assumeIsolated().scheduleTask(in: bodyTimeout) {
                self.bodyTimer = nil
                if self.reading { context.fireErrorCaught(BodyTimeout()) }
            }
        }
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelBodyTimer()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelBodyTimer()
    }

    private func cancelBodyTimer() {
        bodyTimer?.cancel()
        bodyTimer = nil
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        pending = max(0, pending - 1)
        if reading || tunnel {
            // Answered before its body was read (401, 403, 404, 405, 413, 415…): the rest of the
            // body would be read with no body timeout, a chunk at a time, each restarting the idle
            // timer. The connection closes after the answer instead.
            answered = true
            context.writeAndFlush(data, promise: promise)
            context.close(promise: nil)
            return
        }
        context.write(data, promise: promise)
        if pending == 0, answerAfterPending { answer(context) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError, !reading, !answered else {
            context.fireErrorCaught(error)
            return
        }
        if pending > 0 {
            answerAfterPending = true
        } else {
            answer(context)
        }
    }

    /// Writes the JSON 400 and closes the connection.
    private func answer(_ context: ChannelHandlerContext) {
        answered = true
        answerAfterPending = false
        let bytes = ByteBuffer(string: Self.body)
        let head = HTTPResponse(
            status: .badRequest,
            headerFields: [.contentType: "application/json; charset=utf-8", .contentLength: String(bytes.readableBytes), .connection: "close"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(bytes)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}
