import ArgumentParser
import Foundation
import LogStore
import LogStoreExamples
import LogStoreObjects

/// `demo [DIR]`: the object layer end to end on a drawing (use case 1 of the guide).
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Save a drawing and a task list as object graphs, reopen, change, compact, verify, stats.",
        discussion: """
            Part 1 builds a drawing: contents with two pages, three layers (the "background" layer is shared by both \
            pages) and five shapes (circles and rectangles in `[any Shape]`), and saves it under the root \
            "main". Closes the store, reopens it in a fresh context and prints the graph, checking every value \
            and that the shared layer comes back as one instance; loads every Rectangle by type. Then drops \
            the first circle from the shared layer, saves, runs garbage collection and compaction, checks \
            that the circle is gone and everything reachable remains, verifies the store and prints its \
            statistics. Part 2 saves a project with tasks (classes declared with @Persistent) in the same store, \
            edits tasks in a loop without holding them, saves (only the changed tasks are written) and checks \
            the reloaded values, the subclass, the back-references and a query by protocol. Exits non-zero \
            when any check fails. Run it again on the same folder: it replaces the drawing and the project.
            """
    )

    @Argument(help: "Where to put the demo store (default: a new temporary folder).")
    var directory: String?

    func run() throws {
        if let directory { try refuseNonDirectory(directory) }
        let path = try directory ?? makeTemporaryDirectory()
        var checks = DemoChecks()
        print("LogStore object demo: store at \(path)")
        let options = writableOptions(segmentSize: LogStoreLimits.minSegmentSize)

        // 1. Build and save.
        var droppedCircle = ObjectID(0)
        do {
            let objects = try ObjectStore.open(at: path, options: options, types: drawingTypes)
            let context = objects.makeContext()
            let c1 = Circle(center: Point(x: 1, y: 2), radius: 3)
            let c2 = Circle(center: Point(x: -4, y: 5.5), radius: 0.5)
            let c3 = Circle(center: Point(x: 9, y: 9), radius: 9)
            let r1 = Rectangle(origin: Point(x: 0, y: 0), size: Size(width: 10, height: 20))
            let r2 = Rectangle(origin: Point(x: 7, y: 8), size: Size(width: 1, height: 2))
            let background = Layer(name: "background", shapes: [c1, r1])
            let figures = Layer(name: "figures", shapes: [c2, r2])
            let notes = Layer(name: "notes", shapes: [c3])
            let contents = Contents(pages: [
                Page(title: "one", layers: [background, figures]),
                Page(title: "two", layers: [background, notes]),
            ])
            try context.setRoot(contents, named: "main")
            let report = try context.save()
            droppedCircle = context.id(of: c1) ?? ObjectID(0)
            let circleBytes = try objects.store.get(droppedCircle)?.payload.count ?? 0
            print(
                "  saved the drawing under root \"main\" in one atomic batch: \(report.written) objects written "
                    + "(a Circle's payload is \(circleBytes) bytes)")
            checks.expect(report.written == 11, "11 objects written")
            checks.expect(circleBytes <= 40, "a Circle encodes to at most 40 bytes")
            checks.expect(try context.save().written == 0, "saving again writes nothing: nothing changed")
            try objects.close()
        }

        // 2. Reopen in a fresh context and print the graph.
        do {
            let objects = try ObjectStore.open(at: path, options: options, types: drawingTypes)
            let context = objects.makeContext()
            guard let contents = try context.root(named: "main", as: Contents.self) else {
                throw ToolError("root \"main\" is missing after reopening")
            }
            print("  reopened; root \"main\" in a fresh context:")
            printGraph(contents, context)
            checks.expect(contents.pages.map(\.title) == ["one", "two"], "pages read back")
            let shared = contents.pages.first?.layers.first
            checks.expect(
                shared != nil && shared === contents.pages.last?.layers.first,
                "the shared layer is one instance on both pages")
            let shapes = contents.pages.flatMap(\.layers).flatMap(\.shapes)
            checks.expect(
                shapes.map(\.description) == [
                    "Circle center (1, 2) radius 3", "Rectangle origin (0, 0) size 10 × 20",
                    "Circle center (-4, 5.5) radius 0.5", "Rectangle origin (7, 8) size 1 × 2",
                    "Circle center (1, 2) radius 3", "Rectangle origin (0, 0) size 10 × 20",
                    "Circle center (9, 9) radius 9",
                ], "every shape reads back with its values")
            let rectangles = try context.objects(of: Rectangle.self)
            print(
                "  by type: \(plural(rectangles.count, "Rectangle")) (\(rectangles.map(\.description).joined(separator: "; "))), "
                    + "\(plural(try context.count(of: Circle.self), "Circle")), "
                    + "\(plural(try context.count(of: Layer.self), "Layer"))")
            checks.expect(rectangles.count == 2, "two rectangles by type")

            // 3. Change: drop the first circle from the shared layer; it becomes garbage.
            if let background = shared, background.shapes.count == 2,
                let c2 = contents.pages.first?.layers.last?.shapes.first
            {
                background.shapes = [c2, background.shapes[1]]
            }
            let report = try context.save()
            // Nothing but the layer referred to the circle, and it is not pinned: the save's reference
            // counting frees it at once. Mark-sweep is for what counting cannot free (cycles).
            let freedByCounting = try objects.store.get(droppedCircle) == nil
            let collected = try objects.store.collectGarbage()
            let compaction = try objects.store.compact()
            print(
                "  set background.shapes = [c2, r1] and saved (\(plural(report.written, "object")) written)")
            if freedByCounting {
                print(
                    "  the dropped circle was freed by that save: nothing else referred to it, so the reference-count "
                        + "cascade freed it at once; mark-sweep (which frees unreachable cycles) then found nothing more: "
                        + "\(collected.collected) collected")
            } else {
                print(
                    "  mark-sweep collected \(plural(collected.collected, "unreachable object")), "
                        + "the dropped circle among them")
            }
            print(
                "  compaction: \(compaction.segmentsBefore) -> \(plural(compaction.segmentsAfter, "segment")), "
                    + "\(formatBytes(compaction.bytesBefore)) -> \(formatBytes(compaction.bytesAfter))")
            checks.expect(freedByCounting && collected.collected == 0, "reference counting freed the dropped circle")
            checks.expect(report.written == 1, "only the changed layer was written")
            checks.expect(try objects.store.get(droppedCircle) == nil, "the dropped circle is gone")
            checks.expect(try context.count(of: Circle.self) == 2, "two circles remain")
            var drawingObjects = 0
            for type in drawingTypes { drawingObjects += try context.count(of: type, includingSubclasses: false) }
            checks.expect(drawingObjects == 10, "ten objects of the drawing remain, all reachable")
            try objects.close()
        }

        // 4. The task model, declared with @Persistent, in the same store.
        try TaskDemo.run(at: path, options: options, checks: &checks)

        // 5. Reopen once more, verify and print statistics.
        do {
            let objects = try ObjectStore.open(at: path, options: options, types: drawingTypes)
            let context = objects.makeContext()
            let contents = try context.root(named: "main", as: Contents.self)
            let layer = contents?.pages.first?.layers.first
            checks.expect(layer?.shapes.count == 2, "after reopening the shared layer has two shapes")
            checks.expect(
                try objects.store.reachableObjectCount() == objects.store.count(), "every object is reachable")
            let statistics = try objects.store.statistics()
            try objects.close()
            let report = try Store.verify(at: path)
            for problem in report.problems { Console.error("  problem: \(problem)") }
            checks.expect(report.isSound, "verify found \(report.problems.count) problems")
            // The store holds the drawing's and the tasks' objects and the object layer's own records (field
            // names, the index catalog).
            let internalRecords =
                (statistics.countsByType[TypeNames.keyRecordTag] ?? 0)
                + (statistics.countsByType[TypeNames.indexCatalogTag] ?? 0)
            let userObjects = statistics.liveObjects - internalRecords
            let parts =
                "the drawing's and the tasks' \(userObjects) and \(plural(internalRecords, "internal record")) of "
                + "the object layer (its field and type names, its index catalog)"
            print(
                "  verify: \(report.isSound ? "sound" : "DAMAGED"): \(plural(report.segments, "segment")), "
                    + "\(plural(report.liveObjects, "live object")) checked: \(parts)")
            print(
                "  stats: \(plural(statistics.segments.count, "segment")), \(formatBytes(statistics.totalBytes)) "
                    + "(\(formatBytes(statistics.liveBytes)) live), \(plural(statistics.liveObjects, "live object")) "
                    + "by type name, with the engine's type tag (a hash of the name):")
            let named = (drawingTypes + taskTypes).map { ($0.typeName, TypeNames.tag(for: $0.typeName)) }
                .sorted { $0.0 < $1.0 }
            let layerRecords = [
                (TypeNames.keyRecordTypeName, TypeNames.keyRecordTag),
                (TypeNames.indexCatalogTypeName, TypeNames.indexCatalogTag),
            ]
            for (name, tag) in named + layerRecords {
                guard let count = statistics.countsByType[tag] else { continue }
                let note =
                    switch tag {
                    case TypeNames.keyRecordTag: " (internal: the object layer's field and type names)"
                    case TypeNames.indexCatalogTag: " (internal: the indexes the classes declare)"
                    default: ""
                    }
                print("    \(name) (tag \(tag)): \(count)\(note)")
            }
        }

        guard checks.failures == 0 else {
            Console.error("demo FAILED: \(checks.failures) checks failed")
            throw ExitCode(1)
        }
        print("demo passed")
    }

    /// Prints the graph as a tree, with each object's id; a layer met again is marked shared.
    private func printGraph(_ contents: Contents, _ context: ObjectContext) {
        func id(_ object: any PersistentObject) -> String { context.id(of: object).map { "#\($0)" } ?? "#?" }
        var seen: Set<ObjectIdentifier> = []
        print("    Contents \(id(contents))")
        for page in contents.pages {
            print("      Page \"\(page.title)\" \(id(page))")
            for layer in page.layers {
                let again = !seen.insert(ObjectIdentifier(layer)).inserted
                print("        Layer \"\(layer.name)\" \(id(layer))\(again ? " (shared: the same instance)" : "")")
                if again { continue }
                for shape in layer.shapes { print("          \(shape) \(id(shape))") }
            }
        }
    }
}
