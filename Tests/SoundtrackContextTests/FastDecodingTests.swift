import Foundation
import Testing

@testable import SoundtrackContext

/// The general path's answer: the snapshot, or nil when it throws.
func slowSnapshot(_ text: String, strict: Bool) -> Snapshot? {
    try? Snapshot(json: JSONParser.parse(text), strict: strict)
}

func fastSnapshot(_ text: String, strict: Bool) -> Snapshot? {
    Array(text.utf8).withUnsafeBytes { Snapshot.fastDecode($0, strict: strict) }
}

func slowEvent(_ text: String, strict: Bool) -> FeedbackEvent? {
    try? FeedbackEvent(json: JSONParser.parse(text), strict: strict)
}

func fastEvent(_ text: String, strict: Bool) -> FeedbackEvent? {
    Array(text.utf8).withUnsafeBytes { FeedbackEvent.fastDecode($0, strict: strict) }
}

/// Random snapshot-shaped documents: mostly valid, with wrong types, out-of-range values,
/// nulls, unknown fields, duplicate keys and escapes mixed in.
struct DocumentGenerator {
    var rng: SplitMix

    mutating func chance(_ percent: UInt64) -> Bool { rng.next() % 100 < percent }
    mutating func pick<T>(_ xs: [T]) -> T { xs[Int(rng.next() % UInt64(xs.count))] }

    mutating func number(_ lo: Double, _ hi: Double) -> JSONValue {
        if chance(2) { return .number(hi + 1) }
        if chance(1) { return .number(lo - 1) }
        let x = lo + (hi - lo) * Double(rng.next() % 10_001) / 10_000
        return .number(chance(50) ? x.rounded() : x)
    }

    mutating func wrong() -> JSONValue {
        pick([.null, .bool(true), .string("x"), .number(1), .array([]), .object([]), .string("")])
    }

    /// A timestamp, usually from `good` (morning times for starts, evening ones for ends).
    mutating func timestamp(_ good: [String] = ["2026-03-14T07:42:10+01:00", "2026-03-14T06:58:00Z", "2026-03-14T18:49:00.5-05:00"]) -> JSONValue {
        if chance(2) { return .string(pick(["2026-02-30T00:00:00Z", "yesterday", "2026-03-14T07:42:10"])) }
        return .string(pick(good))
    }

    mutating func morning() -> JSONValue { timestamp(["2026-03-14T06:58:00+01:00", "2026-03-14T05:30:00Z", "2026-03-14T07:30:00.25+01:00"]) }
    mutating func evening() -> JSONValue { timestamp(["2026-03-14T18:49:00+01:00", "2026-03-14T19:30:00Z", "2026-03-14T07:30:00.25+01:00"]) }

    mutating func enumValue(_ names: [String]) -> JSONValue {
        chance(2) ? .string(pick(["Rain", "sunny", "", "héadphones"])) : .string(pick(names))
    }

    mutating func text() -> JSONValue {
        .string(pick(["library", "Café Central", "Study group – algorithms", "a\"quoted\"\\name", "tab\there", "🎵", "x"]))
    }

    /// An object of the given fields, each included at random, plus noise.
    mutating func object(_ fields: [(String, (inout DocumentGenerator) -> JSONValue)], required: Set<String> = []) -> JSONValue {
        var pairs: [(String, JSONValue)] = []
        let together = chance(80)  // lat and lon
        for (k, make) in fields {
            let included = required.contains(k) ? chance(99) : k == "lat" || k == "lon" ? together : k.isEmpty ? chance(2) : chance(75)
            guard included else { continue }
            pairs.append((k, chance(1) ? wrong() : chance(2) ? .null : make(&self)))
        }
        if chance(10) {
            pairs.append(
                (pick(["foo", "extra_field", "Ünknown", "u\\u0073er"]), pick([.number(1), .string("s"), .null, .bool(false), .object([("a", .number(1))]), .array([.number(1)])])))
        }
        if chance(1), let p = pairs.first { pairs.append(p) }  // duplicate key
        if chance(30) { pairs.shuffle(using: &rng) }
        return .object(pairs)
    }

