import Foundation
import LogStoreExamples
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// End-to-end tests of the `logstore-tool` binary: each runs it as a separate process.
@Suite struct ToolTests {
    // MARK: - stress

    @Test func stressRunsChecksReopensAndVerifies() throws {
        let directory = TemporaryStore("tool-stress")
        let path = directory.path + "/soak"
        let result = try ToolRunner.run(["stress", path, "--seconds", "2", "--threads", "2", "--seed", "7"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("errors: 0"))
        #expect(result.stdout.contains("verify: sound"))
        for operation in ["get", "put", "overwrite", "delete", "root", "batch"] {
            #expect(result.stdout.contains("\n" + operation + " "), "no latency line for \(operation)")
        }
        #expect(try Store.verify(at: path).isSound)
        // A directory that holds a store already is refused (nothing is written into it).
        let again = try ToolRunner.run(["stress", path, "--seconds", "1"])
        #expect(again.status != 0)
        #expect(again.stderr.contains("holds a store already"))
    }

    // MARK: - demo

    @Test func demoWritesReadsReopensAndVerifiesAStore() throws {
        let directory = TemporaryStore("tool-demo")
        let path = directory.path + "/demo"
        let result = try ToolRunner.run(["engine-demo", path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("demo passed"))
        #expect(result.stdout.contains("verify: sound"))
        #expect(result.stderr.isEmpty)

        #expect(result.stdout.contains("deleting the oldest note was refused"))
        #expect(result.stdout.contains("21 objects left unreachable"))
        #expect(result.stdout.contains("21 collected"))

        // The store it left behind is sound and holds what the demo says: 295 notes, 99 comments, and
        // the new index of 20 items; the draft, its attachment, the old index and 20 items were collected.
        let report = try Store.verify(at: path)
        #expect(report.isSound)
        #expect(!report.notes.contains { $0.contains("unreachable") }, "\(report.notes)")
        let store = try Store.open(at: path, options: quietOptions())
        #expect(try store.count() == 415)
        #expect(try store.reachableObjectCount() == 415)
        #expect(try store.countsByType() == [1: 295, 2: 20, 3: 1, 4: 99])
        let main = try #require(try store.root(named: "main"))
        let index = try #require(try store.get(main))
        #expect(index.references.count == 20)
        #expect(!index.isPinned)
        try store.close()

        // A second run on the same store adds to it and still passes.
        let again = try ToolRunner.run(["engine-demo", path])
        #expect(again.status == 0, "\(again.output)")
    }

    @Test func demoWithoutADirectoryUsesANewTemporaryFolder() throws {
        let result = try ToolRunner.run(["engine-demo"])
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
        let directory = TemporaryStore("tool-stats")
        let ids = try makeStore(directory.path, objects: 200)
        let segments = directory.segmentFiles().count
        #expect(segments > 2)

        let text = try ToolRunner.run(["stats", directory.path])
        #expect(text.status == 0, "\(text.output)")
        #expect(text.stdout.contains("live objects: 200"))
        #expect(text.stdout.contains("reachable objects: 200\n"))
        #expect(text.stdout.contains("main -> \(ids[0])"))
        #expect(text.stdout.contains("garbage bytes  kind"))

        let json = try ToolRunner.run(["stats", directory.path, "--json"])
        #expect(json.status == 0, "\(json.output)")
        let parsed = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8))
        let object = try #require(parsed as? [String: Any])
        #expect(object["liveObjects"] as? Int == 200)
        #expect(object["reachableObjects"] as? Int == 200)
        let segmentObjects = try #require(object["segments"] as? [[String: Any]])
        #expect(segmentObjects.count == segments)
        for segment in segmentObjects {
            #expect(segment["isActive"] is Bool && segment["isCompactionOutput"] as? Bool == false)
            #expect(segment["liveBytes"] is Int && segment["garbageBytes"] is Int)
        }
        // Only the newest segment can be the active one.
        #expect(segmentObjects.dropLast().allSatisfy { $0["isActive"] as? Bool == false })
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
        let directory = TemporaryStore("tool-stats-writer")
        let store = try directory.open(options: quietOptions())
        try store.put(typeTag: 1, payload: [1, 2, 3])
        // Unpinned and referred to by nothing: live, but unreachable until mark-sweep frees it.
        try store.put(typeTag: 2, payload: [4], pinned: false)
        // The writer holds the lock; a read-only open does not need it.
        let result = try ToolRunner.run(["stats", directory.path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("live objects: 2"))
        #expect(result.stdout.contains("reachable objects: 1 (1 unreachable, awaiting mark-sweep)"))
        let json = try ToolRunner.run(["stats", directory.path, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["liveObjects"] as? Int == 2)
        #expect(object["reachableObjects"] as? Int == 1)
        try store.close()
    }

    // MARK: - verify

    @Test func verifyReportsASoundStore() throws {
        let directory = TemporaryStore("tool-verify")
        try makeStore(directory.path, objects: 100)
        let result = try ToolRunner.run(["verify", directory.path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("sound"))
    }

    @Test func verifyListsDamageWithFileAndOffsetAndExitsOne() throws {
        let directory = TemporaryStore("tool-verify-damage", unverifiedBecause: "a byte of a segment is flipped")
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

    @Test func verifyNamesADanglingReferenceAndExitsOne() throws {
        // A pinned target alone at the start of segment 1, referred to by an object and a root in a later
        // segment: deleting segment 1's file leaves both dangling (the API never lets that happen).
        let directory = TemporaryStore(
            "tool-verify-dangling", unverifiedBecause: "a segment is deleted, leaving references dangling")
        let target: ObjectID
        let referrer: ObjectID
        do {
            let store = try directory.open(options: quietOptions())
            target = try store.put(typeTag: 1, payload: payloadBytes(1024, seed: 1))
            for number in 0..<100 {
                try store.put(typeTag: 2, payload: payloadBytes(1024, seed: 100 + UInt64(number)))
            }
            referrer = try store.put(typeTag: 3, references: [target], payload: Array("referrer".utf8))
            try store.setRoot("target", to: target)
            try store.close()
        }
        let files = directory.segmentFiles()
        #expect(files.count > 1)
        let first = try #require(files.first)
        #expect(first.hasSuffix("/0000000001.seg"))
        #expect(try Store.verify(at: directory.path).isSound)
        try FileManager.default.removeItem(atPath: first)

        let result = try ToolRunner.run(["verify", directory.path])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stdout.contains("DAMAGED"))
        #expect(
            result.stdout.contains("object \(referrer) refers to object \(target), which is not live"),
            "\(result.stdout)")
        #expect(result.stdout.contains("root \"target\" points at object \(target)"), "\(result.stdout)")
        // The referrer's problem names its segment file and offset.
        let line = try #require(
            result.stdout.split(separator: "\n").first { $0.contains("object \(referrer) refers to") })
        #expect(line.contains("0000000002.seg @ "), "\(line)")
    }

    @Test func verifyOfAMissingStoreFails() throws {
        let directory = TemporaryStore("tool-verify-missing")
        let result = try ToolRunner.run(["verify", directory.path + "/nothing-here"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("storeMissing"))
    }

    // MARK: - get

    @Test func getPrintsTextBinaryAndHex() throws {
        let directory = TemporaryStore("tool-get")
        let store = try directory.open(options: testOptions())
        let text = try store.put(typeTag: 7, payload: Array("hello, store\nsecond line".utf8))
        let binary = try store.put(typeTag: 8, references: [text], payload: [0x00, 0x01, 0xFE, 0xFF, 0x41])
        let empty = try store.put(typeTag: 9, payload: [])
        try store.close()

        let textResult = try ToolRunner.run(["get", directory.path, "\(text)"])
        #expect(textResult.status == 0, "\(textResult.output)")
        #expect(textResult.stdout.contains("id: \(text)"))
        #expect(textResult.stdout.contains("type: 7"))
        #expect(textResult.stdout.contains("pinned: yes"))
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

    @Test func exportImportExportIsIdenticalWithPinsRootsAndCycles() throws {
        let source = TemporaryStore("tool-export")
        let graph = try makeGraphStore(source.path)
        let exportFolder = TemporaryStore("tool-export-file")
        let exported = exportFolder.path + "/export.jsonl"
        let first = try ToolRunner.run(["export", source.path, "--output", exported])
        #expect(first.status == 0, "\(first.output)")
        let firstText = try String(contentsOfFile: exported, encoding: .utf8)
        let lines = firstText.split(separator: "\n")
        #expect(lines.count == graph.liveObjects + 4)
        #expect(lines.last == "{\"root\":\"zeta\",\"id\":\(graph.zeta)}")

        // The export carries every pin and the references as they are, higher ids and cycles included.
        var exportedObjects: [UInt64: [String: Any]] = [:]
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            if object["root"] == nil, let id = object["id"] as? UInt64 { exportedObjects[id] = object }
        }
        func exportedObject(_ id: ObjectID) throws -> [String: Any] { try #require(exportedObjects[id.rawValue]) }
        #expect(try exportedObject(graph.low)["refs"] as? [UInt64] == [graph.high.rawValue])
        #expect(try exportedObject(graph.low)["pinned"] as? Bool == true)
        #expect(try exportedObject(graph.high)["pinned"] as? Bool == false)
        #expect(try exportedObject(graph.ring.0)["refs"] as? [UInt64] == [graph.ring.1.rawValue])
        #expect(try exportedObject(graph.ring.1)["refs"] as? [UInt64] == [graph.ring.0.rawValue])
        #expect(try exportedObject(graph.ring.0)["pinned"] as? Bool == false)
        #expect(try exportedObject(graph.holder)["refs"] as? [UInt64] == [graph.ring.0.rawValue])
        #expect(try exportedObject(graph.replaced)["refs"] as? [UInt64] == [graph.ring.1.rawValue])
        #expect(exportedObjects.values.filter { $0["pinned"] as? Bool == false }.count >= 40)

        // Import from a file in batches smaller than the big cycle and of 1 object, and from standard
        // input (a pipe) in the default batch size.
        let inSevens = TemporaryStore("tool-import-7")
        let seven = try ToolRunner.run(["import", inSevens.path, "--input", exported, "--batch-size", "7"])
        #expect(seven.status == 0, "\(seven.output)")
        #expect(seven.stdout.contains("imported \(graph.liveObjects) objects and 4 roots"))
        #expect(seven.stdout.contains("note: 10 objects that refer to each other in a cycle were written in one batch"))
        let inOnes = TemporaryStore("tool-import-1")
        let one = try ToolRunner.run(["import", inOnes.path, "--input", exported, "--batch-size", "1"])
        #expect(one.status == 0, "\(one.output)")
        let fromStandardInput = TemporaryStore("tool-import-stdin")
        let piped = try ToolRunner.run(["import", fromStandardInput.path], input: Data(firstText.utf8))
        #expect(piped.status == 0, "\(piped.output)")
        #expect(piped.stdout.contains("in 1 batch\n"))

        let sourceStore = try source.open(options: StoreOptions(readOnly: true))
        let sourceReachable = try sourceStore.reachableObjectCount()
        try sourceStore.close()
        #expect(sourceReachable < graph.liveObjects, "the source has unreachable objects awaiting mark-sweep")
        for target in [inSevens, inOnes, fromStandardInput] {
            let second = try ToolRunner.run(["export", target.path])
            #expect(second.status == 0, "\(second.output)")
            #expect(second.stdout == firstText)
            let report = try Store.verify(at: target.path)
            #expect(report.isSound, "\(report.problems)")
            // The same objects are unreachable, and a mark-sweep pass would free the same ones.
            let store = try target.open(options: quietOptions())
            #expect(try store.reachableObjectCount() == sourceReachable)
            // The imported store hands out ids above the imported ones.
            let highest = try #require(try store.ids().last)
            #expect(store.newID() > highest)
            #expect(try store.get(graph.replaced)?.payload == Array("replaced".utf8))
            #expect(try store.get(graph.ring.0)?.isPinned == false)
            #expect(try store.get(graph.holder)?.isPinned == true)
            try store.close()
        }
    }

    @Test(arguments: [
        ("this is not json", "invalid JSON"),
        ("{\"id\":17,\"type\":1,\"refs\":[]}", "missing field \"payload\""),
        ("{\"id\":17,\"type\":1,\"refs\":[],\"payload\":\"@@not base64@@\"}", "field \"payload\" is not valid base64"),
        ("{\"id\":17,\"type\":1,\"pinned\":\"yes\",\"payload\":\"\"}", "field \"pinned\" has the wrong type"),
        ("{\"id\":3,\"type\":1,\"payload\":\"\"}", "object 3 appears again (first on line 3)"),
        ("{\"id\":17,\"type\":1,\"refs\":[16,12345],\"payload\":\"\"}", "object 17 refers to unknown object 12345"),
        ("{\"root\":\"main\",\"id\":54321}", "root \"main\" points at unknown object 54321"),
        (
            "{\"id\":18446744073709551550,\"type\":1,\"payload\":\"\"}",
            "object id 18446744073709551550 is outside the ids a store holds (1 … 9223372036854775807)"
        ),
        (
            "{\"id\":9223372036854775807,\"type\":1,\"payload\":\"\"}",
            "object id 9223372036854775807 is over 4611686018427387904 (2^62) and not reserved in the store (its "
                + "next id is 1): ids above 2^62 are refused so that at least 2^62−1 ids stay for new objects"
        ),
    ])
    func importWritesNothingWhenALineIsBad(badLine: String, reason: String) throws {
        let directory = TemporaryStore("tool-import-bad")
        var lines = (1...25).map { number in
            let payload = Data("object \(number)".utf8).base64EncodedString()
            return "{\"id\":\(number),\"type\":1,\"refs\":[],\"payload\":\"\(payload)\"}"
        }
        lines[16] = badLine  // line 17, in the second batch of 10
        let input = Data((lines.joined(separator: "\n") + "\n").utf8)

        let result = try ToolRunner.run(["import", directory.path, "--batch-size", "10"], input: input)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr.contains("line 17: \(reason)"), "\(result.stderr)")
        #expect(result.stderr.contains("nothing was written"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").filter { $0.hasPrefix("line ") }.count == 1, "\(result.stderr)")

        // The whole input is checked before anything is written: the store is empty, and takes new objects.
        let store = try directory.open(options: quietOptions())
        #expect(try store.count() == 0)
        #expect(try store.roots().isEmpty)
        #expect(try store.put(typeTag: 1, payload: []) == ObjectID(1))
        try store.close()
        #expect(try Store.verify(at: directory.path).isSound)
    }

    @Test func importChecksReferencesAgainstTheInputAndTheStore() throws {
        let directory = TemporaryStore("tool-import-refs")
        func line(_ id: Int, refs: [Int], pinned: Bool? = nil) -> String {
            let pin = pinned.map { ",\"pinned\":\($0)" } ?? ""
            return "{\"id\":\(id),\"type\":1,\"refs\":\(refs)\(pin),\"payload\":\"\"}"
        }
        let text = [
            line(1, refs: [2]),  // a reference to a higher id, written later in the input
            line(2, refs: [], pinned: false),
            "",
            line(3, refs: [1, 999]),
            "{\"root\":\"r\",\"id\":998}",
            line(4, refs: [997, 997, 996]),
        ].joined(separator: "\n")

        let refused = try ToolRunner.run(["import", directory.path], input: Data(text.utf8))
        #expect(refused.status == 1, "\(refused.output)")
        #expect(refused.stderr.contains("line 4: object 3 refers to unknown object 999"), "\(refused.stderr)")
        #expect(refused.stderr.contains("line 5: root \"r\" points at unknown object 998"), "\(refused.stderr)")
        #expect(
            refused.stderr.contains("line 6: object 4 refers to unknown object 997 (and 1 other unknown object)"),
            "\(refused.stderr)")
        #expect(refused.stderr.contains("import stopped: 3 bad lines of 6; nothing was written"), "\(refused.stderr)")

        // Objects live in the store already may be referred to.
        do {
            let store = try directory.open(options: quietOptions())
            #expect(try store.count() == 0)
            try store.reserveIDs(through: ObjectID(999))
            for id in [996, 997, 998, 999] as [UInt64] { try store.put(ObjectID(id), typeTag: 2, payload: []) }
            try store.close()
        }
        let accepted = try ToolRunner.run(["import", directory.path], input: Data(text.utf8))
        #expect(accepted.status == 0, "\(accepted.output)")
        #expect(accepted.stdout.contains("imported 4 objects and 1 root from 6 lines in 1 batch"))
        let store = try directory.open(options: quietOptions())
        #expect(try store.count() == 8)
        #expect(try store.get(ObjectID(1))?.references == [ObjectID(2)])
        #expect(try store.get(ObjectID(1))?.isPinned == true)  // "pinned" defaults to true
        #expect(try store.get(ObjectID(2))?.isPinned == false)
        #expect(try store.get(ObjectID(3))?.references == [ObjectID(1), ObjectID(999)])
        #expect(try store.root(named: "r") == ObjectID(998))
        #expect(store.newID() > ObjectID(999))
        try store.close()
    }

    @Test func importWritesADeepChainOfReferencesToHigherIDsDependenciesFirst() throws {
        // Object n refers to n + 1; only the first is pinned. Written in input order, every batch but
        // the last would refer to objects not written yet; a recursive search would overflow the stack.
        let count = 50_000
        let text =
            (1...count).map { id in
                let references = id < count ? "\(id + 1)" : ""
                return "{\"id\":\(id),\"type\":1,\"refs\":[\(references)],\"pinned\":\(id == 1),\"payload\":\"\"}"
            }.joined(separator: "\n") + "\n"
        let directory = TemporaryStore("tool-import-chain")
        let result = try ToolRunner.run(["import", directory.path, "--batch-size", "1000"], input: Data(text.utf8))
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("imported 50000 objects and 0 roots from 50000 lines in 50 batches"))
        let exported = try ToolRunner.run(["export", directory.path])
        #expect(exported.stdout == text)
        let store = try directory.open(options: quietOptions())
        #expect(try store.reachableObjectCount() == count)
        try store.close()
    }

