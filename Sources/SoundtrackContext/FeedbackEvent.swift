import Foundation

/// What a user did with a track: the input of the feedback path.
///
/// The context of the event is a pick this engine made (``pickId``) or an embedded
/// ``snapshot``; at least one is required. ``id`` is the idempotency key.
///
/// ```swift
/// let e = try FeedbackEvent.decode(Data(#"""
/// {"id":"ev-1","user":"u-1","at":"2026-03-14T07:45:02+01:00","track":"t-9","signal":"skip","pick_id":"p-1"}
/// """#.utf8))
/// e.isLike  // false
/// ```
public struct FeedbackEvent: Sendable, Equatable {
    /// The idempotency key: applying the same event twice changes nothing the second time.
    public var id: String
    /// The user's id.
    public var user: String
    /// When the user reacted.
    public var at: Timestamp
    /// The track's id (for example a Spotify URI).
    public var track: String
    /// What the user did.
    public var signal: Signal
    /// The stars of a ``Signal/rate`` event, 1…5 (`nil` for every other signal).
    public var rating: Int?
    /// How long the track played, in milliseconds.
    public var playedMs: Int?
    /// The pick this feedback answers.
    public var pickId: String?
    /// The context of the event when it does not answer a pick (its `user` is the event's).
    public var snapshot: Snapshot?

    /// An event from its parts (not validated; use ``init(json:path:strict:)`` for input).
    public init(
        id: String, user: String, at: Timestamp, track: String, signal: Signal, rating: Int? = nil,
        playedMs: Int? = nil, pickId: String? = nil, snapshot: Snapshot? = nil
    ) {
        self.id = id
        self.user = user
        self.at = at
        self.track = track
        self.signal = signal
        self.rating = rating
        self.playedMs = playedMs
        self.pickId = pickId
        self.snapshot = snapshot
    }
}

/// A user's reaction to a track.
public enum Signal: String, Sendable, Equatable, CaseIterable {
    /// An explicit like.
    case like
    /// An explicit dislike.
    case dislike
    /// Skipped: an implicit dislike.
    case skip
    /// Played to the end: an implicit like.
    case complete
    /// Stars, 1…5, in the event's ``FeedbackEvent/rating``: 4 and 5 count as a like, 1 and 2 as a
    /// dislike, 3 as neither (upserted per user, track and bin: a new rating replaces the old one).
    case rate
}

extension Signal {
    /// Whether an event of this signal (with its `rating`, for `rate`) counts in the track's
    /// favour: `like`, `complete`, or a rating of 4 or 5.
    public func isLike(rating: Int?) -> Bool {
        switch self {
        case .like, .complete: true
        case .dislike, .skip: false
        case .rate: (rating ?? 0) >= 4
        }
    }

    /// Whether an event of this signal counts against the track: `dislike`, `skip`, or a rating of 1 or 2.
    public func isDislike(rating: Int?) -> Bool {
        switch self {
        case .dislike, .skip: true
        case .like, .complete: false
        case .rate: (rating ?? 3) <= 2
        }
    }
}

extension FeedbackEvent {
    /// Whether the event counts in the track's favour (``Signal/isLike(rating:)``).
    public var isLike: Bool { signal.isLike(rating: rating) }

    /// Whether the event counts against the track (``Signal/isDislike(rating:)``).
    public var isDislike: Bool { signal.isDislike(rating: rating) }
}

extension FeedbackEvent {
    static let knownFields = ["id", "user", "at", "track", "signal", "rating", "played_ms", "pick_id", "snapshot"]

    /// Decodes and validates a feedback event from JSON bytes.
    ///
    /// - Parameters:
    ///   - data: one UTF-8 JSON document of at most ``Snapshot/maxBytes`` bytes.
    ///   - strict: whether unknown fields are errors rather than ignored.
    /// - Throws: ``InputError`` for malformed JSON or a field that breaks a rule of ``init(json:path:strict:)``.
    public static func decode(_ data: Data, strict: Bool = false) throws(InputError) -> FeedbackEvent {
        try Snapshot.checkSize(data.count)
        if let e = data.withUnsafeBytes({ fastDecode($0, strict: strict) }) { return e }
        return try FeedbackEvent(json: JSONParser.parse(data), strict: strict)
    }

