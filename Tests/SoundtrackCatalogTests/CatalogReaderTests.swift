import Foundation
import SoundtrackContext
import SoundtrackTestSupport
import Testing

@testable import SoundtrackCatalog

private let header =
    "track_id,title,artist,album,year,genres,duration_ms,popularity,tempo,energy,valence,danceability,acousticness,instrumentalness,speechiness,loudness"

@Suite("Catalog CSV")
struct CatalogCSVTests {
    @Test func readsAFullRow() throws {
        let (tracks, report) = try readText(
            header + "\nt1,Song,Band,Album,2001, rock ; pop ;;rock,200000,55,120.5,0.8,0.4,0.6,0.1,0.0,0.05,-6.5\n")
        #expect(report.accepted == 1 && report.rejected.isEmpty && report.rejectedCount == 0)
        #expect(report.lines == 2)
        #expect(
            tracks == [
                Track(
                    id: "t1", title: "Song", artist: "Band", album: "Album", year: 2001, genres: ["rock", "pop"],
                    durationMs: 200_000, popularity: 55,
                    audio: AudioFeatures(
                        tempo: 120.5, energy: 0.8, valence: 0.4, danceability: 0.6, acousticness: 0.1,
                        instrumentalness: 0, speechiness: 0.05, loudness: -6.5))
            ])
    }

    @Test func headerInAnyOrderWithExtraColumnsAndOnlyRequiredOnes() throws {
        let (tracks, report) = try readText("Artist, mood ,TRACK_ID,title,energy\nBand,happy,t1,Song,\nX,sad,t2,S2,0.5\n")
        #expect(report.ignoredColumns == ["mood"])
        #expect(tracks.map(\.id) == ["t1", "t2"])
        #expect(tracks[0].artist == "Band" && tracks[0].audio.isEmpty && tracks[0].year == nil && tracks[0].album == nil)
        #expect(tracks[1].audio == AudioFeatures(energy: 0.5))
    }

    @Test func quotedFieldsWithCommasQuotesAndNewlines() throws {
        let text = """
            track_id,title,artist,genres
            t1,"thank u, next","Ariana ""AG"" Grande","pop;dance pop"
            t2,"two
            line title",Band,
            t3,"",Y,rock
            t4,plain,bad,2001x
            """
        let (tracks, report) = try readText(text)
        #expect(report.rejected.isEmpty)
        #expect(tracks.map(\.title) == ["thank u, next", "two\nline title", "", "plain"])
        #expect(tracks[0].artist == #"Ariana "AG" Grande"#)
        #expect(tracks[0].genres == ["pop", "dance pop"])
        #expect(tracks[1].genres == [])
        #expect(tracks[3].genres == ["2001x"])
        #expect(report.lines == 6)
    }

    @Test func lineNumbersCountEmbeddedNewlines() throws {
        let text = "track_id,title,artist,energy\nt1,\"a\nb\nc\",x,0.1\nt2,y,z,2\n"
        let (_, report) = try readText(text)
        #expect(report.rejected.map(\.description) == ["line 5: energy: expected a number in 0...1, got 2"])
    }

    @Test func byteOrderMarkAndCRLF() throws {
        var bytes: [UInt8] = [0xEF, 0xBB, 0xBF]
        bytes += Array("track_id,title,artist,year\r\nt1,\"A\r\nB\",C,1999\r\n\r\nt2,D,E,\r\n".utf8)
        let (tracks, report) = try CatalogReader().read(data: Data(bytes), format: .csv)
        #expect(report.rejected.isEmpty)
        #expect(tracks.map(\.id) == ["t1", "t2"])
        #expect(tracks[0].title == "A\r\nB" && tracks[0].year == 1999)
        #expect(tracks[1].artist == "E")
    }

    @Test func loneCarriageReturnsEndLines() throws {
        let (tracks, _) = try readText("track_id,title,artist\rt1,a,b\rt2,c,d")
        #expect(tracks.map(\.id) == ["t1", "t2"])
    }

    @Test func anyChunkSizeGivesTheSameResult() throws {
        let text = "\u{FEFF}track_id,title,artist,genres,energy\r\nt1,\"x,\"\"y\"\"\r\nz\",b,\"a;b\",0.5\r\nt2,c,d,,1.5\nt3,e,f,g,\n"
        let expected = try readText(text)
        #expect(expected.tracks.count == 2 && expected.report.rejectedCount == 1)
        for size in [1, 2, 3, 5, 7, 64] {
            let got = try readText(text, reader: CatalogReader(chunkSize: size))
            #expect(got.tracks == expected.tracks, "chunk size \(size)")
            #expect(got.report == expected.report, "chunk size \(size)")
        }
    }

    @Test func missingRequiredColumnThrows() {
        #expect(throws: InputError(path: "header", expected: "a 'title' column", got: "'track_id,artist,year'", line: 1)) {
            try readText("track_id,artist,year\nt1,a,2000\n")
        }
        #expect(throws: InputError(path: "header", expected: "each column once", got: "'year' twice", line: 1)) {
            try readText("track_id,title,artist,year,year\n")
        }
    }

    @Test func emptyInputThrows() {
        #expect(throws: InputError(path: "header", expected: "a header line naming the columns", got: "an empty input", line: 1)) {
            try readText("")
        }
        #expect(throws: InputError.self) { try readText("\u{FEFF}") }
    }

    @Test func badValuesAreRejectedWithLineFieldAndReason() throws {
        let text = """
            \(header)
            ok1,T,A,,2000,,1000,50,100,0.5,0.5,0.5,0.5,0.5,0.5,-5
            b1,T,A,,abc,,,,,,,,,,,
            b2,T,A,,2000.5,,,,,,,,,,,
            b3,T,A,,999,,,,,,,,,,,
            b4,T,A,,,,0,,,,,,,,,
            b5,T,A,,,,,101,,,,,,,,
            b6,T,A,,,,,,300.1,,,,,,,
            b7,T,A,,,,,,,1.7,,,,,,
            b8,T,A,,,,,,,,-0.1,,,,,
            b9,T,A,,,,,,,,,nan,,,,
            b10,T,A,,,,,,,,,,inf,,,
            b11,T,A,,,,,,,,,,,,,5.5
            b12,T,A,,,,,,,,,,,,,-61
            ,T,A,,,,,,,,,,,,,
            b14,T,A
            b15,T,A,,,,,,,,,,,,,,extra
            ok2,T,A,,2100,,1,0,0,0,1,0,1,0,1,5
            """
        let (tracks, report) = try readText(text)
        #expect(tracks.map(\.id) == ["ok1", "ok2"])
        #expect(report.accepted == 2 && report.rejectedCount == 15)
        #expect(
            report.rejected.map(\.description) == [
                "line 3: year: expected an integer in 1000...2100, got 'abc'",
                "line 4: year: expected an integer in 1000...2100, got 2000.5",
                "line 5: year: expected an integer in 1000...2100, got 999",
                "line 6: duration_ms: expected a positive integer, got 0",
                "line 7: popularity: expected an integer in 0...100, got 101",
                "line 8: tempo: expected a number in 0...300, got 300.1",
                "line 9: energy: expected a number in 0...1, got 1.7",
                "line 10: valence: expected a number in 0...1, got -0.1",
                "line 11: danceability: expected a finite number, got nan",
                "line 12: acousticness: expected a finite number, got inf",
                "line 13: loudness: expected a number in -60...5, got 5.5",
                "line 14: loudness: expected a number in -60...5, got -61",
                "line 15: track_id: expected a non-empty id, got an empty value",
                "line 16: input: expected 16 fields as in the header, got 3",
                "line 17: input: expected 16 fields as in the header, got 17"
            ])
        #expect(report.rejected.allSatisfy { $0.line != nil })
    }

    @Test func malformedQuotesAreRejected() throws {
        let (tracks, report) = try readText("track_id,title,artist\nt1,\"a\"b,c\nt2,x,y\nt3,\"never closed,z\n")
        #expect(tracks.map(\.id) == ["t2"])
        #expect(
            report.rejected.map(\.description) == [
                "line 2: input: expected a comma or line end after a closing quote, got 'b'",
                "line 4: input: expected a closing quote, got the end of the input"
            ])
    }

    @Test func aQuoteInsideAnUnquotedFieldIsKept() throws {
        let (tracks, _) = try readText("track_id,title,artist\nt1,5'11\" Blues,c\n")
        #expect(tracks.first?.title == "5'11\" Blues")
    }

    @Test func duplicateIDsAreRejectedUnlessAllowed() throws {
        let text = "track_id,title,artist\nt1,a,b\nt2,c,d\nt1,e,f\n"
        let (tracks, report) = try readText(text)
        #expect(tracks.map(\.title) == ["a", "c"])
        #expect(report.rejected.map(\.description) == ["line 4: track_id: expected an id not used before (first on line 2), got 't1'"])
        let lenient = try readText(text, reader: CatalogReader(rejectsDuplicateIDs: false))
        #expect(lenient.tracks.count == 3)
    }

    @Test func invalidUTF8IsRejected() throws {
        var bytes = Array("track_id,title,artist\nt1,".utf8)
        bytes += [0xC3, 0x28]
        bytes += Array(",b\nt2,ok,c\n".utf8)
        let (tracks, report) = try CatalogReader().read(data: Data(bytes), format: .csv)
        #expect(tracks.map(\.id) == ["t2"])
        #expect(report.rejected.map(\.description) == ["line 2: title: expected UTF-8 text, got invalid bytes"])
    }

    @Test func keptRejectionsAreCappedButCounted() throws {
        var text = "track_id,title,artist,energy\n"
        for i in 0..<50 { text += "t\(i),a,b,9\n" }
        let (_, report) = try readText(text, reader: CatalogReader(maxRecordedErrors: 3))
        #expect(report.rejected.count == 3 && report.rejectedCount == 50 && report.accepted == 0)
    }

    @Test func callbackErrorsStopTheRead() {
        struct Stop: Error {}
        var seen = 0
        #expect(throws: Stop.self) {
            _ = try CatalogReader().read(data: Data("track_id,title,artist\na,b,c\nd,e,f\n".utf8), format: .csv) { _ in
                seen += 1
                throw Stop()
            }
        }
        #expect(seen == 1)
    }

    @Test func formatIsGuessedFromTheExtension() throws {
        #expect(CatalogFormat(pathExtension: "CSV") == .csv)
        #expect(CatalogFormat(pathExtension: "jsonl") == .jsonLines)
        #expect(CatalogFormat(pathExtension: "json") == .jsonLines)
        #expect(CatalogFormat(pathExtension: "txt") == nil)
        let dir = Scratch.directory("cat")
        defer { try? FileManager.default.removeItem(at: dir) }
        let csv = dir.appendingPathComponent("a.csv"), jsonl = dir.appendingPathComponent("a.jsonl")
        let txt = dir.appendingPathComponent("a.txt")
        try Data("track_id,title,artist\nt1,a,b\n".utf8).write(to: csv)
        try Data(#"{"track_id":"t1","title":"a","artist":"b"}"#.utf8).write(to: jsonl)
        try Data().write(to: txt)
        #expect(try CatalogReader().read(contentsOf: csv).tracks.map(\.id) == ["t1"])
        #expect(try CatalogReader().read(contentsOf: jsonl).tracks.map(\.id) == ["t1"])
        #expect(throws: InputError(path: "", expected: "a .csv, .jsonl or .json catalog (or an explicit format)", got: "'a.txt'")) {
            try CatalogReader().read(contentsOf: txt)
        }
    }

    @Test func readsTheShippedCatalog() throws {
        var count = 0
        var withGenres = 0
        let report = try CatalogReader().read(contentsOf: Repo.fullCatalog) { t in
            count += 1
            if !t.genres.isEmpty { withGenres += 1 }
            #expect(!t.audio.isEmpty)
        }
        #expect(report.accepted == 20_405 && count == 20_405)
        #expect(report.rejectedCount == 0 && report.rejected.isEmpty)
        #expect(report.lines == 20_406)
        #expect(withGenres == 18_424)
        let first = try #require(Shipped.tracks.first)
        #expect(first.id == "spotify:track:3e9HZxeyfWwjeyPAMmWSSQ" && first.title == "thank u, next")
        #expect(first.genres == ["dance pop", "pop", "post-teen pop"] && first.year == 2019)
        #expect(Shipped.tracks.contains { $0.artist == "Post Malone; Swae Lee" })
    }

    @Test func readsTheSmallCatalog() throws {
        let (tracks, report) = try CatalogReader().read(contentsOf: Repo.smallCatalog)
        #expect(tracks.count == 500 && report.rejectedCount == 0)
        #expect(tracks.first == Shipped.tracks.first)
        #expect(tracks[1] == Shipped.tracks[40])
    }
}

