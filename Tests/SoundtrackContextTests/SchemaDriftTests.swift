import Foundation
import Testing

@testable import SoundtrackContext

// Keeps docs/schemas/*.schema.json in step with the Swift validators: every enum, numeric
// range, size limit and required list in the snapshot and feedback-event schemas is checked
// against what `Snapshot.decode` and `FeedbackEvent.decode` actually accept and reject.

/// The two validated document kinds with a schema, a full valid example and a decoder.
private enum SchemaDoc: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case snapshot = "snapshot.v1.schema.json"
    case feedback = "feedback-event.v1.schema.json"

    var testDescription: String { rawValue }

    /// A valid document that has every field of the format (so any one can be removed or changed).
    var fullDocument: String {
        switch self {
        case .snapshot:
            return #"""
                {"user":"u-1042","at":"2026-03-14T07:42:10+01:00",
                 "location":{"lat":42.0267,"lon":-93.6465,"accuracy_m":12,"speed_mps":1.4,"place":"library"},
                 "weather":{"temp_c":3.5,"wind_mps":5.2,"cloud_pct":80,"humidity_pct":91,"precip_mm_h":0.6,"condition":"rain",
                            "sunrise":"2026-03-14T06:58:00+01:00","sunset":"2026-03-14T18:49:00+01:00"},
                 "calendar":{"events":[{"title":"Study group","start":"2026-03-14T07:30:00+01:00",
                                        "end":"2026-03-14T09:00:00+01:00","all_day":false,"category":"study"}]},
                 "bluetooth":{"devices":[{"name":"WH-1000XM4","kind":"headphones"}]},
                 "motion":{"activity":"stationary","steps_per_min":0,"steps_today":2150,"heart_rate_bpm":64},
                 "audio":{"route":"headphones","volume":0.45},
                 "tags":{"mood":"focused"}}
                """#
        case .feedback:
            return #"""
                {"id":"ev-000913","user":"u-1042","at":"2026-03-14T07:45:02+01:00",
                 "track":"spotify:track:4uLU6hMCjMI75M1A2tKUQC","signal":"dislike","played_ms":21000,"pick_id":"p-7f3a",
                 "snapshot":{"user":"u-1042","at":"2026-03-14T07:42:10+01:00"}}
                """#
        }
    }

    var schema: JSONValue { SchemaFiles.load(rawValue) }

    /// Decodes `text` through both decoder paths (the byte fast path with its fallback, and the
    /// general path); returns the error, or `nil` when it decodes. The two paths must agree.
    func decodeError(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> InputError? {
        func run(_ body: () throws(InputError) -> Void) -> InputError? {
            do throws(InputError) {
                try body()
                return nil
            } catch {
                return error
            }
        }
        let viaDecode: InputError?
        let viaGeneral: InputError?
        switch self {
        case .snapshot:
            viaDecode = run { () throws(InputError) in _ = try Snapshot.decode(Data(text.utf8)) }
            viaGeneral = run { () throws(InputError) in _ = try Snapshot(json: JSONParser.parse(text)) }
        case .feedback:
            viaDecode = run { () throws(InputError) in _ = try FeedbackEvent.decode(Data(text.utf8)) }
            viaGeneral = run { () throws(InputError) in _ = try FeedbackEvent(json: JSONParser.parse(text)) }
        }
        #expect(viaDecode?.path == viaGeneral?.path, "fast and general decoding disagree on \(text)", sourceLocation: sourceLocation)
        return viaDecode
    }

    /// The full document with one edit at `path`; `value` `nil` removes the field.
    /// (A feedback event's embedded snapshot follows the event's `user`, which must match; a `rate`
    /// signal comes with a rating of 4, and a rating given a number comes with the `rate` signal.)
    func document(setting path: String, to value: JSONValue?) -> String {
        var doc = JSONTree.edit(SchemaFiles.parse(fullDocument), JSONPath.segments(path)[...]) { _ in value }
        if self == .feedback, case .string(let user)? = doc["user"], case .object? = doc["snapshot"] {
            doc = JSONTree.edit(doc, JSONPath.segments("snapshot.user")[...]) { _ in .string(user) }
        }
        if self == .feedback, path == "signal", value == .string("rate") {
            doc = JSONTree.edit(doc, [.key("rating")]) { _ in .number(4) }
        }
        if self == .feedback, path == "rating", case .number? = value {
            doc = JSONTree.edit(doc, [.key("signal")]) { _ in .string("rate") }
        }
        return doc.serialized()
    }

    /// The full document with the value at `path` transformed.
    func document(editing path: String, _ f: (JSONValue?) -> JSONValue?) -> String {
        JSONTree.edit(SchemaFiles.parse(fullDocument), JSONPath.segments(path)[...], f).serialized()
    }
}

// MARK: - Schema files and navigation

private enum SchemaFiles {
    /// docs/schemas/ of the repository this file is in (symbolic links resolved, so that a
    /// scratch package linking to the tests still finds the repository's schemas).
    static let directory: URL = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/schemas")

    static func load(_ name: String) -> JSONValue {
        let url = directory.appendingPathComponent(name)
        guard let data = try? Data(contentsOf: url) else { fatalError("cannot read \(url.path)") }
        return parse(data)
    }

    static func parse(_ text: String) -> JSONValue { parse(Data(text.utf8)) }

    static func parse(_ data: Data) -> JSONValue {
        do throws(InputError) {
            return try JSONParser.parse(data)
        } catch {
            fatalError("bad JSON: \(error)")
        }
    }

    /// Follows a `$ref` as the schemas write them: `#/$defs/x`, `file.json#/$defs/x` or `file.json`.
    /// Returns the target and the schema document it lives in.
    static func resolve(_ ref: String, in root: JSONValue) -> (node: JSONValue, root: JSONValue) {
        let parts = ref.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let document = parts[0].isEmpty ? root : load(parts[0])
        var node = document
        if parts.count > 1 {
            for token in parts[1].split(separator: "/") {
                guard let next = node[String(token)] else { fatalError("unresolvable $ref \(ref)") }
                node = next
            }
        }
        return (node, document)
    }

    /// The subschema describing the value at a document path (`calendar.events[0].start`):
    /// `properties` (or `additionalProperties`) for keys, `items` for array elements.
    static func node(at path: String, in root: JSONValue) -> JSONValue? {
        var node = root
        for segment in JSONPath.segments(path) {
            switch segment {
            case .key(let k):
                if let p = node["properties"]?[k] {
                    node = p
                } else if case .object? = node["additionalProperties"] {
                    node = node["additionalProperties"]!
                } else {
                    return nil
                }
            case .index:
                guard let items = node["items"] else { return nil }
                node = items
            }
        }
        return node
    }

    /// The first value of a numeric keyword on a subschema, following `$ref`, `allOf` and `anyOf`.
    static func number(_ keyword: String, of node: JSONValue, root: JSONValue) -> Double? {
        if case .number(let x)? = node[keyword] { return x }
        if case .string(let ref)? = node["$ref"] {
            let (target, targetRoot) = resolve(ref, in: root)
            if let x = number(keyword, of: target, root: targetRoot) { return x }
        }
        for combinator in ["allOf", "anyOf"] {
            if case .array(let subs)? = node[combinator] {
                for s in subs { if let x = number(keyword, of: s, root: root) { return x } }
            }
        }
        return nil
    }

    /// Whether a subschema accepts `null`: every constraint on it must.
    static func acceptsNull(_ node: JSONValue, root: JSONValue) -> Bool {
        var ok = true
        switch node["type"] {
        case .string(let t)?: ok = ok && t == "null"
        case .array(let ts)?: ok = ok && ts.contains(.string("null"))
        default: break
        }
        if case .array(let values)? = node["enum"] { ok = ok && values.contains(.null) }
        if case .string(let ref)? = node["$ref"] {
            let (target, targetRoot) = resolve(ref, in: root)
            ok = ok && acceptsNull(target, root: targetRoot)
        }
        if case .array(let subs)? = node["anyOf"] { ok = ok && subs.contains { acceptsNull($0, root: root) } }
        if case .array(let subs)? = node["allOf"] { ok = ok && subs.allSatisfy { acceptsNull($0, root: root) } }
        return ok
    }

    /// Document paths of every subschema with the keyword, walking `properties` and `items`
    /// (not `$ref`s: the feedback schema's embedded snapshot is the snapshot schema's business).
    static func paths(withKeyword keyword: String, in node: JSONValue, prefix: String = "") -> Set<String> {
        var out: Set<String> = []
        if node[keyword] != nil { out.insert(prefix) }
        if case .object(let props)? = node["properties"] {
            for (k, sub) in props {
                out.formUnion(paths(withKeyword: keyword, in: sub, prefix: prefix.isEmpty ? k : prefix + "." + k))
            }
        }
        if let items = node["items"] {
            out.formUnion(paths(withKeyword: keyword, in: items, prefix: prefix + "[0]"))
        }
        return out
    }

    static func strings(_ v: JSONValue?) -> [String] {
        guard case .array(let items)? = v else { return [] }
        return items.compactMap { if case .string(let s) = $0 { return s } else { return nil } }
    }

    static func keys(_ v: JSONValue?) -> [String] {
        guard case .object(let pairs)? = v else { return [] }
        return pairs.map(\.0)
    }
}

/// Dotted document paths as the decoders print them: `calendar.events[0].start`.
private enum JSONPath {
    enum Segment: Equatable { case key(String), index(Int) }

    static func segments(_ path: String) -> [Segment] {
        var out: [Segment] = []
        for part in path.split(separator: ".") {
            var rest = Substring(part)
            if let open = rest.firstIndex(of: "[") {
                out.append(.key(String(rest[..<open])))
                rest = rest[open...]
                while rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
                    out.append(.index(Int(rest[rest.index(after: rest.startIndex)..<close])!))
                    rest = rest[rest.index(after: close)...]
                }
            } else {
                out.append(.key(String(rest)))
            }
        }
        return out
    }
}

private enum JSONTree {
    /// The value with the member at `path` replaced by `f(old)`; `nil` from `f` removes it.
    static func edit(_ v: JSONValue, _ path: ArraySlice<JSONPath.Segment>, _ f: (JSONValue?) -> JSONValue?) -> JSONValue {
        guard let first = path.first else { return f(v) ?? .null }
        let rest = path.dropFirst()
        switch (first, v) {
        case let (.key(k), .object(pairs)):
            var pairs = pairs
            if let i = pairs.firstIndex(where: { $0.0 == k }) {
                if rest.isEmpty {
                    if let new = f(pairs[i].1) { pairs[i].1 = new } else { pairs.remove(at: i) }
                } else {
                    pairs[i].1 = edit(pairs[i].1, rest, f)
                }
            } else if rest.isEmpty, let new = f(nil) {
                pairs.append((k, new))
            }
            return .object(pairs)
        case let (.index(i), .array(items)) where i < items.count:
            var items = items
            items[i] = edit(items[i], rest, f)
            return .array(items)
        default:
            fatalError("no \(first) in \(v.typeDescription)")
        }
    }
}

// MARK: - Test tables

private struct EnumCase: Sendable, CustomTestStringConvertible {
    var doc: SchemaDoc
    var path: String
    var cases: [String]
    var testDescription: String { "\(doc.rawValue) \(path)" }
}

private struct FieldCase: Sendable, CustomTestStringConvertible {
    var doc: SchemaDoc
    var path: String
    var testDescription: String { "\(doc.rawValue) \(path)" }
}

private struct ObjectCase: Sendable, CustomTestStringConvertible {
    var doc: SchemaDoc
    /// The object's path ("" for the document).
    var path: String
    /// The fields the Swift decoder reads there.
    var knownFields: [String]
    /// Fields that must come together (the decoder names the missing one).
    var together: [String] = []
    var testDescription: String { "\(doc.rawValue) \(path.isEmpty ? "(document)" : path)" }
}

private struct LimitCase: Sendable, CustomTestStringConvertible {
    var doc: SchemaDoc
    var path: String
    var keyword: String
    /// The Swift constant, where the code has one.
    var swift: Int?
    var testDescription: String { "\(doc.rawValue) \(path) \(keyword)" }
}

private let enumCases: [EnumCase] = [
    EnumCase(doc: .snapshot, path: "weather.condition", cases: WeatherCondition.allCases.map(\.rawValue)),
    EnumCase(doc: .snapshot, path: "calendar.events[0].category", cases: EventCategory.allCases.map(\.rawValue)),
    EnumCase(doc: .snapshot, path: "bluetooth.devices[0].kind", cases: DeviceKind.allCases.map(\.rawValue)),
    EnumCase(doc: .snapshot, path: "motion.activity", cases: Activity.allCases.map(\.rawValue)),
    EnumCase(doc: .snapshot, path: "audio.route", cases: AudioRoute.allCases.map(\.rawValue)),
    EnumCase(doc: .feedback, path: "signal", cases: Signal.allCases.map(\.rawValue))
]

private let rangedFields: [FieldCase] =
    [
        "location.lat", "location.lon", "location.accuracy_m", "location.speed_mps",
        "weather.temp_c", "weather.wind_mps", "weather.cloud_pct", "weather.humidity_pct", "weather.precip_mm_h",
        "motion.steps_per_min", "motion.steps_today", "motion.heart_rate_bpm", "audio.volume"
    ].map { FieldCase(doc: .snapshot, path: $0) } + [FieldCase(doc: .feedback, path: "played_ms"), FieldCase(doc: .feedback, path: "rating")]

private let objectCases: [ObjectCase] = [
    ObjectCase(doc: .snapshot, path: "", knownFields: Snapshot.knownFields),
    ObjectCase(doc: .snapshot, path: "location", knownFields: Location.knownFields, together: ["lat", "lon"]),
    ObjectCase(doc: .snapshot, path: "weather", knownFields: Weather.knownFields),
    ObjectCase(doc: .snapshot, path: "calendar", knownFields: CalendarInfo.knownFields),
    ObjectCase(doc: .snapshot, path: "calendar.events[0]", knownFields: CalendarEvent.knownFields),
    ObjectCase(doc: .snapshot, path: "bluetooth", knownFields: Bluetooth.knownFields),
    ObjectCase(doc: .snapshot, path: "bluetooth.devices[0]", knownFields: ["name", "kind"]),
    ObjectCase(doc: .snapshot, path: "motion", knownFields: Motion.knownFields),
    ObjectCase(doc: .snapshot, path: "audio", knownFields: AudioState.knownFields),
    ObjectCase(doc: .feedback, path: "", knownFields: FeedbackEvent.knownFields)
]

private let limitCases: [LimitCase] = [
    LimitCase(doc: .snapshot, path: "user", keyword: "minLength"),
    LimitCase(doc: .snapshot, path: "user", keyword: "maxLength"),
    LimitCase(doc: .snapshot, path: "location.place", keyword: "maxLength", swift: Snapshot.maxTextLength),
    LimitCase(doc: .snapshot, path: "calendar.events", keyword: "maxItems", swift: Snapshot.maxEvents),
    LimitCase(doc: .snapshot, path: "calendar.events[0].title", keyword: "maxLength", swift: Snapshot.maxTextLength),
    LimitCase(doc: .snapshot, path: "bluetooth.devices", keyword: "maxItems", swift: Snapshot.maxDevices),
    LimitCase(doc: .snapshot, path: "bluetooth.devices[0].name", keyword: "maxLength", swift: Snapshot.maxTextLength),
    LimitCase(doc: .snapshot, path: "tags", keyword: "maxProperties", swift: Snapshot.maxTags),
    LimitCase(doc: .snapshot, path: "tags.mood", keyword: "maxLength", swift: Snapshot.maxTextLength),
    LimitCase(doc: .feedback, path: "id", keyword: "minLength"),
    LimitCase(doc: .feedback, path: "id", keyword: "maxLength"),
    LimitCase(doc: .feedback, path: "user", keyword: "maxLength"),
    LimitCase(doc: .feedback, path: "track", keyword: "minLength"),
    LimitCase(doc: .feedback, path: "track", keyword: "maxLength", swift: Snapshot.maxTextLength),
    LimitCase(doc: .feedback, path: "pick_id", keyword: "minLength"),
    LimitCase(doc: .feedback, path: "pick_id", keyword: "maxLength")
]

// MARK: - Tests

@Suite("JSON Schemas match the validators")
struct SchemaDriftTests {
    @Test(arguments: SchemaDoc.allCases)
    fileprivate func fullDocumentIsValid(_ doc: SchemaDoc) {
        #expect(doc.decodeError(doc.fullDocument) == nil)
        #expect(doc.schema["$schema"] == .string("https://json-schema.org/draft/2020-12/schema"))
    }

    @Test(arguments: SchemaDoc.allCases)
    fileprivate func everyEnumIsInTheTable(_ doc: SchemaDoc) {
        let inSchema = SchemaFiles.paths(withKeyword: "enum", in: doc.schema)
        #expect(inSchema == Set(enumCases.filter { $0.doc == doc }.map(\.path)))
    }

    @Test(arguments: enumCases)
    fileprivate func enumMatchesAllCases(_ c: EnumCase) throws {
        let node = try #require(SchemaFiles.node(at: c.path, in: c.doc.schema))
        let values = SchemaFiles.strings(node["enum"])
        #expect(values == c.cases)
        for value in c.cases {
            #expect(c.doc.decodeError(c.doc.document(setting: c.path, to: .string(value))) == nil, "\(value)")
        }
        let bad = c.doc.decodeError(c.doc.document(setting: c.path, to: .string("not-a-\(c.cases[0])")))
        #expect(bad?.path == c.path)
    }

    @Test(arguments: SchemaDoc.allCases)
    fileprivate func everyRangeIsInTheTable(_ doc: SchemaDoc) {
        let inSchema = SchemaFiles.paths(withKeyword: "minimum", in: doc.schema)
            .union(SchemaFiles.paths(withKeyword: "maximum", in: doc.schema))
        #expect(inSchema == Set(rangedFields.filter { $0.doc == doc }.map(\.path)))
    }

    /// A value at each bound decodes, the next value past it fails naming the field; a missing
    /// bound means the decoder takes any size that way.
    @Test(arguments: rangedFields)
    fileprivate func rangeMatchesTheValidator(_ c: FieldCase) throws {
        let node = try #require(SchemaFiles.node(at: c.path, in: c.doc.schema))
        let types = SchemaFiles.strings(node["type"])
        let integer = types.contains("integer")
        #expect(integer || types.contains("number"))
        func check(_ x: Double, valid: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
            let error = c.doc.decodeError(c.doc.document(setting: c.path, to: .number(x)))
            if valid {
                #expect(error == nil, "\(c.path) = \(x)", sourceLocation: sourceLocation)
            } else {
                #expect(error?.path == c.path, "\(c.path) = \(x): \(String(describing: error))", sourceLocation: sourceLocation)
            }
        }
        let lo = SchemaFiles.number("minimum", of: node, root: c.doc.schema)
        let hi = SchemaFiles.number("maximum", of: node, root: c.doc.schema)
        #expect(lo != nil || hi != nil)
        // Integers step by one (or by the spacing of doubles up there); numbers by one ulp.
        func below(_ x: Double) -> Double { integer ? x - max(1, x.ulp) : x.nextDown }
        func above(_ x: Double) -> Double { integer ? x + max(1, x.ulp) : x.nextUp }
        if let lo {
            check(lo, valid: true)
            check(below(lo), valid: false)
        } else {
            check(-1e300, valid: true)
        }
        if let hi {
            check(hi, valid: true)
            check(above(hi), valid: false)
        } else {
            check(1e300, valid: true)
        }
        if integer, let inside = lo ?? hi {
            check(inside + (lo != nil ? 0.5 : -0.5), valid: false)
            check(inside, valid: true)
        }
    }

    /// The schema's properties are the fields the decoder reads; a required field missing (or
    /// null) fails naming it; an optional one missing or null decodes.
    @Test(arguments: objectCases)
    fileprivate func requiredFieldsMatchTheValidator(_ c: ObjectCase) throws {
        let node = try #require(c.path.isEmpty ? c.doc.schema : SchemaFiles.node(at: c.path, in: c.doc.schema))
        #expect(Set(SchemaFiles.keys(node["properties"])) == Set(c.knownFields))
        let required = SchemaFiles.strings(node["required"])
        #expect(Set(required).isSubset(of: c.knownFields))
        for field in c.knownFields {
            let path = c.path.isEmpty ? field : c.path + "." + field
            let fieldSchema = try #require(node["properties"]?[field])
            let isRequired = required.contains(field)
            #expect(SchemaFiles.acceptsNull(fieldSchema, root: c.doc.schema) == !isRequired, "\(path): null")
            for edit: JSONValue? in [nil, .null] {
                let error = c.doc.decodeError(c.doc.document(setting: path, to: edit))
                if isRequired || c.together.contains(field) {
                    #expect(error?.path == path, "\(path) \(edit == nil ? "missing" : "null"): \(String(describing: error))")
                } else {
                    #expect(error == nil, "\(path) \(edit == nil ? "missing" : "null"): \(String(describing: error))")
                }
            }
        }
    }

    /// location.lat and lon come together: the schema's if/then pairs and the decoder agree.
    @Test func latitudeAndLongitudeComeTogether() throws {
        let doc = SchemaDoc.snapshot
        let location = try #require(SchemaFiles.node(at: "location", in: doc.schema))
        guard case .array(let rules)? = location["allOf"] else {
            Issue.record("location has no allOf")
            return
        }
        var pairs: Set<[String]> = []
        for rule in rules {
            let ifRequired = SchemaFiles.strings(rule["if"]?["required"])
            let thenRequired = SchemaFiles.strings(rule["then"]?["required"])
            pairs.insert(ifRequired + thenRequired)
        }
        #expect(pairs == [["lat", "lon"], ["lon", "lat"]])
        let both = doc.document(editing: "location") { _ in .object([("place", .string("home"))]) }
        #expect(doc.decodeError(both) == nil)
    }

    /// A rate signal needs a rating and no other signal has one: the schema's if/then/else and the
    /// decoder agree.
    @Test func ratingComesWithTheRateSignal() throws {
        let doc = SchemaDoc.feedback
        guard case .array(let rules)? = doc.schema["allOf"], rules.count == 1 else {
            Issue.record("the feedback schema has no allOf with one rule")
            return
        }
        let rule = rules[0]
        #expect(rule["if"]?["properties"]?["signal"]?["const"] == .string("rate"))
        #expect(SchemaFiles.strings(rule["then"]?["required"]) == ["rating"])
        #expect(rule["else"]?["properties"]?["rating"]?["type"] == .string("null"))
        let rateWithout = JSONTree.edit(SchemaFiles.parse(doc.fullDocument), [.key("signal")]) { _ in .string("rate") }
        #expect(doc.decodeError(rateWithout.serialized())?.path == "rating")
        let likeWith = JSONTree.edit(SchemaFiles.parse(doc.fullDocument), [.key("rating")]) { _ in .number(4) }
        #expect(doc.decodeError(likeWith.serialized())?.path == "rating")
        #expect(doc.decodeError(doc.document(setting: "signal", to: .string("rate"))) == nil)
    }

    /// A feedback event needs a pick_id or a snapshot: the schema's anyOf and the decoder agree.
    @Test func feedbackNeedsPickIdOrSnapshot() throws {
        let doc = SchemaDoc.feedback
        guard case .array(let branches)? = doc.schema["anyOf"] else {
            Issue.record("the feedback schema has no anyOf")
            return
        }
        #expect(branches.map { SchemaFiles.strings($0["required"]) } == [["pick_id"], ["snapshot"]])
        let neither = JSONTree.edit(SchemaFiles.parse(doc.fullDocument), [.key("pick_id")]) { _ in nil }
        let text = JSONTree.edit(neither, [.key("snapshot")]) { _ in nil }.serialized()
        #expect(doc.decodeError(text)?.path == "pick_id")
        let nulls = JSONTree.edit(JSONTree.edit(neither, [.key("snapshot")]) { _ in .null }, [.key("pick_id")]) { _ in .null }
        #expect(doc.decodeError(nulls.serialized())?.path == "pick_id")
    }

    /// Lengths, counts of items and of tags: the limit decodes, one past it fails naming the field.
    @Test(arguments: limitCases)
    fileprivate func limitMatchesTheValidator(_ c: LimitCase) throws {
        let node = try #require(SchemaFiles.node(at: c.path, in: c.doc.schema))
        let limit = try #require(SchemaFiles.number(c.keyword, of: node, root: c.doc.schema).map { Int($0) })
        if let swift = c.swift { #expect(limit == swift) }
        let doc = c.doc
        func value(_ n: Int) -> String {
            switch c.keyword {
            case "maxItems":
                guard case .array(let items)? = JSONTree.value(at: c.path, in: SchemaFiles.parse(doc.fullDocument)), let first = items.first else {
                    fatalError("\(c.path) is not a non-empty array in the full document")
                }
                return doc.document(setting: c.path, to: .array(Array(repeating: first, count: n)))
            case "maxProperties":
                return doc.document(setting: c.path, to: .object((0..<n).map { ("t\($0)", .string("v")) }))
            default:
                return doc.document(setting: c.path, to: .string(String(repeating: "x", count: n)))
            }
        }
        let past = c.keyword.hasPrefix("max") ? limit + 1 : limit - 1
        #expect(doc.decodeError(value(limit)) == nil)
        #expect(doc.decodeError(value(past))?.path == c.path)
    }

    /// Timestamps: the schema's pattern demands the offset the decoder demands.
    @Test(arguments: [
        ("2026-03-14T07:42:10+01:00", true), ("2026-03-14t07:42:10.25z", true), ("2026-03-14T07:42:10-09:30", true),
        ("2026-03-14T07:42:10", false), ("2026-03-14 07:42:10Z", false), ("2026-03-14T07:42:10+0100", false),
        ("2026-03-14T24:00:00Z", false), ("2026-03-14T23:59:60Z", false), ("2026-03-14T07:42:10+24:00", false),
        ("2026-03-14T07:42:10.Z", false), ("12026-03-14T07:42:10Z", false)
    ])
    func timestampPatternMatchesTheParser(_ text: String, _ valid: Bool) throws {
        let schema = SchemaDoc.snapshot.schema
        let def = try #require(schema["$defs"]?["timestamp"])
        #expect(def["format"] == .string("date-time"))
        guard case .string(let pattern)? = def["pattern"] else {
            Issue.record("no pattern")
            return
        }
        // The pattern ends with $(?!\n) for Python's re; Foundation's regex reads it the same way.
        let regex = try NSRegularExpression(pattern: pattern)
        let matches = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        #expect(matches == valid, "pattern on \(text)")
        #expect((Timestamp(rfc3339: text) != nil) == valid, "parser on \(text)")
    }
}

extension JSONTree {
    /// The value at a dotted path, if any.
    fileprivate static func value(at path: String, in v: JSONValue) -> JSONValue? {
        var node: JSONValue? = v
        for segment in JSONPath.segments(path) {
            switch (segment, node) {
            case let (.key(k), .object?): node = node?[k]
            case let (.index(i), .array(items)?): node = i < items.count ? items[i] : nil
            default: return nil
            }
        }
        return node
    }
}
