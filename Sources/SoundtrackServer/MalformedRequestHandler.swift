import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers a request that does not parse as HTTP (a malformed request line or header) with the
/// API's JSON error, `400 bad_request`, and closes the connection. Without it the HTTP library
/// answers such a request with an empty 400.
///
/// A response written before its request's body was read to the end closes the connection (see
/// ``write(context:data:promise:)``).
///
/// It sits after the HTTP codec. A parser error that arrives while a request is being read (its
/// head came and its end did not: a body cut off or malformed) is passed on, so that the request's
/// handler answers it (``SoundtrackAPI`` counts it as a 400): never two responses for one request.
/// One that follows whole requests still waiting for their responses (pipelined) is answered after
/// them, in order.
final class MalformedRequestHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// A request's head was read and its end not yet.
    private var reading = false
    /// Requests read whose responses have not ended yet.
    private var pending = 0
    /// A parser error to answer once the pending responses are written.
    private var answerAfterPending = false
    private var answered = false

    /// The body of the answer.
    static let body = #"{"error":{"code":"bad_request","message":"malformed HTTP request"}}"#

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            reading = true
            pending += 1
        case .end: reading = false
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        pending = max(0, pending - 1)
        if reading {
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
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
    }
}