@Suite("Catalog JSON Lines")
struct CatalogJSONLinesTests {
    @Test func readsRows() throws {
        let text = """
            {"track_id": "t1", "title": "A", "artist": "B; C", "year": 1999, "genres": "rock; pop", "energy": 0.5, "mood": "x"}
            {"track_id": "t2", "title": "D", "artist": "E", "genres": [" jazz ", "soul", "jazz"], "tempo": null, "album": null}

            {"track_id": "t3", "title": "F", "artist": "G", "duration_ms": 1000, "popularity": 0, "loudness": -60}\r
            """
        let (tracks, report) = try readText(text, format: .jsonLines)
        #expect(report.rejected.isEmpty && report.lines == 4)
        #expect(report.ignoredColumns == ["mood"])
        #expect(
            tracks == [
                Track(id: "t1", title: "A", artist: "B; C", year: 1999, genres: ["rock", "pop"], audio: AudioFeatures(energy: 0.5)),
                Track(id: "t2", title: "D", artist: "E", genres: ["jazz", "soul"]),
                Track(id: "t3", title: "F", artist: "G", durationMs: 1000, popularity: 0, audio: AudioFeatures(loudness: -60))
            ])
    }

    @Test func badRowsAreRejectedWithLineAndField() throws {
        let text = """
            {"track_id": "t1", "title": "A", "artist": "B", "energy": 1.7}
            {"track_id": "t2", "title": "A", "artist": "B", "year": "1999"}
            {"track_id": "t3", "title": "A"}
            {"track_id": "t4", "title": "A", "artist": "B", "genres": ["x", 3]}
            [1, 2]
            {"track_id": "t6", "title": "A",
            {"track_id": "", "title": "A", "artist": "B"}
            {"track_id": 7, "title": "A", "artist": "B"}
            {"track_id": "t9", "title": "A", "artist": "B", "year": 2001.5}
            {"track_id": "ok", "title": "A", "artist": "B", "speechiness": 1}
            """
        let (tracks, report) = try readText(text, format: .jsonLines)
        #expect(tracks.map(\.id) == ["ok"])
        let d = report.rejected.map(\.description)
        #expect(d.count == 9)
        #expect(d[0] == "line 1: energy: expected a number in 0...1, got 1.7")
        #expect(d[1] == "line 2: year: expected an integer in 1000...2100, got a string")
        #expect(d[2] == "line 3: artist: expected a string, got nothing")
        #expect(d[3] == "line 4: genres[1]: expected a string, got a number")
        #expect(d[4] == "line 5: input: expected an object (one track a line), got an array")
        #expect(d[5].hasPrefix("line 6: input: expected"))
        #expect(d[6] == "line 7: track_id: expected a non-empty id, got an empty value")
        #expect(d[7] == "line 8: track_id: expected a string, got a number")
        #expect(d[8] == "line 9: year: expected an integer in 1000...2100, got 2001.5")
    }

    @Test func anyChunkSizeGivesTheSameResult() throws {
        let text =
            "\u{FEFF}{\"track_id\":\"t1\",\"title\":\"é\",\"artist\":\"b\"}\r\n\n{\"track_id\":\"t2\",\"title\":\"x\",\"artist\":\"y\",\"energy\":2}\n{\"track_id\":\"t3\",\"title\":\"z\",\"artist\":\"w\"}"
        let expected = try readText(text, format: .jsonLines)
        #expect(expected.tracks.map(\.id) == ["t1", "t3"] && expected.report.rejectedCount == 1)
        #expect(expected.tracks[0].title == "é")
        for size in [1, 2, 3, 4, 9] {
            let got = try readText(text, format: .jsonLines, reader: CatalogReader(chunkSize: size))
            #expect(got.tracks == expected.tracks, "chunk size \(size)")
            #expect(got.report == expected.report, "chunk size \(size)")
        }
    }

    @Test func csvAndJSONLinesAgreeOnTheSmallCatalog() throws {
        let (tracks, _) = try CatalogReader().read(contentsOf: Repo.smallCatalog)
        var lines: [String] = []
        for t in tracks {
            var pairs: [(String, JSONValue)] = [("track_id", .string(t.id)), ("title", .string(t.title)), ("artist", .string(t.artist))]
            if let y = t.year { pairs.append(("year", .number(Double(y)))) }
            pairs.append(("genres", .array(t.genres.map { .string($0) })))
            if let v = t.durationMs { pairs.append(("duration_ms", .number(Double(v)))) }
            if let v = t.popularity { pairs.append(("popularity", .number(Double(v)))) }
            let a = t.audio
            for (k, v) in [
                ("tempo", a.tempo), ("energy", a.energy), ("valence", a.valence), ("danceability", a.danceability),
                ("acousticness", a.acousticness), ("instrumentalness", a.instrumentalness),
                ("speechiness", a.speechiness), ("loudness", a.loudness)
            ] {
                if let v { pairs.append((k, .number(v))) }
            }
            lines.append(JSONValue.object(pairs).serialized())
        }
        let (again, report) = try readText(lines.joined(separator: "\n"), format: .jsonLines)
        #expect(report.rejectedCount == 0)
        #expect(again == tracks)
    }
}