    /// Decodes and validates a feedback event from raw UTF-8 bytes (no copy is made).
    ///
    /// - Parameters:
    ///   - bytes: one UTF-8 JSON document of at most ``Snapshot/maxBytes`` bytes.
    ///   - strict: whether unknown fields are errors rather than ignored.
    /// - Throws: ``InputError`` as ``decode(_:strict:)``.
    public static func decode(bytes: UnsafeRawBufferPointer, strict: Bool = false) throws(InputError) -> FeedbackEvent {
        try Snapshot.checkSize(bytes.count)
        if let e = fastDecode(bytes, strict: strict) { return e }
        return try FeedbackEvent(json: JSONParser.parse(bytes: bytes), strict: strict)
    }

    /// The fast path: the event straight from bytes, or `nil` when the general path must decide.
    static func fastDecode(_ bytes: UnsafeRawBufferPointer, strict: Bool) -> FeedbackEvent? {
        ByteParser.fastDocument(bytes) { (p: inout ByteParser) throws(Bail) in try p.fastFeedbackEvent(strict: strict) }
    }

    /// Validates a parsed JSON object as a feedback event.
    ///
    /// | field | rule |
    /// | --- | --- |
    /// | `id`, `user` | required; non-empty, ≤ 128 characters, no control characters |
    /// | `at` | required; RFC 3339 with an offset |
    /// | `track` | required; non-empty, ≤ 1024 characters |
    /// | `signal` | required; `like`, `dislike`, `skip`, `complete` or `rate` |
    /// | `rating` | an integer 1…5; required with `rate`, not allowed with any other signal |
    /// | `played_ms` | an integer ≥ 0 |
    /// | `pick_id`, `snapshot` | at least one of them; `pick_id` as `id` |
    /// | `snapshot` | a valid snapshot whose `user` is the event's |
    ///
    /// - Parameters:
    ///   - json: the parsed document.
    ///   - path: the path of this object inside a larger document, for errors.
    ///   - strict: whether unknown fields (here and in the snapshot) are errors.
    /// - Throws: ``InputError`` for the first field that breaks a rule.
    public init(json: JSONValue, path: String = "", strict: Bool = false) throws(InputError) {
        let r = try JSONObjectReader(json, base: path)
        try r.rejectUnknown(FeedbackEvent.knownFields, strict: strict)
        let id = try r.identifier("id")
        let user = try r.identifier("user")
        let at = try r.requiredTimestamp("at")
        let track = try r.requiredString("track", maxLength: Snapshot.maxTextLength)
        let signal = try r.requiredEnumeration("signal", Signal.self)
        var rating: Int? = nil
        if let v = r.value("rating") {
            guard case .number(let x) = v, x == x.rounded(.towardZero), x >= 1, x <= 5 else {
                throw InputError(path: r.path(of: "rating"), expected: "an integer in 1...5", got: Got.value(v))
            }
            rating = Int(x)
        }
        if signal == .rate, rating == nil {
            throw InputError(path: r.path(of: "rating"), expected: "stars 1...5 (a rate signal needs them)", got: "nothing")
        }
        if signal != .rate, let rating {
            throw InputError(path: r.path(of: "rating"), expected: "no rating (only a rate signal has one)", got: "\(rating)")
        }
        let playedMs = try r.integer("played_ms", atLeast: 0)
        let pickId = try r.optionalIdentifier("pick_id")
        var snapshot: Snapshot? = nil
        if let v = r.value("snapshot") {
            let snapshotPath = r.path(of: "snapshot")
            let s = try Snapshot(json: v, path: snapshotPath, strict: strict)
            guard s.user == user else {
                throw InputError(
                    path: snapshotPath + ".user",
                    expected: "\(user) (the event's user)", got: s.user)
            }
            snapshot = s
        }
        if pickId == nil, snapshot == nil {
            throw InputError(
                path: r.path(of: "pick_id"),
                expected: "a pick_id or a snapshot (the context of the feedback)", got: "neither")
        }
        self.init(
            id: id, user: user, at: at, track: track, signal: signal, rating: rating, playedMs: playedMs, pickId: pickId,
            snapshot: snapshot)
    }

    /// The event in the interchange format (docs/formats.md); `FeedbackEvent(json: e.json()) == e`.
    public func json() -> JSONValue {
        var o = ObjectBuilder(capacity: 8)
        o.add("id", id)
        o.add("user", user)
        o.add("at", at)
        o.add("track", track)
        o.add("signal", signal)
        o.add("rating", rating.map { Double($0) })
        o.add("played_ms", playedMs.map { Double($0) })
        o.add("pick_id", pickId)
        o.add("snapshot", snapshot?.json())
        return o.object
    }
}
