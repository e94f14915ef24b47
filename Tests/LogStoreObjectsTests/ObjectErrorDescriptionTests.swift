import Foundation
import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// Object-layer errors describe themselves to Foundation (`localizedDescription`) as they do to
/// `print`: code, message, type, field and object, and an engine error's file and offset.
@Suite struct ObjectErrorDescriptionTests {
    @Test func anObjectStoreErrorsLocalizedDescriptionIsItsDescription() throws {
        let directory = TemporaryStore("error-text")
        try withObjects(directory) { objects in
            let error = try #require(throws: ObjectStoreError.self) {
                try objects.makeContext().insert(Unregistered())
            }
            let bridged: any Error = error
            #expect(bridged.localizedDescription == error.description)
            #expect(bridged.localizedDescription.contains(error.message))
            #expect(bridged.localizedDescription.hasPrefix("unregisteredClass: "))
        }
    }

    @Test func aWrappedEngineErrorNamesItsFileAndOffset() {
        let engine = LogStoreError(.corruptFrame, "checksum mismatch", file: "/data/0000000001.seg", offset: 92)
        let bridged: any Error = ObjectStoreError(.store, engine.description, underlying: engine)
        #expect(bridged.localizedDescription.contains("checksum mismatch [/data/0000000001.seg @ 92]"))
    }
}
