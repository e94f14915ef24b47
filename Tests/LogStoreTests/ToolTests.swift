import Foundation
import Testing

@testable @_spi(Testing) import LogStore

/// End-to-end tests of the `logstore-tool` binary: each runs it as a separate process.
@Suite struct ToolTests {
    // MARK: - demo

    @Test func demoWritesReadsReopensAndVerifiesAStore() throws {
        let directory = TemporaryDirectory("tool-demo")
        let path = directory.path + "/demo"
        let result = try ToolRunner.run(["demo", path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("demo passed"))
        #expect(result.stdout.contains("verify: sound"))
        #expect(result.stderr.isEmpty)

        // The store it left behind is sound and holds what the demo says.
        #expect(try Store.verify(at: path).isSound)
        let store = try Store.open(at: path)
        #expect(try store.count() == 336)
        let main = try #require(try store.root(named: "main"))
        #expect(try store.get(main)?.references.count == 40)
        try store.close()

        // A second run on the same store adds to it and still passes.
        let again = try ToolRunner.run(["demo", path])
        #expect(again.status == 0, "\(again.output)")
    }

    @Test func demoWithoutADirectoryUsesANewTemporaryFolder() throws {
        let result = try ToolRunner.run(["demo"])
        #expect(result.status == 0, "\(result.output)")
        let firstLine = result.stdout.split(separator: "\n").first.map(String.init) ?? ""
        let marker = "store at "
        let range = try #require(firstLine.range(of: marker))
        let path = String(firstLine[range.upperBound...])
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(try Store.verify(at: path).isSound)
    }

    // MARK: - stats

    @Test func statsPrintsTextAndParsableJSON() throws {
        let directory = TemporaryDirectory("tool-stats")
        let ids = try makeStore(directory.path, objects: 200)
        let segments = directory.segmentFiles().count
        #expect(segments > 2)

        let text = try ToolRunner.run(["stats", directory.path])
        #expect(text.status == 0, "\(text.output)")
        #expect(text.stdout.contains("live objects: 200"))
        #expect(text.stdout.contains("main -> \(ids[0])"))

        let json = try ToolRunner.run(["stats", directory.path, "--json"])
        #expect(json.status == 0, "\(json.output)")
        let parsed = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8))
        let object = try #require(parsed as? [String: Any])
        #expect(object["liveObjects"] as? Int == 200)
        #expect((object["segments"] as? [Any])?.count == segments)
        #expect((object["roots"] as? [String: Any])?["main"] as? Int == Int(ids[0].rawValue))
        let counts = try #require(object["countsByType"] as? [String: Int])
        #expect(counts == ["1": 100, "2": 100])
        let total = try #require(object["totalBytes"] as? Int)
        let live = try #require(object["liveBytes"] as? Int)
        let garbage = try #require(object["garbageBytes"] as? Int)
        #expect(live > 0 && live + garbage <= total)
        #expect(object["indexMemoryBytes"] as? Int ?? 0 > 0)
    }

    @Test func statsWorksBesideAWriter() throws {
        let directory = TemporaryDirectory("tool-stats-writer")
        let store = try Store.open(at: directory.path, options: testOptions())
        try store.put(typeTag: 1, payload: [1, 2, 3])
        // The writer holds the lock; a read-only open does not need it.
        let result = try ToolRunner.run(["stats", directory.path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("live objects: 1"))
        try store.close()
    }

    // MARK: - verify

    @Test func verifyReportsASoundStore() throws {
        let directory = TemporaryDirectory("tool-verify")
        try makeStore(directory.path, objects: 100)
        let result = try ToolRunner.run(["verify", directory.path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("sound"))
    }

    @Test func verifyListsDamageWithFileAndOffsetAndExitsOne() throws {
        let directory = TemporaryDirectory("tool-verify-damage")
        try makeStore(directory.path, objects: 200)
        let files = directory.segmentFiles()
        #expect(files.count > 2)
        let damaged = try #require(files.first)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: damaged)))
        let flipped = bytes.count / 2
        bytes[flipped] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))

        let result = try ToolRunner.run(["verify", directory.path])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stdout.contains("DAMAGED"))
        // Every problem the engine finds is listed with its file and offset, the flipped frame among them.
        let report = try Store.verify(at: directory.path)
        #expect(!report.problems.isEmpty)
        for problem in report.problems {
            let offset = try #require(problem.offset)
            #expect(result.stdout.contains("\(problem.file) @ \(offset)"), "\(result.stdout)")
        }
        let name = URL(fileURLWithPath: damaged).lastPathComponent
        let offsets = report.problems.filter { $0.file.hasSuffix(name) }.compactMap(\.offset)
        #expect(offsets.contains { $0 > 0 && $0 <= UInt64(flipped) })
    }

    @Test func verifyOfAMissingStoreFails() throws {
        let directory = TemporaryDirectory("tool-verify-missing")
        let result = try ToolRunner.run(["verify", directory.path + "/nothing-here"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("storeMissing"))
    }

    // MARK: - get

    @Test func getPrintsTextBinaryAndHex() throws {
        let directory = TemporaryDirectory("tool-get")
        let store = try Store.open(at: directory.path, options: testOptions())
        let text = try store.put(typeTag: 7, payload: Array("hello, store\nsecond line".utf8))
        let binary = try store.put(typeTag: 8, references: [text], payload: [0x00, 0x01, 0xFE, 0xFF, 0x41])
        let empty = try store.put(typeTag: 9, payload: [])
        try store.close()

        let textResult = try ToolRunner.run(["get", directory.path, "\(text)"])
        #expect(textResult.status == 0, "\(textResult.output)")
        #expect(textResult.stdout.contains("id: \(text)"))
        #expect(textResult.stdout.contains("type: 7"))
        #expect(textResult.stdout.contains("references: none"))
        #expect(textResult.stdout.contains("hello, store\nsecond line"))

        let binaryResult = try ToolRunner.run(["get", directory.path, "\(binary)"])
        #expect(binaryResult.status == 0, "\(binaryResult.output)")
        #expect(binaryResult.stdout.contains("type: 8"))
        #expect(binaryResult.stdout.contains("references: \(text)"))
        #expect(binaryResult.stdout.contains("00 01 fe ff 41"))

        let forcedHex = try ToolRunner.run(["get", directory.path, "\(text)", "--hex"])
        #expect(forcedHex.status == 0, "\(forcedHex.output)")
        #expect(forcedHex.stdout.contains("68 65 6c 6c 6f"))  // "hello"
        #expect(!forcedHex.stdout.contains("hello"))

        let emptyResult = try ToolRunner.run(["get", directory.path, "\(empty)"])
        #expect(emptyResult.status == 0, "\(emptyResult.output)")
        #expect(emptyResult.stdout.contains("payload: 0 bytes"))

        let missing = try ToolRunner.run(["get", directory.path, "999999"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("not found"))
        #expect(missing.stdout.isEmpty)
    }

    // MARK: - export and import

    @Test func exportImportExportIsIdentical() throws {
        let source = TemporaryDirectory("tool-export")
        var expected: [Record] = []
        do {
            let store = try Store.open(at: source.path, options: testOptions())
            var generator = SeededGenerator(seed: 42)
            for number in 0..<150 {
                let size = Int(generator.next() % 3000)
                let payload =
                    number % 10 == 0 ? [] : payloadBytes(size, seed: UInt64(number), compressible: number % 3 == 0)
                let references = expected.suffix(number % 4).map(\.id)
                let id = try store.put(typeTag: UInt32(number % 5), references: references, payload: payload)
                expected.append(Record(id: id, typeTag: UInt32(number % 5), references: references, payload: payload))
            }
            // Gaps, replaced records and roots with names that need escaping.
            for record in expected where record.id.rawValue % 7 == 0 { try store.delete(record.id) }
            try store.put(expected[1].id, typeTag: 99, payload: Array("replaced".utf8))
            try store.setRoot("main", to: expected[1].id)
            try store.setRoot("quote \" backslash \\ newline \n tab \t é ✓", to: expected[2].id)
            try store.setRoot("zeta", to: expected[3].id)
            try store.close()
        }
        let exportFolder = TemporaryDirectory("tool-export-file")
        let exported = exportFolder.path + "/export.jsonl"
        let first = try ToolRunner.run(["export", source.path, "--output", exported])
        #expect(first.status == 0, "\(first.output)")
        let firstText = try String(contentsOfFile: exported, encoding: .utf8)
        let lines = firstText.split(separator: "\n")
        #expect(lines.count == 150 - expected.filter { $0.id.rawValue % 7 == 0 }.count + 3)
        #expect(lines.last == "{\"root\":\"zeta\",\"id\":\(expected[3].id)}")

        // Import from a file in small batches, and from standard input in the default batch size.
        let fromFile = TemporaryDirectory("tool-import-file")
        let imported = try ToolRunner.run(["import", fromFile.path, "--input", exported, "--batch-size", "7"])
        #expect(imported.status == 0, "\(imported.output)")
        #expect(imported.stdout.contains("3 roots"))
        let fromStandardInput = TemporaryDirectory("tool-import-stdin")
        let piped = try ToolRunner.run(["import", fromStandardInput.path], input: Data(firstText.utf8))
        #expect(piped.status == 0, "\(piped.output)")

        for target in [fromFile, fromStandardInput] {
            let second = try ToolRunner.run(["export", target.path])
            #expect(second.status == 0, "\(second.output)")
            #expect(second.stdout == firstText)
        }

        // The imported store hands out ids above the imported ones.
        let store = try Store.open(at: fromFile.path)
        let highest = try #require(try store.ids().last)
        #expect(store.newID() > highest)
        #expect(try store.get(expected[1].id)?.payload == Array("replaced".utf8))
        #expect(try store.get(expected[4].id) == expected[4])
        try store.close()
    }

    @Test(arguments: [
        ("this is not json", "invalid JSON"),
        ("{\"id\":17,\"type\":1,\"refs\":[]}", "missing field \"payload\""),
        ("{\"id\":17,\"type\":1,\"refs\":[],\"payload\":\"@@not base64@@\"}", "not valid base64"),
    ])
    func importStopsAtABadLineWithoutHalfABatch(badLine: String, reason: String) throws {
        let directory = TemporaryDirectory("tool-import-bad")
        var lines = (1...25).map { number in
            let payload = Data("object \(number)".utf8).base64EncodedString()
            return "{\"id\":\(number),\"type\":1,\"refs\":[],\"payload\":\"\(payload)\"}"
        }
        lines[16] = badLine  // line 17, in the second batch of 10
        let input = Data((lines.joined(separator: "\n") + "\n").utf8)

        let result = try ToolRunner.run(["import", directory.path, "--batch-size", "10"], input: input)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr.contains("line 17: "), "\(result.stderr)")
        #expect(result.stderr.contains(reason), "\(result.stderr)")

        // The first batch is written, the bad line's batch (lines 11 to 20) and the rest are not.
        let store = try Store.open(at: directory.path)
        #expect(try store.count() == 10)
        #expect(try store.ids() == (1...10).map { ObjectID(UInt64($0)) })
        #expect(try store.get(ObjectID(10))?.payload == Array("object 10".utf8))
        try store.close()
        #expect(try Store.verify(at: directory.path).isSound)
    }

    // MARK: - Helpers

    /// A closed store in 64 KiB segments with `objects` incompressible 1 KiB records, half of type 1 and half
    /// of type 2, and the root "main" pointing at the first; returns the ids.
    @discardableResult
    private func makeStore(_ path: String, objects: Int) throws -> [ObjectID] {
        let store = try Store.open(at: path, options: testOptions(segmentSize: 1 << 16))
        var ids: [ObjectID] = []
        for number in 0..<objects {
            let references = ids.last.map { [$0] } ?? []
            let id = try store.put(
                typeTag: UInt32(1 + number % 2), references: references,
                payload: payloadBytes(1024, seed: UInt64(number)))
            ids.append(id)
        }
        try store.setRoot("main", to: ids[0])
        try store.close()
        return ids
    }
}
