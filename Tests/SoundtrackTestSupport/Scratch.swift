import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Scratch directories for tests, all under one directory of the test process that is removed when
/// the process exits normally (`atexit`; a process killed by a signal or a trap leaves it): a test
/// run leaves nothing behind in the temporary directory (databases, logs, copied binaries).
public enum Scratch {
    /// `<temporary directory>/soundtrack-tests-<pid>`, made on first use; removed at exit.
    public static let root: URL = {
        let u = FileManager.default.temporaryDirectory.appendingPathComponent("soundtrack-tests-\(getpid())")
        try! FileManager.default.createDirectory(at: u, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: Scratch.root) }
        return u
    }()

    /// A new, empty directory named `prefix-<uuid>` under ``root``.
    public static func directory(_ prefix: String) -> URL {
        let u = root.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: u, withIntermediateDirectories: true)
        return u
    }
}
