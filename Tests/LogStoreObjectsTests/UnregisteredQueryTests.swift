import LogStore
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

/// A query by a persistent class left out of the object store's `types:` is an error, as an insert of
/// one is: its objects cannot be told from others, so 0 or an empty list would be a wrong answer.
@Suite struct UnregisteredQueryTests {
    func isUnregisteredClass(_ error: any Error) -> Bool {
        guard let error = error as? ObjectStoreError else { return false }
        return error.code == .unregisteredClass && error.typeName == Unregistered.typeName
            && error.message.contains("Unregistered is not registered")
    }

    @Test func queriesByAnUnregisteredClassThrowUnregisteredClass() throws {
        let directory = TemporaryStore("unregistered-query")
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            try context.insert(Node("stored"))
            try context.save()
            #expect(throws: ObjectStoreError.self) { _ = try context.count(of: Unregistered.self) }
            #expect { _ = try context.count(of: Unregistered.self) } throws: { isUnregisteredClass($0) }
            #expect { _ = try context.count(of: Unregistered.self, includingSubclasses: false) } throws: {
                isUnregisteredClass($0)
            }
            #expect { _ = try context.objects(of: Unregistered.self) } throws: { isUnregisteredClass($0) }
            #expect { _ = try context.ids(of: Unregistered.self) } throws: { isUnregisteredClass($0) }
            #expect { try context.deleteAll(of: Unregistered.self) } throws: { isUnregisteredClass($0) }
            #expect { _ = try context.keys(of: Unregistered.self) } throws: { isUnregisteredClass($0) }
            // Nothing was marked for deletion: the stored node stays.
            #expect(try context.save().written == 0)
            #expect(try context.count(of: Node.self) == 1)
        }
    }

    @Test func queriesByARegisteredClassOrAProtocolWithoutObjectsAreEmpty() throws {
        let directory = TemporaryStore("registered-query")
        try withObjects(directory) { objects throws in
            let context = objects.makeContext()
            #expect(try context.count(of: Node.self) == 0)
            #expect(try context.objects(of: Node.self).isEmpty)
            #expect(try context.count(of: (any Shape).self) == 0)
        }
    }
}
