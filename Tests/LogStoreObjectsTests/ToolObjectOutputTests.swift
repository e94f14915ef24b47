import Foundation
import LogStore
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

/// `logstore-tool` output for a person on a store of the object layer (the demo's drawing): `stats --json`
/// by type name, `export --decoded` and `--decoded-only` (and what `import` does with them).
@Suite struct ToolObjectOutputTests {
    /// A store with the demo's drawing, made by the tool.
    private func demoStore(_ label: String) throws -> TemporaryStore {
        let directory = TemporaryStore(label)
        let result = try ToolRunner.run(["demo", directory.path])
        #expect(result.status == 0, "\(result.output)")
        return directory
    }

    @Test func statsJSONKeysTypesByNameWithTheTagBeside() throws {
        let directory = try demoStore("tool-stats-types")
        let result = try ToolRunner.run(["stats", directory.path, "--json"])
        #expect(result.status == 0, "\(result.output)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let types = try #require(object["types"] as? [String: [String: Any]])
        // The demo's drawing and its task model (whose `TaskItem` is stored as "Task"; its tag was deleted).
        #expect(
            Set(types.keys) == [
                "Circle", "Rectangle", "Layer", "Page", "Contents", "Project", "Task", "RecurringTask", "User",
                TypeNames.keyRecordTypeName, TypeNames.indexCatalogTypeName,
            ])
        let circle = try #require(types["Circle"])
        #expect(circle["tag"] as? UInt32 == TypeNames.tag(for: "Circle"))
        #expect(circle["objects"] as? Int == 2)
        #expect(circle["frameBytes"] as? Int ?? 0 > 0 && circle["payloadBytes"] as? Int ?? 0 > 0)
        #expect(types["Layer"]?["objects"] as? Int == 3)

        // The text names each type first, its tag beside it.
        let text = try ToolRunner.run(["stats", directory.path])
        #expect(text.stdout.contains("Circle (tag \(TypeNames.tag(for: "Circle"))): 2"), "\(text.stdout)")
    }

    @Test func exportDecodedAddsReadableFieldsAndStillImports() throws {
        let directory = try demoStore("tool-export-decoded")
        let plain = try ToolRunner.run(["export", directory.path])
        #expect(plain.status == 0, "\(plain.output)")
        let decoded = try ToolRunner.run(["export", directory.path, "--decoded"])
        #expect(decoded.status == 0, "\(decoded.output)")
        let lines = decoded.stdout.split(separator: "\n")
        let circles = try lines.compactMap { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }.filter { $0["typeName"] as? String == "Circle" }
        #expect(circles.count == 2)
        #expect(circles.allSatisfy { $0["payload"] is String })
        #expect(
            circles.contains { $0["decoded"] as? String == "{center: {x: -4.0, y: 5.5}, radius: 0.5}" }, "\(circles)")

        // Import reads the payloads and ignores the rest: the same store as from the plain export.
        let copy = TemporaryStore("tool-export-decoded-copy")
        let imported = try ToolRunner.run(["import", copy.path], input: Data(decoded.stdout.utf8))
        #expect(imported.status == 0, "\(imported.output)")
        #expect(try ToolRunner.run(["export", copy.path]).stdout == plain.stdout)
    }

    @Test func exportDecodedOnlyLeavesPayloadsOutAndImportRefusesIt() throws {
        let directory = try demoStore("tool-export-decoded-only")
        let result = try ToolRunner.run(["export", directory.path, "--decoded-only"])
        #expect(result.status == 0, "\(result.output)")
        let objects = try result.stdout.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }.filter { $0["root"] == nil }
        #expect(objects.count == 19)
        // The object layer's field-name and index catalog records are not object encoding: they keep their
        // payloads.
        let internalNames = [TypeNames.keyRecordTypeName, TypeNames.indexCatalogTypeName]
        let drawing = objects.filter { !internalNames.contains($0["typeName"] as? String ?? "") }
        #expect(drawing.count == 16)
        #expect(drawing.allSatisfy { $0["payload"] == nil && $0["decoded"] is String }, "\(objects)")
        for name in internalNames {
            let record = try #require(objects.first { $0["typeName"] as? String == name })
            #expect(record["payload"] is String && record["decoded"] == nil, "\(record)")
        }

        let copy = TemporaryStore("tool-export-decoded-only-copy")
        let imported = try ToolRunner.run(["import", copy.path], input: Data(result.stdout.utf8))
        #expect(imported.status == 1, "\(imported.output)")
        #expect(
            imported.stderr.contains(
                "line 1: missing field \"payload\": the line has only decoded fields (written by export --decoded-only"),
            "\(imported.stderr)")
        #expect(imported.stderr.contains("nothing was written"), "\(imported.stderr)")
    }
}
