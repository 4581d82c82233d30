import Foundation
import SoundtrackContext
import SoundtrackEngine

/// How a labelled log is split into training and test events (`eval --protocol`).
public enum SplitProtocol: String, Sendable, CaseIterable {
    /// k-fold cross-validation: events are shuffled with the seed and dealt into `folds` folds; each
    /// fold is the test set once, the other folds are its training set.
    case random
    /// Per user, the last `1/folds` of the user's events (at least one) are the test set and every
    /// earlier event trains; events at the same instant as the first test event move to the test set,
    /// so every test event is strictly after every training event of its user. One split.
    case chronological
    /// Per user, the last liked (`like` or `complete`) event is the test set and the user's events
    /// before it train; the events after it (dislikes and skips) are used for nothing. One split.
    case leaveLastOut = "leave-last-out"
}

/// One training/test split of a log: positions into ``LabelledLog/entries``, each list in log order.
public struct Split: Sendable, Equatable {
    /// Events replayed into a fresh state.
    public var train: [Int]
    /// Events asked about, read-only.
    public var test: [Int]

    /// Creates a split.
    public init(train: [Int], test: [Int]) {
        self.train = train
        self.test = test
    }
}

/// Makes the splits of a protocol.
public enum Splitter {
    /// The splits of a log under a protocol.
    /// - Parameters:
    ///   - log: the log.
    ///   - protocol: the protocol.
    ///   - folds: the number of folds (random) or the inverse test share (chronological); ≥ 2.
    ///   - seed: the shuffle's seed (random).
    /// - Returns: `folds` splits for `random`, one split otherwise.
    public static func splits(_ log: LabelledLog, protocol p: SplitProtocol, folds: Int, seed: UInt64) -> [Split] {
        let n = log.entries.count
        switch p {
        case .random:
            var order = Array(0..<n)
            var rng = SeededGenerator(seed: seed, user: "split", counter: 0)
            order.shuffle(using: &rng)
            var fold = [Int](repeating: 0, count: n)
            for (k, i) in order.enumerated() { fold[i] = k % folds }
            return (0..<folds).map { f in
                Split(train: (0..<n).filter { fold[$0] != f }, test: (0..<n).filter { fold[$0] == f })
            }
        case .chronological:
            var isTest = [Bool](repeating: false, count: n)
            for positions in byUser(log).values {
                let m = positions.count
                var cut = m - max(1, m / folds)
                let boundary = log.entries[positions[cut]].event.at.date
                while cut > 0 && log.entries[positions[cut - 1]].event.at.date >= boundary { cut -= 1 }
                for i in positions[cut...] { isTest[i] = true }
            }
            return [Split(train: (0..<n).filter { !isTest[$0] }, test: (0..<n).filter { isTest[$0] })]
        case .leaveLastOut:
            var train: [Int] = []
            var test: [Int] = []
            for positions in byUser(log).values {
                guard let last = positions.lastIndex(where: { log.entries[$0].event.isLike }) else { continue }
                test.append(positions[last])
                train += positions[..<last]
            }
            return [Split(train: train.sorted(), test: test.sorted())]
        }
    }

    /// Positions of each user's events, in log order (which is time order per user).
    static func byUser(_ log: LabelledLog) -> [String: [Int]] {
        var out: [String: [Int]] = [:]
        for (i, e) in log.entries.enumerated() { out[e.event.user, default: []].append(i) }
        return out
    }
}
