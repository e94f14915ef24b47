import LogStore
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

/// Use case 1 across processes: `logstore-tool demo` saves the drawing in its own process; this process
/// reads it with its own classes (same type and field names), changes it, and the tool verifies it.
@Suite struct DemoProcessTests {
    @Test func drawingSavedByTheToolReadsBackHere() throws {
        let directory = TemporaryStore("demo-process")
        let path = directory.path + "/demo"
        let result = try ToolRunner.run(["demo", path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("demo passed"))
        #expect(result.stdout.contains("(shared: the same instance)"))
        // The output explains what freed the dropped circle, what the live objects are, and the types by name.
        #expect(
            result.stdout.contains(
                "nothing else referred to it, so the reference-count cascade freed it at once; mark-sweep (which "
                    + "frees unreachable cycles) then found nothing more: 0 collected"), "\(result.stdout)")
        #expect(
            result.stdout.contains(
                "19 live objects checked: the drawing's and the tasks' 16 and 3 internal records of the object "
                    + "layer (its field and type names, its index catalog)"), "\(result.stdout)")
        #expect(result.stdout.contains("through the index: [\"write the guide\"]"), "\(result.stdout)")
        #expect(result.stdout.contains("the save wrote 3 objects and encoded nothing else"), "\(result.stdout)")
        #expect(result.stdout.contains("    Circle (tag \(TypeNames.tag(for: "Circle"))): 2\n"), "\(result.stdout)")
        #expect(
            result.stdout.contains(
                "    \(TypeNames.keyRecordTypeName) (tag \(TypeNames.keyRecordTag)): 2 (internal: the object layer's "
                    + "field and type names)"), "\(result.stdout)")

        let objects = try ObjectStore.open(at: path, types: drawingTypes)
        let context = objects.makeContext()
        let contents = try #require(try context.root(named: "main", as: Contents.self))
        #expect(contents.pages.map(\.title) == ["one", "two"])
        let background = contents.pages[0].layers[0]
        #expect(background === contents.pages[1].layers[0])
        #expect(background.shapes.count == 2, "the demo dropped the first circle")
        #expect((background.shapes[0] as? Circle)?.radius == 0.5)
        #expect((background.shapes[1] as? Rectangle)?.size == Size(width: 10, height: 20))
        #expect(try context.count(of: Rectangle.self) == 2 && context.count(of: Circle.self) == 2)
        #expect(try context.save().written == 0, "this process encodes the tool's objects to the same bytes")
        background.name = "changed here"
        try context.save()

        // The tool names the types and prints objects by field name.
        let circle = try #require(background.shapes[0] as? Circle)
        let circleID = try #require(context.id(of: circle))
        let layerID = try #require(context.id(of: background))
        let stats = try ToolRunner.run(["stats", path])
        #expect(
            stats.stdout.contains("Circle (tag \(TypeNames.tag(for: "Circle"))): 2")
                && stats.stdout.contains("Layer (tag \(TypeNames.tag(for: "Layer"))): 3"), "\(stats.output)")
        let get = try ToolRunner.run(["get", path, "\(circleID)"])
        #expect(
            get.stdout.contains("Circle {center: {x: -4.0, y: 5.5}, radius: 0.5}"), "\(get.output)")
        let getLayer = try ToolRunner.run(["get", path, "\(layerID)"])
        #expect(getLayer.stdout.contains("Layer {name: \"changed here\", shapes: [→ #"), "\(getLayer.output)")

        try objects.close()

        // Another process verifies the store and, running the demo again, replaces the drawing.
        let verify = try ToolRunner.run(["verify", path])
        #expect(verify.status == 0, "\(verify.output)")
        let again = try ToolRunner.run(["demo", path])
        #expect(again.status == 0 && again.stdout.contains("demo passed"), "\(again.output)")
    }
}
