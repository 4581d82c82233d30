import PostgresNIO

/// What went wrong in a PostgreSQL call, in words: the server's message, its SQLSTATE and detail.
/// postgres-nio's own descriptions hide all of it (they may hold data); ours are of schema work and
/// of the store's statements, whose text holds no secret.
public enum PostgresErrorText {
    /// The server's message of `error` (through a failed transaction to the error inside it), or
    /// the error's type when the server sent none.
    public static func describe(_ error: any Error) -> String {
        if let t = error as? PostgresTransactionError {
            if let inner = t.closureError ?? t.commitError ?? t.beginError { return describe(inner) }
        }
        if let p = error as? PSQLError {
            if let info = p.serverInfo {
                var text = info[.message] ?? "error"
                if let state = info[.sqlState] { text += " (SQLSTATE \(state))" }
                if let detail = info[.detail] { text += ": \(detail)" }
                return text
            }
            return "\(p.code)"
        }
        return String(describing: error)
    }
}
