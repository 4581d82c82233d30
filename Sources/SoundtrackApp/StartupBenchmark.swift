import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Times what a new process pays before its first answer on a database that has grown: a one-shot
/// `soundtrack pick` (read-only and learning) and `soundtrack serve` until `/readyz` answers 200
/// (issue 40). Each run is a new process of `executable`, as a user starts one.
///
/// ```swift
/// let ms = try StartupBenchmark.serveReady(executable: exe, database: "/tmp/big.sqlite")
/// ```
public enum StartupBenchmark {
    /// The time from starting `soundtrack serve --db DATABASE --port 0` until `GET /readyz`
    /// answers 200, in milliseconds; the service is then stopped with SIGTERM and waited for.
    /// - Throws: ``ProcessBenchmark/ProcessFailure`` when it cannot start, says no listening line,
    ///   or is not ready within `timeout` seconds.
    public static func serveReady(executable: URL, database: String, extraArguments: [String] = [], timeout: Double = 600) throws -> Double {
        let arguments = ["serve", "--db", database, "--port", "0"] + extraArguments
        let t0 = DispatchTime.now().uptimeNanoseconds
        let p = try BenchChild(executable: executable, arguments: arguments, reading: .standardError)
        defer {
            if p.isRunning {
                p.send(SIGTERM)
                p.waitUntilExit()
            }
        }
        guard let port = listeningPort(p.output) else {
            throw ProcessBenchmark.ProcessFailure(status: -1, arguments: arguments)
        }
        while !isReady(port: port) {
            guard Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9 < timeout, p.isRunning else {
                throw ProcessBenchmark.ProcessFailure(status: -2, arguments: arguments)
            }
            usleep(2000)
        }
        return Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6
    }

    /// The port of the service's `listening on http://127.0.0.1:PORT` line, read from its log.
    static func listeningPort(_ log: FileHandle) -> Int? {
        var text = ""
        while true {
            let chunk = log.availableData
            if chunk.isEmpty { return nil }
            text += String(decoding: chunk, as: UTF8.self)
            if let range = text.range(of: "listening on http://127.0.0.1:") {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                if !digits.isEmpty, text[range.upperBound...].dropFirst(digits.count).first != nil { return Int(digits) }
            }
        }
    }

    /// Whether `GET /readyz` on the loopback port answers 200 (one plain HTTP/1.1 request).
    static func isReady(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return false }
        let request = Array("GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        guard send(fd, request, request.count, 0) == request.count else { return false }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = recv(fd, &buffer, buffer.count, 0)
        guard n > 0 else { return false }
        return String(decoding: buffer[0..<n], as: UTF8.self).hasPrefix("HTTP/1.1 200")
    }
}