@Suite("Track")
struct TrackTests {
    @Test func codableUsesCatalogNames() throws {
        let t = Track(id: "t1", title: "A", artist: "B", durationMs: 5, audio: AudioFeatures(energy: 0.5))
        let json = String(decoding: try JSONEncoder().encode(t), as: UTF8.self)
        #expect(json.contains("\"track_id\":\"t1\"") && json.contains("\"duration_ms\":5"))
        #expect(try JSONDecoder().decode(Track.self, from: Data(json.utf8)) == t)
        #expect(AudioFeatures().isEmpty && !AudioFeatures(loudness: -3).isEmpty)
    }
}

@Suite("Decimal parser")
struct DecimalParserTests {
    private func parse(_ s: String) -> Double? {
        var copy = s
        return copy.withUTF8 { DecimalParser.parse(UnsafeRawBufferPointer($0)) }
    }

    @Test func agreesWithTheStandardLibrary() {
        var rng = SeededGenerator(state: 11)
        var samples = [
            "0", "-0", "1", "0.653", "9.11e-06", "-5.634", "106.966", "1e22", "1e23", "123456789012345678901",
            "0.000000000000000000000000001", "9007199254740993", "1.7976931348623157e308", "4.9e-324", "+3.5",
            "1E5", "2.5e+3", ".5", "5.", "00012.50"
        ]
        for _ in 0..<20_000 {
            let digits = Int.random(in: 1...17, using: &rng)
            var s = Int.random(in: 0..<4, using: &rng) == 0 ? "-" : ""
            for _ in 0..<digits { s.append(Character(String(Int.random(in: 0...9, using: &rng)))) }
            let dot = Int.random(in: 0...digits, using: &rng)
            if dot < digits { s.insert(".", at: s.index(s.endIndex, offsetBy: -dot)) }
            if Int.random(in: 0..<3, using: &rng) == 0 { s += "e\(Int.random(in: -30...30, using: &rng))" }
            samples.append(s)
        }
        for s in samples {
            let expected = Double(s)
            let got = parse(s)
            #expect(got == expected && got?.sign == expected?.sign, "\(s)")
        }
        for bad in ["", "-", ".", "e5", "1e", "1.2.3", "12a", "--1", "1e+"] {
            #expect(parse(bad) == Double(bad), "\(bad)")
        }
        #expect(parse("nan")?.isNaN == true && parse("inf") == .infinity)
    }
}