    mutating func snapshot() -> JSONValue {
        var g = self
        let doc = g.object(
            [
                ("user", { g in g.chance(95) ? .string(g.pick(["u-1", "u-1042", "üser"])) : g.wrong() }),
                ("at", { g in g.timestamp() }),
                (
                    "location",
                    { g in
                        g.object([
                            ("lat", { g in g.number(-90, 90) }), ("lon", { g in g.number(-180, 180) }),
                            ("accuracy_m", { g in g.number(0, 100) }), ("speed_mps", { g in g.number(0, 150) }), ("place", { g in g.text() })
                        ])
                    }
                ),
                (
                    "weather",
                    { g in
                        g.object([
                            ("temp_c", { g in g.number(-90, 60) }), ("wind_mps", { g in g.number(0, 120) }),
                            ("cloud_pct", { g in g.number(0, 100) }), ("humidity_pct", { g in g.number(0, 100) }),
                            ("precip_mm_h", { g in g.number(0, 500) }),
                            ("condition", { g in g.enumValue(WeatherCondition.allCases.map(\.rawValue)) }),
                            ("sunrise", { g in g.morning() }), ("sunset", { g in g.evening() })
                        ])
                    }
                ),
                (
                    "calendar",
                    { g in
                        g.object([
                            (
                                "events",
                                { g in
                                    .array(
                                        (0..<Int(g.rng.next() % 4)).map { _ in
                                            g.object(
                                                [
                                                    ("title", { g in g.text() }), ("start", { g in g.morning() }), ("end", { g in g.evening() }),
                                                    ("all_day", { g in .bool(g.chance(30)) }),
                                                    ("category", { g in g.enumValue(EventCategory.allCases.map(\.rawValue)) })
                                                ], required: ["start"])
                                        })
                                }
                            )
                        ])
                    }
                ),
                (
                    "bluetooth",
                    { g in
                        g.object([
                            (
                                "devices",
                                { g in
                                    .array(
                                        (0..<Int(g.rng.next() % 3)).map { _ in
                                            g.object([("name", { g in g.text() }), ("kind", { g in g.enumValue(DeviceKind.allCases.map(\.rawValue)) })], required: ["kind"])
                                        })
                                }
                            )
                        ])
                    }
                ),
                (
                    "motion",
                    { g in
                        g.object([
                            ("activity", { g in g.enumValue(Activity.allCases.map(\.rawValue)) }),
                            ("steps_per_min", { g in g.number(0, 400) }), ("steps_today", { g in g.number(0, 200_000) }),
                            ("heart_rate_bpm", { g in g.number(20, 250) })
                        ])
                    }
                ),
                (
                    "audio",
                    { g in
                        g.object([
                            ("route", { g in g.enumValue(AudioRoute.allCases.map(\.rawValue)) }), ("volume", { g in g.number(0, 1) })
                        ])
                    }
                ),
                ("tags", { g in g.object([("mood", { g in g.text() }), ("road", { g in g.text() }), ("", { g in g.text() })]) })
            ], required: ["user", "at"])
        self = g
        return doc
    }

    /// A document's text, sometimes spaced out, sometimes damaged by one byte.
    mutating func text(of doc: JSONValue) -> String {
        var s = doc.serialized()
        if chance(20) {
            // Whitespace around the structure, never inside strings.
            var out = ""
            var inString = false
            var escaped = false
            for c in s {
                out.append(c)
                if inString {
                    if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { inString = false }
                } else if c == "\"" {
                    inString = true
                } else if ",:{[".contains(c) {
                    out += pick([" ", "\n  ", "\t", "\r\n"])
                }
            }
            s = out
        }
        if chance(5) {
            var bytes = Array(s.utf8)
            let i = Int(rng.next() % UInt64(bytes.count))
            switch rng.next() % 3 {
            case 0: bytes.remove(at: i)
            case 1: bytes.insert(pick(Array("{}[],:\"\\ 0-e".utf8)), at: i)
            default: bytes[i] = pick(Array("{}[],:\"\\ 0-exn".utf8))
            }
            s = String(decoding: bytes, as: UTF8.self)
        }
        return s
    }
}

