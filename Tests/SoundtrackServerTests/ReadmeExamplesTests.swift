import Foundation
import SoundtrackTestSupport
import Testing

/// The README's HTTP tour runs as printed (issue 42, item 8): its `sh` block, run by bash in a
/// fresh directory against a fresh database, with only the binary's path and the port replaced
/// (and the scratch file it writes kept in that directory). Every `curl` must get a 2xx answer
/// (`--fail-with-body`), every command must succeed (`set -e -o pipefail`), and the service must
/// end with status 0 after the block's SIGTERM.
@Suite struct ReadmeExamplesTests {
    /// The `sh` block of README.md's "HTTP service" section.
    static func httpTour() throws -> String {
        let readme = try String(contentsOf: Repo.root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "## HTTP service"))
        let rest = readme[section.upperBound...]
        let open = try #require(rest.range(of: "```sh\n"))
        let close = try #require(rest[open.upperBound...].range(of: "\n```"))
        return String(rest[open.upperBound..<close.lowerBound])
    }

    @Test func theHTTPTourRunsAsPrinted() async throws {
        let dir = Repo.tempDir()
        try FileManager.default.createSymbolicLink(
            at: dir.appendingPathComponent("datasets"), withDestinationURL: Repo.root.appendingPathComponent("datasets"))
        let port = try freePort()
        let tour = try Self.httpTour()
            .replacingOccurrences(of: "B=.build/release/soundtrack", with: "B='\(CLI.executable.path)'")
            .replacingOccurrences(of: "8080", with: "\(port)")
            .replacingOccurrences(of: "/tmp/library.json", with: "library.json")
        #expect(tour.contains("curl"))
        let script = """
            set -e -o pipefail
            trap 'kill %1 2>/dev/null || true' EXIT
            curl() { command curl --fail-with-body --max-time 20 "$@"; }
            \(tour)
            wait %1
            """
        // At most two minutes (a service that never gets ready would otherwise hold the test).
        let r = try await CLI.start(URL(fileURLWithPath: "/usr/bin/timeout"), ["120", "/bin/bash", "-c", script], cwd: dir).finished()
        #expect(r.status == 0, "the tour failed (\(r.status)):\n\(r.stdout)\n\(r.stderr)")
        // What the tour's steps answered: a pick, the applied feedback, the bins, the settings,
        // the new user, the metrics line, the quiz.
        #expect(r.stdout.contains(#""pick_id""#), "\(r.stdout)")
        #expect(r.stdout.contains(#""status":"applied""#), "\(r.stdout)")
        #expect(r.stdout.contains(#""keep_raw_snapshots":false"#), "\(r.stdout)")
        #expect(r.stdout.contains("soundtrack_picks"), "\(r.stdout)")
        // The quiz: a round of demo's, answered once.
        #expect(r.stdout.contains(#""time_limit_seconds":20"#) && r.stdout.contains(#""new_best":true"#), "\(r.stdout)")
    }

    /// A TCP port nobody listens on now (bound to port 0, then closed).
    func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return Int(UInt16(bigEndian: addr.sin_port))
    }
}
