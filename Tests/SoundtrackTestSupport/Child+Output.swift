import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension Child {
    /// Reads the child's standard output and error (those that are pipes) to their ends, both at
    /// once: a child that fills one pipe while the test waits on the other does not block. Blocks
    /// this thread; does not wait for the child to end.
    public func readToEnd() -> (stdout: Data, stderr: Data) {
        var fds = [standardOutput?.fileDescriptor ?? -1, standardError?.fileDescriptor ?? -1]
        var collected = [Data(), Data()]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while fds.contains(where: { $0 >= 0 }) {
            // poll skips the negative entries (the streams already at their end).
            var polled = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if poll(&polled, nfds_t(polled.count), -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for i in fds.indices where fds[i] >= 0 && polled[i].revents != 0 {
                let n = buffer.withUnsafeMutableBytes { read(fds[i], $0.baseAddress, $0.count) }
                if n > 0 {
                    collected[i].append(contentsOf: buffer[0..<n])
                } else if n == 0 || errno != EINTR {
                    fds[i] = -1
                }
            }
        }
        return (collected[0], collected[1])
    }
}
