import Foundation
import LogStore
@_spi(Engine) import LogStoreFormat
import LogStoreObjects
import TestSupport
import Testing

/// A hint file with a valid checksum but wrong entries may mislead the index of one session; the object
/// layer never deletes on what it says alone.
@Suite struct ForgedHintTests {
    /// Opens an object store in `directory` with small segments and no background compaction.
    func open(_ directory: TemporaryStore) throws -> ObjectStore {
        var options = StoreOptions(segmentSize: 1 << 16, fsyncPolicy: .never)
        options.compaction.background = false
        let objects = try ObjectStore.open(
            at: directory.path, options: options, types: allTestTypes, protocols: allTestProtocols)
        return directory.closesAtTeardown(objects) { try $0.close() }
    }

    /// A hint that gives a note the type tag of a node lists the note among the nodes; `deleteAll(of:)`
    /// reads each record's type, refuses, and deletes nothing.
    @Test func deleteAllNeverDeletesAnObjectOfAnotherType() throws {
        let directory = TemporaryStore("objects-forged-type-tag")
        let objects = try open(directory)
        let context = objects.makeContext()
        let note = try context.insert(Note())
        var nodes: [ObjectID] = []
        while directory.segmentFiles().count < 2 {
            for index in 0..<50 { nodes.append(try context.insert(Node(String(repeating: "n", count: 400 + index)))) }
            try context.save()
        }
        try objects.close()
        try directory.forgeHint(segment: 1) { entries in
            let node = try #require(entries.first { $0.kind == .put && $0.id == nodes[0].rawValue })
            let position = try #require(entries.firstIndex { $0.kind == .put && $0.id == note.rawValue })
            entries[position].typeTag = node.typeTag
        }

        let forged = try open(directory)
        #expect(forged.store.segmentsLoadedFromHints >= 1)
        let session = forged.makeContext()
        #expect(try session.ids(of: Node.self).contains(note))  // what the forged hint says
        #expect {
            try session.deleteAll(of: Node.self)
        } throws: { error in
            guard let error = error as? ObjectStoreError else { return false }
            return error.code == .typeMismatch && error.objectID == note
        }
        try session.save()
        #expect(try session.object(id: note, as: Note.self) != nil)
        try forged.close()

        try directory.deleteHints()
        let reopened = try open(directory)
        let check = reopened.makeContext()
        #expect(try check.object(id: note, as: Note.self)?.title == "groceries")
        #expect(try check.ids(of: Node.self) == nodes.sorted())
        try reopened.close()
    }
}
