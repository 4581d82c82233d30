import Foundation
import Testing
import SoundtrackContext
import SoundtrackServer

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
}
