import LogStore
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

/// Reading on a background task and handing the results to the main actor.
@Suite struct ObjectConcurrencyTests {
    @MainActor
    @Test func backgroundReadHandsIDsToMainActor() async throws {
        let directory = TemporaryStore("main-actor")
        let objects = try openObjects(directory)
        let context = objects.makeContext()
        try context.setRoot(Drawing().contents, named: "main")
        try context.save()

        // A background task reads with its own context and returns Sendable ids and values.
        let found: [(ObjectID, Double)] = try await Task.detached {
            let background = objects.makeContext()
            return try background.objects(of: Rectangle.self).map { rectangle in
                (try #require(background.id(of: rectangle)), rectangle.area)
            }
        }.value
        #expect(found.count == 2)

        // The main actor loads the same ids in its context: its own instances, with the same values.
        let mainContext = objects.makeContext()
        for (id, area) in found {
            let rectangle = try #require(try mainContext.object(id: id, as: Rectangle.self))
            #expect(rectangle.area == area)
        }

        // Several contexts saving at once from tasks.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    let taskContext = objects.makeContext()
                    for index in 0..<20 {
                        try taskContext.put(Circle(center: Point(x: Double(task), y: 0), radius: Double(index)))
                        try taskContext.save()
                    }
                }
            }
            try await group.waitForAll()
        }
        // The main context reads the snapshot of its first load until it moves on.
        #expect(try mainContext.count(of: Circle.self) == 3)
        try mainContext.refresh()
        #expect(try mainContext.count(of: Circle.self) == 3 + 80)
        try objects.close()
    }
}