@Suite("Fast decoding path")
struct FastDecoderTests {
    @Test func takesTheFastPathForOrdinaryDocuments() throws {
        #expect(fastSnapshot(formatsExample, strict: true) == slowSnapshot(formatsExample, strict: true))
        #expect(fastSnapshot(formatsExample, strict: true) != nil)
        let withExtras = snapshotJSON(#""app_version": "2.1", "battery": 0.5, "charging": true, "note": null"#)
        #expect(fastSnapshot(withExtras, strict: false) != nil)
        #expect(fastSnapshot(withExtras, strict: true) == nil)
        let nulls = snapshotJSON(#""location": null, "weather": {"temp_c": null}, "calendar": {"events": null}, "tags": {"a": null}"#)
        #expect(fastSnapshot(nulls, strict: false) == slowSnapshot(nulls, strict: false))
        #expect(fastSnapshot(nulls, strict: false) != nil)
        let event = feedbackJSON(#""played_ms": 21000, "snapshot": \#(formatsExample.replacingOccurrences(of: "u-1042", with: "u-1"))"#)
        #expect(fastEvent(event, strict: true) != nil)
        #expect(fastEvent(event, strict: true) == slowEvent(event, strict: true))
    }

    @Test func givesUpWhereTheGeneralPathMustDecide() {
        for text in [
            "", "   ", "[]", snapshotJSON() + "x", #"{"user":"u-1","user":"u-1","at":"2026-03-14T07:42:10Z"}"#,
            snapshotJSON(#""foo": 1, "foo": 2"#), snapshotJSON(#""foo": {"a": 1}"#), snapshotJSON(#""\u0074ags": {}"#),
            snapshotJSON(#""weather": {"cloud_pct": 140}"#), snapshotJSON(#""location": {"lat": 1}"#),
            snapshotJSON(#""tags": {"a": "1", "a": "2"}"#), #"{"at":"2026-03-14T07:42:10Z"}"#
        ] {
            #expect(fastSnapshot(text, strict: false) == nil, "\(text)")
        }
    }

    @Test func agreesWithTheGeneralPathOnRandomDocuments() {
        var g = DocumentGenerator(rng: SplitMix(seed: 2026))
        var fastHits = 0
        var valid = 0
        for _ in 0..<4000 {
            let doc = g.snapshot()
            let text = g.text(of: doc)
            for strict in [false, true] {
                let slow = slowSnapshot(text, strict: strict)
                let fast = fastSnapshot(text, strict: strict)
                if let fast {
                    #expect(fast == slow, "\(text)")
                    fastHits += 1
                }
                if slow != nil { valid += 1 }
                // The public entry point agrees with the general path either way.
                let decoded = try? Snapshot.decode(Data(text.utf8), strict: strict)
                #expect(decoded == slow, "\(text)")
            }
        }
        // The generator makes enough valid documents for the comparison to mean something.
        #expect(valid > 1500)
        #expect(fastHits > valid / 2)
    }

    @Test func agreesOnRandomFeedbackEvents() {
        var g = DocumentGenerator(rng: SplitMix(seed: 77))
        var valid = 0, fastHits = 0
        for _ in 0..<1500 {
            var snapshot = g.snapshot()
            if case .object(var pairs) = snapshot, g.chance(80) {
                pairs.removeAll { $0.0 == "user" }
                pairs.insert(("user", .string("u-1")), at: 0)
                snapshot = .object(pairs)
            }
            let event = g.object(
                [
                    ("id", { g in .string(g.pick(["ev-1", "ev-2"])) }), ("user", { g in .string("u-1") }),
                    ("at", { g in g.timestamp() }), ("track", { g in .string(g.pick(["t-1", "spotify:track:x"])) }),
                    ("signal", { g in g.enumValue(Signal.allCases.map(\.rawValue)) }),
                    ("played_ms", { g in g.pick([.number(0), .number(21000), .number(-1), .number(2.5)]) }),
                    ("pick_id", { g in .string("p-1") }), ("snapshot", { _ in snapshot })
                ], required: ["id", "user", "at", "track", "signal"])
            let text = g.text(of: event)
            for strict in [false, true] {
                let slow = slowEvent(text, strict: strict)
                if let fast = fastEvent(text, strict: strict) {
                    #expect(fast == slow, "\(text)")
                    fastHits += 1
                }
                if slow != nil { valid += 1 }
                #expect((try? FeedbackEvent.decode(Data(text.utf8), strict: strict)) == slow, "\(text)")
            }
        }
        // As for snapshots: the comparison means something only if the fast path decoded many of
        // the valid events (a fast decoder that gives up on every document would pass the rest).
        #expect(valid > 400, "\(valid) valid events")
        #expect(fastHits > valid / 2, "the fast path decoded \(fastHits) of \(valid) valid events")
    }
}
