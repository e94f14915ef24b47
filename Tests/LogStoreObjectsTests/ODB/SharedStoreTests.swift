import Foundation
import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// ODB tables and persistent objects in one store (`ODB(store: objects.store)`): both write, both read
/// after a reopen, and neither the collector, compaction nor the other layer's queries and deletes touch
/// the other's records.
@Suite struct SharedStoreTests {
    @Test func objectsAndTablesShareOneStore() throws {
        let directory = TemporaryStore("shared-store")
        let types: [any PersistentObject.Type] = [PlainLink.self]
        let linkID = try withObjects(directory, types: types) { objects in
            let odb = try ODB(store: objects.store)
            let context = objects.makeContext()
            let link = PlainLink()
            link.other = PlainLink()
            try context.setRoot(link, named: "link")
            try context.save()
            try odb.setValue("dark", at: ["settings", "theme"])
            try odb.setValue(3, at: ["settings", "window", "count"])
            #expect(try context.count() == 2, "the ODB's tables are not objects")
            #expect(try context.count(of: PlainLink.self) == 2)
            // Mark-sweep and compaction keep both: each is reachable from its own roots.
            _ = try objects.store.collectGarbage()
            _ = try objects.store.compact()
            #expect(try odb.value(at: ["settings", "window", "count"]) == .int(3))
            #expect(try objects.makeContext().root(named: "link", as: PlainLink.self)?.other != nil)
            #expect(try odb.verify().isEmpty)
            try odb.close()
            return try #require(context.id(of: link))
        }
        try withObjects(directory, types: types) { objects in
            let odb = try ODB(store: objects.store)
            #expect(try odb.value(at: ["settings", "theme"]) == .string("dark"))
            let context = objects.makeContext()
            #expect(try context.object(id: linkID, as: PlainLink.self)?.other != nil)
            // Each layer's deletes leave the other's records alone.
            #expect(try odb.delete(["settings"]))
            _ = try objects.store.collectGarbage()
            #expect(try context.count(of: PlainLink.self) == 2)
            try odb.setValue(true, at: ["kept"])
            try context.removeAll()
            try context.save()
            #expect(try context.count() == 0)
            #expect(try objects.store.root(named: "odb.root") != nil)
            _ = try objects.store.collectGarbage()
            #expect(try odb.value(at: ["kept"]) == .bool(true))
            #expect(try odb.verify().isEmpty)
            try odb.close()
        }
    }

    @Test func aSecondOpenOfTheSameFolderIsLocked() throws {
        let directory = TemporaryStore("shared-store-locked")
        _ = try withObjects(directory, types: [PlainLink.self]) { _ in
            #expect {
                _ = try ODB.open(at: directory.path)
            } throws: { error in
                ((error as? ODBError)?.underlying as? LogStoreError)?.code == .locked
            }
        }
    }
}
