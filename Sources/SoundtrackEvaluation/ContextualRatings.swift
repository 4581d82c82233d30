import Foundation
import SoundtrackContext

/// A data set of ratings given in a context, in the compact CSV layout of context-aware
/// recommender toolkits (CARSKit): `userid,itemid,rating,<one column per context dimension>`, with
/// `NA` (or an empty field) where a dimension was not given. The input of `soundtrack eval ratings`.
///
/// ```swift
/// let data = try ContextualRatings.parse(text)
/// data.columns        // ["Time", "Location", "Companion"]
/// data.rows[0].context  // ["Weekday", "Home", nil]
/// ```
public struct ContextualRatings: Sendable {
    /// One rating.
    public struct Row: Sendable, Equatable {
        /// The 1-based line in the file.
        public var line: Int
        /// The user.
        public var user: String
        /// The item.
        public var item: String
        /// The rating, 1…5 (whole or not).
        public var rating: Double
        /// One value per context column, `nil` where not given.
        public var context: [String?]
    }

    /// The context columns' names, in file order.
    public var columns: [String]
    /// The ratings in file order.
    public var rows: [Row]

    /// Creates a data set from parsed parts.
    public init(columns: [String], rows: [Row]) {
        self.columns = columns
        self.rows = rows
    }

    /// The distinct users, in order of first appearance.
    public var users: [String] {
        var seen = Set<String>()
        return rows.compactMap { seen.insert($0.user).inserted ? $0.user : nil }
    }

    /// Parses a file.
    /// - Throws: ``InputError`` naming the line and the column of the first bad row (a rating outside
    ///   1…5 or not a number, an empty user or item, a row with the wrong number of fields).
    public static func parse(_ text: String) throws(InputError) -> ContextualRatings {
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        guard let header = lines.first, !header.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw InputError(path: "line 1", expected: "a header userid,itemid,rating,<context columns>", got: "an empty file")
        }
        let names = fields(header)
        guard names.count >= 3,
            ["userid", "user", "user_id"].contains(names[0].lowercased()),
            ["itemid", "item", "item_id", "track", "track_id"].contains(names[1].lowercased()),
            names[2].lowercased() == "rating"
        else {
            throw InputError(path: "line 1", expected: "a header userid,itemid,rating,<context columns>", got: "'\(header)'")
        }
        let columns = Array(names.dropFirst(3))
        var rows: [Row] = []
        for (k, raw) in lines.enumerated().dropFirst() {
            let line = k + 1
            if raw.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            let f = fields(raw)
            guard f.count == names.count else {
                throw InputError(path: "line \(line)", expected: "\(names.count) fields like the header", got: "\(f.count)")
            }
            guard !f[0].isEmpty else { throw InputError(path: "line \(line): userid", expected: "a user id", got: "an empty field") }
            guard !f[1].isEmpty else { throw InputError(path: "line \(line): itemid", expected: "an item id", got: "an empty field") }
            guard let rating = Double(f[2]), rating.isFinite, (1...5).contains(rating) else {
                throw InputError(path: "line \(line): rating", expected: "a number in 1...5", got: "'\(f[2])'")
            }
            let context = f.dropFirst(3).map { v -> String? in v.isEmpty || v.uppercased() == "NA" ? nil : v }
            rows.append(Row(line: line, user: f[0], item: f[1], rating: rating, context: context))
        }
        guard !rows.isEmpty else { throw InputError(path: "line 2", expected: "at least one rating", got: "none") }
        return ContextualRatings(columns: columns, rows: rows)
    }

    /// Parses an items file: `itemid,categories` with the categories separated by `|`, `;` or
    /// spaces (numeric codes or names), other columns ignored.
    /// - Returns: each item's categories.
    /// - Throws: ``InputError`` naming the line of a row without an item id.
    public static func parseItems(_ text: String) throws(InputError) -> [String: [String]] {
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        guard let header = lines.first else { return [:] }
        let names = fields(header).map { $0.lowercased() }
        guard let item = names.firstIndex(where: { ["itemid", "item", "item_id", "track", "track_id"].contains($0) }),
            let categories = names.firstIndex(where: { ["categories", "category", "genres", "genre"].contains($0) })
        else {
            throw InputError(path: "line 1", expected: "a header naming itemid and categories", got: "'\(header)'")
        }
        var out: [String: [String]] = [:]
        for (k, raw) in lines.enumerated().dropFirst() {
            if raw.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            let f = fields(raw)
            guard f.count > max(item, categories), !f[item].isEmpty else {
                throw InputError(path: "line \(k + 1)", expected: "an item id and its categories", got: "'\(raw)'")
            }
            out[f[item]] = f[categories].split(whereSeparator: { $0 == "|" || $0 == ";" || $0 == " " }).map(String.init)
        }
        return out
    }

    /// The comma-separated fields of a line, trimmed, with double quotes around a field removed.
    static func fields(_ line: Substring) -> [String] {
        var out: [String] = []
        var current = ""
        var quoted = false
        for ch in line {
            if ch == "\"" {
                quoted.toggle()
            } else if ch == ",", !quoted {
                out.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
            } else {
                current.append(ch)
            }
        }
        out.append(current.trimmingCharacters(in: .whitespaces))
        return out
    }
}
