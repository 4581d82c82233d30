/// Splits a migration's text into its statements, for postgres-nio, whose queries carry one
/// statement each (the extended protocol).
///
/// A statement ends at a `;` outside a string (`'…'`), a quoted name (`"…"`), a dollar-quoted body
/// (`$$…$$`, `$tag$…$tag$`), a line comment (`-- …`) and a block comment (`/* … */`, not nested).
/// Comments stay with the statement they precede; statements that are empty or only comments are
/// dropped.
enum SQLStatements {
    static func split(_ sql: String) -> [String] {
        var statements: [String] = []
        var current: [Character] = []
        var chars = Array(sql)[...]
        var meaningful = false
        func flush() {
            let text = String(current).trimmingWhitespace
            if meaningful, !text.isEmpty { statements.append(text) }
            current.removeAll(keepingCapacity: true)
            meaningful = false
        }
        while let c = chars.popFirst() {
            switch c {
            case ";":
                flush()
            case "'", "\"":
                current.append(c)
                meaningful = true
                while let d = chars.popFirst() {
                    current.append(d)
                    if d == c {
                        if chars.first == c { current.append(chars.removeFirst()) } else { break }
                    }
                }
            case "-" where chars.first == "-":
                current.append(c)
                while let d = chars.popFirst() {
                    current.append(d)
                    if d == "\n" { break }
                }
            case "/" where chars.first == "*":
                current.append(c)
                current.append(chars.removeFirst())
                while let d = chars.popFirst() {
                    current.append(d)
                    if d == "*", chars.first == "/" {
                        current.append(chars.removeFirst())
                        break
                    }
                }
            case "$":
                current.append(c)
                meaningful = true
                // A dollar quote's tag: `$$` or `$name$`; anything else (a parameter `$1`) is plain text.
                let tag = chars.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
                guard tag.first?.isNumber != true, chars.dropFirst(tag.count).first == "$" else { continue }
                let delimiter = Array("$" + String(tag) + "$")
                current.append(contentsOf: chars.prefix(tag.count + 1))
                chars = chars.dropFirst(tag.count + 1)
                while !chars.isEmpty, !chars.starts(with: delimiter) { current.append(chars.removeFirst()) }
                current.append(contentsOf: chars.prefix(delimiter.count))
                chars = chars.dropFirst(delimiter.count)
            default:
                current.append(c)
                if !c.isWhitespace { meaningful = true }
            }
        }
        flush()
        return statements
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s.removeFirst() }
        while s.last?.isWhitespace == true { s.removeLast() }
        return String(s)
    }
}
