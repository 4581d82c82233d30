import Foundation
import SoundtrackContext
import SoundtrackServer
import Testing

@Suite struct OpenAPITests {
    static let file = Repo.root.appendingPathComponent("openapi/soundtrack.v1.json")

    @Test func servedDocumentIsTheCheckedInFile() throws {
        let text = try String(contentsOf: Self.file, encoding: .utf8)
        #expect(text == OpenAPIDocument.json + "\n", "run scripts/generate-openapi-swift.sh")
    }

    @Test func everyRouteOfTheRouterIsDocumentedAndBack() throws {
        let f = try Fixture()
        let router = f.api.buildRouter()
        let doc = try JSONParser.parse(OpenAPIDocument.json)
        guard case let .object(paths)? = doc["paths"] else { Issue.record("no paths"); return }
        var documented: Set<String> = []
        for (path, item) in paths {
            guard case let .object(ops) = item else { continue }
            for (method, _) in ops { documented.insert("\(method.uppercased()) \(path)") }
        }
        let routed = Set(router.routes.map { "\($0.method.rawValue) \($0.path.description)" })
        #expect(!routed.isEmpty)
        for r in routed.sorted() { #expect(documented.contains(r), "\(r) is routed but not in the OpenAPI document") }
        for d in documented.sorted() { #expect(routed.contains(d), "\(d) is documented but not routed") }
        #expect(Set(SoundtrackAPI.routes.map { "\($0.method.rawValue) \($0.path)" }) == routed)
    }

    /// The document's snapshot sections, feedback fields and pick parts are those of the JSON
    /// Schemas in docs/schemas (which SchemaDriftTests keep in step with the decoders), with the
    /// schemas' `$defs` references pointing at the document's components.
    @Test func componentsMatchTheInterchangeSchemas() throws {
        func load(_ name: String) throws -> JSONValue {
            try JSONParser.parse(String(contentsOf: Repo.root.appendingPathComponent("docs/schemas/\(name).v1.schema.json"), encoding: .utf8))
        }
        let refs = [
            "#/$defs/identifier": "Identifier", "snapshot.v1.schema.json#/$defs/identifier": "Identifier",
            "#/$defs/optionalIdentifier": "OptionalIdentifier", "snapshot.v1.schema.json#/$defs/optionalIdentifier": "OptionalIdentifier",
            "#/$defs/timestamp": "Timestamp", "snapshot.v1.schema.json#/$defs/timestamp": "Timestamp",
            "#/$defs/optionalTimestamp": "OptionalTimestamp", "#/$defs/optionalText": "OptionalText",
            "#/$defs/binSummary": "BinSummary", "#/$defs/trackSummary": "Track"
        ]
        func rewrite(_ v: JSONValue) -> JSONValue {
            switch v {
            case let .object(pairs):
                return .object(
                    pairs.map { k, x in
                        if k == "$ref", case let .string(r) = x, let c = refs[r] { return (k, .string("#/components/schemas/\(c)")) }
                        return (k, rewrite(x))
                    })
            case let .array(items): return .array(items.map(rewrite))
            default: return v
            }
        }
        func replacing(_ v: JSONValue, _ path: [String], with new: JSONValue) -> JSONValue {
            guard let key = path.first, case let .object(pairs) = v else { return new }
            return .object(pairs.map { k, x in (k, k == key ? replacing(x, Array(path.dropFirst()), with: new) : x) })
        }
        let doc = try JSONParser.parse(OpenAPIDocument.json)
        let components = try #require(doc["components"]?["schemas"])
        let snapshot = try load("snapshot"), feedback = try load("feedback-event"), pick = try load("pick")
        let ref = { (name: String) in JSONValue.object([("$ref", .string("#/components/schemas/\(name)"))]) }
        // Snapshot sections, their array items moved into components of their own.
        for (field, name) in [("location", "Location"), ("weather", "Weather"), ("motion", "Motion"), ("audio", "Audio"), ("tags", "Tags")] {
            #expect(components[name] == rewrite(try #require(snapshot["properties"]?[field])), "\(name)")
        }
        let calendar = rewrite(try #require(snapshot["properties"]?["calendar"]))
        #expect(components["CalendarEvent"] == calendar["properties"]?["events"]?["items"])
        #expect(components["Calendar"] == replacing(calendar, ["properties", "events", "items"], with: ref("CalendarEvent")))
        let bluetooth = rewrite(try #require(snapshot["properties"]?["bluetooth"]))
        #expect(components["BluetoothDevice"] == bluetooth["properties"]?["devices"]?["items"])
        #expect(components["Bluetooth"] == replacing(bluetooth, ["properties", "devices", "items"], with: ref("BluetoothDevice")))
        #expect(components["Timestamp"] == snapshot["$defs"]?["timestamp"])
        #expect(components["OptionalText"] == snapshot["$defs"]?["optionalText"])
        // The identifier: the same limits, the control characters as a positive pattern.
        #expect(components["Identifier"]?["maxLength"] == snapshot["$defs"]?["identifier"]?["maxLength"])
        #expect(components["Identifier"]?["minLength"] == snapshot["$defs"]?["identifier"]?["minLength"])
        #expect(components["Identifier"]?["pattern"] == .string("^[^\\u0000-\\u001f\\u007f-\\u009f]+$(?!\\n)"))
        // Feedback: every field's limits, and the required sets.
        for field in ["track", "signal", "rating"] {
            #expect(components["FeedbackEvent"]?["properties"]?[field] == feedback["properties"]?[field], "\(field)")
        }
        #expect(components["FeedbackEvent"]?["properties"]?["played_ms"]?["maximum"] == .number(9_007_199_254_740_992))
        for key in ["required", "anyOf", "allOf"] {
            #expect(components["FeedbackEvent"]?[key] == feedback[key], "\(key)")
        }
        // Pick: the same parts (descriptions aside, which name the HTTP options).
        #expect(components["BinSummary"] == rewrite(try #require(pick["$defs"]?["binSummary"])))
        #expect(components["Track"] == rewrite(try #require(pick["$defs"]?["trackSummary"])))
        #expect(components["Pick"]?["required"] == pick["required"])
        for field in ["pick_id", "alternatives", "why", "source", "track_why"] {
            #expect(components["Pick"]?["properties"]?[field] == rewrite(try #require(pick["properties"]?[field])), "\(field)")
        }
    }
}
