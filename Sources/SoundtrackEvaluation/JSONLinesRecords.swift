import Foundation
import SoundtrackContext

/// The records of a JSON Lines file as the evaluation commands read them (labelled logs, snapshots).
enum JSONLinesRecords {
    /// Calls `body` with each non-blank line's number (from 1) and bytes, in order; the first error
    /// stops the reading and is thrown with its line (``InputError/at(line:)``).
    static func forEach(_ data: Data, _ body: (_ line: Int, _ record: UnsafeRawBufferPointer) throws(InputError) -> Void) throws(InputError) {
        var failure: InputError?
        data.withUnsafeBytes { (all: UnsafeRawBufferPointer) in
            var start = 0, line = 0
            let n = all.count
            while start < n, failure == nil {
                line += 1
                var end = start
                while end < n && all[end] != 0x0A { end += 1 }
                let rec = UnsafeRawBufferPointer(rebasing: all[start..<end])
                start = end + 1
                guard rec.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { continue }
                do throws(InputError) {
                    try body(line, rec)
                } catch {
                    failure = error.at(line: line)
                }
            }
        }
        if let failure { throw failure }
    }
}