    // MARK: - compact

    @Test func compactCollectsGarbageAndShrinksTheStore() throws {
        let directory = TemporaryStore("tool-compact")
        let kept = try makeStoreWithGarbage(directory.path)
        let before = try directory.segmentFiles().reduce(0) { $0 + (try fileSize($1)) }

        let result = try ToolRunner.run(["compact", directory.path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        #expect(result.stdout.contains("mark-sweep: 52 live objects, 50 reachable, 2 collected"), "\(result.stdout)")
        // Not a terminal: plain progress lines, no bar.
        #expect(result.stdout.contains("compacting: 100%"), "\(result.stdout)")
        #expect(!result.stdout.contains("\r"))
        for field in [
            "segments: ", "bytes: ", "live objects: 52 -> 50 (2 collected by mark-sweep)", "records copied: ", "time: ",
        ] {
            #expect(result.stdout.contains(field), "\(field) in \(result.stdout)")
        }
        let after = try directory.segmentFiles().reduce(0) { $0 + (try fileSize($1)) }
        #expect(after < before)

        // Everything kept reads back; the store is sound and holds no unreachable object.
        let report = try Store.verify(at: directory.path)
        #expect(report.isSound, "\(report.problems)")
        #expect(!report.notes.contains { $0.contains("unreachable") }, "\(report.notes)")
        let store = try directory.open(options: quietOptions())
        #expect(try store.count() == kept.count)
        for (id, payload) in kept {
            #expect(try store.get(id)?.payload == payload)
        }
        try store.close()

        // stats shows the compaction outputs.
        let stats = try ToolRunner.run(["stats", directory.path, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
        let segments = try #require(object["segments"] as? [[String: Any]])
        #expect(segments.contains { $0["isCompactionOutput"] as? Bool == true })
        #expect(object["reachableObjects"] as? Int == kept.count)
        let text = try ToolRunner.run(["stats", directory.path])
        #expect(text.stdout.contains("compaction output"))

        // A second pass finds nothing to do.
        let again = try ToolRunner.run(["compact", directory.path])
        #expect(again.status == 0, "\(again.output)")
        #expect(again.stdout.contains("0 collected"))
    }

    @Test func compactPrintsParsableJSON() throws {
        let directory = TemporaryStore("tool-compact-json")
        let kept = try makeStoreWithGarbage(directory.path)
        let result = try ToolRunner.run(["compact", directory.path, "--json"])
        #expect(result.status == 0, "\(result.output)")
        // Progress goes to standard error only on a terminal: standard output is the JSON alone.
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["objectsCollected"] as? Int == 2)
        #expect(object["liveObjectsBefore"] as? Int == 52)
        #expect(object["liveObjectsAfter"] as? Int == kept.count)
        let bytesBefore = try #require(object["bytesBefore"] as? Int)
        let bytesAfter = try #require(object["bytesAfter"] as? Int)
        #expect(bytesAfter < bytesBefore)
        let segmentsBefore = try #require(object["segmentsBefore"] as? Int)
        let segmentsAfter = try #require(object["segmentsAfter"] as? Int)
        #expect(segmentsAfter < segmentsBefore)
        #expect(object["segmentsCompacted"] as? Int ?? 0 > 0)
        #expect(object["recordsCopied"] as? Int ?? 0 > 0)
        #expect(object["seconds"] is Double)
        let markSweep = try #require(object["markSweep"] as? [String: Any])
        #expect(markSweep["collected"] as? Int == 2)
        #expect(markSweep["reachable"] as? Int == 50)
    }

    @Test func compactOfAMissingStoreFailsAndCreatesNothing() throws {
        let directory = TemporaryStore("tool-compact-missing")
        let missing = directory.path + "/nothing-here"
        let result = try ToolRunner.run(["compact", missing])
        #expect(result.status != 0)
        #expect(
            result.stderr.contains("\(missing) does not exist: not a store; nothing was written"), "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    // MARK: - Helpers

    /// A closed store in 64 KiB segments with `objects` incompressible 1 KiB records, half of type 1 and half
    /// of type 2, and the root "main" pointing at the first; returns the ids.
    @discardableResult
    private func makeStore(_ path: String, objects: Int) throws -> [ObjectID] {
        let store = try Store.open(at: path, options: quietOptions())
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

    /// Objects of ``makeGraphStore(_:)`` that the export/import test looks at.
    private struct Graph {
        /// Live objects in the store, unreachable ones included.
        var liveObjects: Int
        /// The object the root "zeta" points at.
        var zeta: ObjectID
        /// A pinned object that refers to `high`, an unpinned object with a higher id.
        var low: ObjectID
        var high: ObjectID
        /// Two unpinned objects that refer to each other, referred to by the pinned `holder`.
        var ring: (ObjectID, ObjectID)
        var holder: ObjectID
        /// A pinned object replaced by one with another type and a reference to a higher id.
        var replaced: ObjectID
    }

    /// A closed store with pinned and unpinned objects (some unreachable, awaiting mark-sweep), gaps
    /// left by deletes and collection, a replaced object, references to higher ids, a 2-cycle, a
    /// 10-cycle and a self-reference, and 4 roots (one to an unpinned object, one with a name that
    /// needs escaping).
    private func makeGraphStore(_ path: String) throws -> Graph {
        let store = try Store.open(at: path, options: quietOptions())
        var generator = SplitMix64(seed: 42)
        var records: [Record] = []
        var referenced: Set<ObjectID> = []
        for number in 0..<150 {
            let size = Int(generator.next() % 3000)
            let payload =
                number % 10 == 0 ? [] : payloadBytes(size, seed: UInt64(number), compressible: number % 3 == 0)
            let references = records.suffix(number % 4).map(\.id)
            // Every third object unpinned: alive while referred to, unreachable when never referred to.
            let pinned = number % 3 != 1
            let id = try store.put(
                typeTag: UInt32(number % 5), references: references, payload: payload, pinned: pinned)
            records.append(
                Record(id: id, typeTag: UInt32(number % 5), references: references, payload: payload, isPinned: pinned))
            referenced.formUnion(references)
        }
        // Gaps: deletes of objects nothing refers to (unpinned objects only they referred to go too).
        for record in records where record.id.rawValue % 7 == 0 && !referenced.contains(record.id) {
            try store.delete(record.id)
        }
        // A pinned object referring to an unpinned one with a higher id.
        let low = store.newID()
        let high = store.newID()
        try store.put(high, typeTag: 5, payload: Array("high".utf8), pinned: false)
        try store.put(low, typeTag: 5, references: [high], payload: Array("low".utf8))
        // A 2-cycle of unpinned objects held by a pinned one, a 10-cycle, and a self-reference.
        let ring = (store.newID(), store.newID())
        let holder = store.newID()
        let bigRing = (0..<10).map { _ in store.newID() }
        let bigHolder = store.newID()
        let selfie = store.newID()
        try store.write { batch in
            batch.put(ring.0, typeTag: 6, references: [ring.1], payload: Array("ring a".utf8), pinned: false)
            batch.put(ring.1, typeTag: 6, references: [ring.0], payload: Array("ring b".utf8), pinned: false)
            batch.put(holder, typeTag: 7, references: [ring.0], payload: Array("holder".utf8))
            for (position, id) in bigRing.enumerated() {
                batch.put(
                    id, typeTag: 6, references: [bigRing[(position + 1) % bigRing.count]], payload: [UInt8(position)],
                    pinned: false)
            }
            batch.put(bigHolder, typeTag: 7, references: [bigRing[5]], payload: [])
            batch.put(selfie, typeTag: 8, references: [selfie], payload: Array("self".utf8), pinned: false)
        }
        // A replaced object that now refers to a higher id.
        let replaced = try #require(
            records.dropFirst().first { record in
                record.isPinned && (try? store.contains(record.id)) == true
            })
        try store.put(replaced.id, typeTag: 99, references: [ring.1], payload: Array("replaced".utf8))
        let escaped = try #require(records.dropFirst(2).first { (try? store.contains($0.id)) == true })
        let zeta = try #require(records.dropFirst(3).first { (try? store.contains($0.id)) == true })
        try store.setRoot("main", to: replaced.id)
        try store.setRoot("quote \" backslash \\ newline \n tab \t é ✓", to: escaped.id)
        try store.setRoot("self", to: selfie)
        try store.setRoot("zeta", to: zeta.id)
        let liveObjects = try store.count()
        try store.close()
        return Graph(
            liveObjects: liveObjects, zeta: zeta.id, low: low, high: high, ring: ring, holder: holder,
            replaced: replaced.id)
    }

    /// A closed store in 64 KiB segments with garbage in sealed segments: 2 unpinned 1 KiB objects in
    /// a cycle whose root was removed (only mark-sweep frees them), and 150 pinned 1 KiB objects of
    /// which 100 were deleted. Returns the 50 kept objects and their payloads.
    private func makeStoreWithGarbage(_ path: String) throws -> [(ObjectID, [UInt8])] {
        let store = try Store.open(at: path, options: quietOptions())
        let cycle = (store.newID(), store.newID())
        try store.write { batch in
            batch.put(cycle.0, typeTag: 2, references: [cycle.1], payload: payloadBytes(1024, seed: 1), pinned: false)
            batch.put(cycle.1, typeTag: 2, references: [cycle.0], payload: payloadBytes(1024, seed: 2), pinned: false)
            batch.setRoot("cycle", to: cycle.0)
        }
        var kept: [(ObjectID, [UInt8])] = []
        for number in 0..<150 {
            let payload = payloadBytes(1024, seed: 10 + UInt64(number))
            let id = try store.put(typeTag: 1, payload: payload)
            if number % 3 == 0 { kept.append((id, payload)) } else { try store.delete(id) }
        }
        try store.removeRoot("cycle")
        #expect(try store.count() == 52)
        try store.close()
        return kept
    }

    /// Options for stores the tests write: 64 KiB segments, no background compaction or mark-sweep.
    private func quietOptions() -> StoreOptions {
        var options = testOptions(segmentSize: 1 << 16)
        options.compaction.background = false
        return options
    }

    private func fileSize(_ path: String) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
    }
}
