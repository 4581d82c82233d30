import SoundtrackContext
import SoundtrackStore

extension Store.UserSummary {
    /// The user as `users show` prints it and `POST /v1/users` answers it: `id`, `email_hash`,
    /// `email_hash_scheme` (`hmac-sha256`, or `sha256` for a legacy hash; `null` without an email),
    /// the deprecated `email_sha256` (a legacy hash only, else `null`; removed in the next version),
    /// `age`, `region`, `created_at`, and with `counts` the user's `bins`, `picks` and `feedback`.
    public func json(counts: Bool) -> JSONValue {
        var pairs: [(String, JSONValue)] = [
            ("id", .string(id)), ("email_hash", emailHash.map(JSONValue.string) ?? .null),
            ("email_hash_scheme", emailHashScheme.map { .string($0.rawValue) } ?? .null),
            ("email_sha256", emailHashScheme == .sha256 ? emailHash.map(JSONValue.string) ?? .null : .null),
            ("age", age.map { .number(Double($0)) } ?? .null), ("region", region.map(JSONValue.string) ?? .null),
            ("created_at", .string(Timestamp(date: createdAt, offsetSeconds: 0).rfc3339))
        ]
        if counts {
            pairs += [("bins", .number(Double(bins))), ("picks", .number(Double(picks))), ("feedback", .number(Double(feedback)))]
        }
        return .object(pairs)
    }
}
