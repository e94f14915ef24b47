import Foundation
import LogStoreExamples
import LogStorePersistent
import Synchronization
import TestSupport
import Testing

/// Stores written through hand-written `FieldCodable` classes (and through plain `Codable`) read through
/// `@Persistent` ones and back: the macro writes the same bytes.
@Suite struct InteropTests {
    private func open(
        _ directory: TemporaryStore, _ types: [any PersistentObject.Type], fieldCoding: Bool = true
    ) throws -> ObjectStore {
        try ObjectStore.open(
            at: directory.path, options: StoreOptions(segmentSize: 1 << 20, fsyncPolicy: .never), types: types,
            tuning: ObjectStoreTuning(usesFieldCoding: fieldCoding))
    }

    private func handWrittenDrawing() -> LogStoreExamples.Contents {
        let background = LogStoreExamples.Layer(
            name: "background",
            shapes: [
                LogStoreExamples.Circle(center: LogStoreExamples.Point(x: 1, y: 2), radius: 3),
                LogStoreExamples.Rectangle(
                    origin: LogStoreExamples.Point(x: 0, y: 0), size: LogStoreExamples.Size(width: 10, height: 20)),
            ])
        return LogStoreExamples.Contents(pages: [
            LogStoreExamples.Page(title: "one", layers: [background]),
            LogStoreExamples.Page(title: "two", layers: [background]),
        ])
    }

    private func macroDrawing() -> MacroContents {
        let background = MacroLayer(
            name: "background",
            shapes: [
                MacroCircle(center: LogStoreExamples.Point(x: 1, y: 2), radius: 3),
                MacroRectangle(
                    origin: LogStoreExamples.Point(x: 0, y: 0), size: LogStoreExamples.Size(width: 10, height: 20)),
            ])
        return MacroContents(pages: [
            MacroPage(title: "one", layers: [background]), MacroPage(title: "two", layers: [background]),
        ])
    }

    /// Every record of the store: type tag, references and payload, by id.
    private func records(_ objects: ObjectStore) throws -> [ObjectID: String] {
        var result: [ObjectID: String] = [:]
        for id in try objects.store.ids() {
            guard let record = try objects.store.get(id) else { continue }
            result[id] = "\(record.typeTag) \(record.references) \(Array(record.payload))"
        }
        return result
    }

    @Test func theMacroWritesTheSameRecordsAsHandWrittenFieldCoding() throws {
        let handDirectory = TemporaryStore("interop-hand")
        let macroDirectory = TemporaryStore("interop-macro")
        let hand = try open(handDirectory, drawingTypes)
        let macro = try open(macroDirectory, macroDrawingTypes)
        let handContext = hand.makeContext()
        try handContext.setRoot(handWrittenDrawing(), named: "main")
        try handContext.save()
        let macroContext = macro.makeContext()
        try macroContext.setRoot(macroDrawing(), named: "main")
        try macroContext.save()
        let handRecords = try records(hand)
        #expect(handRecords.count == 7)
        #expect(try records(macro) == handRecords)
        try hand.close()
        try macro.close()
    }

    @Test func aHandWrittenStoreReadsThroughTheMacroAndBack() throws {
        let directory = TemporaryStore("interop-both-ways")
        var objects = try open(directory, drawingTypes)
        let context = objects.makeContext()
        try context.setRoot(handWrittenDrawing(), named: "main")
        try context.save()
        try objects.close()

        objects = try open(directory, macroDrawingTypes)
        let macroContext = objects.makeContext()
        let contents = try #require(try macroContext.root(named: "main", as: MacroContents.self))
        #expect(contents.pages.map(\.title) == ["one", "two"])
        #expect(contents.pages[0].layers[0] === contents.pages[1].layers[0])
        let circle = try #require(contents.pages[0].layers[0].shapes[0] as? MacroCircle)
        #expect(circle.radius == 3 && circle.center == LogStoreExamples.Point(x: 1, y: 2))
        circle.radius = 4
        contents.pages[1].title = "two, edited"
        #expect(try macroContext.save().written == 2)
        try objects.close()

        for fieldCoding in [true, false] {
            objects = try open(directory, drawingTypes, fieldCoding: fieldCoding)
            let back = try #require(try objects.makeContext().root(named: "main", as: LogStoreExamples.Contents.self))
            #expect(back.pages.map(\.title) == ["one", "two, edited"])
            #expect((back.pages[0].layers[0].shapes[0] as? LogStoreExamples.Circle)?.radius == 4)
            #expect(
                (back.pages[0].layers[0].shapes[1] as? LogStoreExamples.Rectangle)?.size
                    == LogStoreExamples.Size(width: 10, height: 20))
            try objects.close()
        }
    }

    @Test func aStoreWrittenThroughCodableOnlyReadsThroughTheMacro() throws {
        let directory = TemporaryStore("interop-codable")
        var objects = try open(directory, drawingTypes, fieldCoding: false)
        let context = objects.makeContext()
        try context.setRoot(handWrittenDrawing(), named: "main")
        try context.save()
        try objects.close()
        objects = try open(directory, macroDrawingTypes)
        let contents = try #require(try objects.makeContext().root(named: "main", as: MacroContents.self))
        #expect(contents.pages[0].layers[0].shapes.map(\.description).count == 2)
        #expect(
            (contents.pages[0].layers[0].shapes[1] as? MacroRectangle)?.origin == LogStoreExamples.Point(x: 0, y: 0))
        try objects.close()
    }
}

/// `update` on a `@Persistent` counter: 8 threads × 25 increments, every commit synced, all land.
@Suite struct PersistentCounterTests {
    @Persistent("test.ModelCounter") final class ModelCounter {
        var value: Int = 0
    }

    @Test func eightThreadsOfTwentyFiveIncrementsEndAtTwoHundred() throws {
        let directory = TemporaryStore("persistent-counter")
        var options = StoreOptions(segmentSize: 1 << 20)
        options.compaction.background = false
        #expect(options.fsyncPolicy == .always)
        let objects = try ObjectStore.open(at: directory.path, options: options, types: [ModelCounter.self])
        directory.closesAtTeardown(objects) { try $0.close() }
        let setup = objects.makeContext()
        let id = try setup.insert(ModelCounter())
        try setup.save()
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<25 {
                do {
                    try objects.update(attempts: 100) { context in
                        try context.object(id: id, as: ModelCounter.self)?.value += 1
                    }
                } catch {
                    failures.withLock { $0 += 1 }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(try objects.makeContext().object(id: id, as: ModelCounter.self)?.value == 200)
        try objects.close()
    }
}
