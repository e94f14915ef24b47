import Foundation
import LogStoreObjects
import Testing

/// A user's `import LogStoreObjects` is enough: this target depends on `LogStoreObjects` alone and
/// imports nothing else of the package, yet names every engine type the object layer's API uses.
@Suite struct ImportTests {
    final class Entry: PersistentObject {
        static let typeName = "import.Entry"
        var title = ""
        init() {}
    }

    @Test func theObjectLayersAPIAndTheEngineTypesItUsesNeedOneImport() throws {
        let path = FileManager.default.temporaryDirectory.path + "/logstore-import-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let options = StoreOptions(fsyncPolicy: FsyncPolicy.never)
        let objects = try ObjectStore.open(at: path, options: options, types: [Entry.self])
        let report: RecoveryReport? = objects.recovery
        #expect(report == nil)
        let context = objects.makeContext()
        let id: ObjectID = try context.insert(Entry())
        try context.save()
        let store: Store = objects.store
        #expect(try store.contains(id))
        let odb = try ODB(store: store)
        try odb.setValue("one import", at: ["note"])
        #expect(try odb.value(at: ["note"], as: String.self) == "one import")
        do {
            _ = try ODB.open(at: path)
            Issue.record("a second open of the folder must be refused")
        } catch {
            let engineError = error.underlying as? LogStoreError
            #expect(engineError?.code == LogStoreError.Code.locked)
        }
        try odb.close()
        try objects.close()
    }
}
