import LogStore
import LogStoreObjects
import Testing

@Suite struct SmokeTests {
    @Test func circleRoundTrip() throws {
        let directory = TemporaryDirectory()
        let id = try withObjects(directory) { objects in
            let context = objects.makeContext()
            let circle = Circle(center: Point(x: 1, y: 2), radius: 3)
            let id = try context.insert(circle)
            try context.save()
            let payload = try #require(try objects.store.get(id)).payload
            #expect(payload.count <= 40, "payload \(payload)")
            return id
        }
        try withObjects(directory) { objects in
            let circle = try #require(try objects.makeContext().object(id: id, as: Circle.self))
            #expect(circle.center == Point(x: 1, y: 2))
            #expect(circle.radius == 3)
        }
    }
}
