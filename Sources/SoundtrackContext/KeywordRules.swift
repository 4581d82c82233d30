/// An ordered list of keyword rules over normalised tokens; the first rule that matches wins.
///
/// A rule is written as a pattern string:
/// - `gym`: the token `gym`;
/// - `train*`: a token starting with `train`;
/// - `*training`: a token ending with `training` (German compounds such as `krafttraining`);
/// - `*schlaf*`: a token containing `schlaf`;
/// - `leg day`: consecutive tokens, each matched as above (`stand up`, `1 1` for "1:1").
///
/// Exact words are looked up in a dictionary; the other patterns are scanned in order,
/// only as far as the best match found so far, so a long rule list stays cheap.
struct KeywordRules<Category: Sendable>: Sendable {
    enum Piece: Sendable {
        case word(String), prefix(String), suffix(String), part(String)

        init(_ text: String) {
            let starts = text.hasPrefix("*")
            let ends = text.hasSuffix("*") && text.count > 1
            let core = String(text.dropFirst(starts ? 1 : 0).dropLast(ends ? 1 : 0))
            switch (starts, ends) {
            case (true, true): self = .part(core)
            case (true, false): self = .suffix(core)
            case (false, true): self = .prefix(core)
            case (false, false): self = .word(core)
            }
        }

        func matches(_ token: String) -> Bool {
            switch self {
            case .word(let w): return token == w
            case .prefix(let p): return token.hasPrefix(p)
            case .suffix(let s): return token.hasSuffix(s)
            case .part(let p): return token.contains(p)
            }
        }
    }

    struct Rule: Sendable {
        let category: Category
        let pieces: [Piece]
    }

    let rules: [Rule]
    /// Single exact words → the index of the first rule that is that word.
    let wordIndex: [String: Int]
    /// Indices of the rules that are not a single exact word, in order.
    let scanned: [Int]

    /// Rules from groups of patterns; groups and patterns are in precedence order.
    init(_ groups: [(Category, [String])]) {
        var rules: [Rule] = []
        var wordIndex: [String: Int] = [:]
        var scanned: [Int] = []
        for (category, patterns) in groups {
            for pattern in patterns {
                let pieces = pattern.split(separator: " ").map { Piece(String($0)) }
                let index = rules.count
                rules.append(Rule(category: category, pieces: pieces))
                if pieces.count == 1, case .word(let w) = pieces[0] {
                    if wordIndex[w] == nil { wordIndex[w] = index }
                } else {
                    scanned.append(index)
                }
            }
        }
        self.rules = rules
        self.wordIndex = wordIndex
        self.scanned = scanned
    }

    /// The category of the first rule that matches the tokens, or `nil`.
    func match(_ tokens: [String]) -> Category? {
        var best = Int.max
        for t in tokens {
            if let i = wordIndex[t], i < best { best = i }
        }
        for i in scanned {
            if i >= best { break }
            if matches(rules[i].pieces, tokens) {
                best = i
                break
            }
        }
        return best == Int.max ? nil : rules[best].category
    }

    private func matches(_ pieces: [Piece], _ tokens: [String]) -> Bool {
        guard pieces.count <= tokens.count else { return false }
        if pieces.count == 1 {
            let p = pieces[0]
            for t in tokens where p.matches(t) { return true }
            return false
        }
        outer: for start in 0...(tokens.count - pieces.count) {
            for (k, p) in pieces.enumerated() where !p.matches(tokens[start + k]) { continue outer }
            return true
        }
        return false
    }
}
