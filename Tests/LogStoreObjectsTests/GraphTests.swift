import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// Cycles, shared nodes, deep chains, dictionaries of objects, identity, and garbage.
@Suite struct GraphTests {
    @Test func cyclesRoundTripAndAreCollectedWhenUnreachable() throws {
        let directory = TemporaryStore("cycles")
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            let a = Node("a")
            let b = Node("b")
            a.next = b
            b.next = a
            let selfish = Node("self")
            selfish.next = selfish
            selfish.links = [selfish, a]
            let ring = (0..<1_000).map { Node("ring \($0)") }
            for (index, node) in ring.enumerated() { node.next = ring[(index + 1) % ring.count] }
            try context.setRoot(a, named: "pair")
            try context.setRoot(selfish, named: "self")
            try context.setRoot(ring[0], named: "ring")
            try context.save()
        }
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            let a = try #require(try context.root(named: "pair", as: Node.self))
            let b = try #require(a.next)
            #expect(b.label == "b" && b.next === a)
            let selfish = try #require(try context.root(named: "self", as: Node.self))
            #expect(selfish.next === selfish && selfish.links[0] === selfish && selfish.links[1] === a)
            let start = try #require(try context.root(named: "ring", as: Node.self))
            var node = start
            for step in 1...1_000 {
                node = try #require(node.next)
                if step < 1_000 { #expect(node !== start) }
            }
            #expect(node === start, "the ring closes on the same instance")
            #expect(try context.count(of: Node.self) == 1_003)

            // Unreachable cycles are garbage: the pair once "self" no longer refers to it, and the ring.
            selfish.links = [selfish]
            context.removeRoot(named: "pair")
            context.removeRoot(named: "ring")
            try context.save()
            let collected = try objects.store.collectGarbage()
            #expect(collected.collected == 1_002)
            _ = try objects.store.compact()
            #expect(try context.count(of: Node.self) == 1)
        }
    }

    @Test func longChainsLoadWithoutRecursion() throws {
        let directory = TemporaryStore("chain")
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            let head = Node("0")
            var tail = head
            for index in 1..<20_000 {
                let node = Node("\(index)")
                tail.next = node
                tail = node
            }
            try context.setRoot(head, named: "chain")
            #expect(try context.save().written == 20_000)
            let fresh = objects.makeContext()
            var node = try #require(try fresh.root(named: "chain", as: Node.self))
            var count = 1
            while let next = node.next {
                node = next
                count += 1
            }
            #expect(count == 20_000 && node.label == "19999")
            // Releasing a 20,000-node chain at once deinitializes it recursively (Swift releases `next`
            // inside each node's deinit), deep enough to overflow a thread's stack under the thread
            // sanitizer: take both chains apart one link at a time.
            for start in [head, try #require(try fresh.root(named: "chain", as: Node.self))] {
                var link: Node? = start
                while let current = link {
                    link = current.next
                    current.next = nil
                }
            }
        }
    }

    @Test func dictionariesOfObjectsAndIdentity() throws {
        let directory = TemporaryStore("bag")
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            let shared = Node("shared")
            let bag = Bag(items: ["x": shared, "y": shared, "z": Node("z")])
            try context.setRoot(bag, named: "bag")
            try context.save()
            let fresh = objects.makeContext()
            let loaded = try #require(try fresh.root(named: "bag", as: Bag.self))
            #expect(loaded.items.keys.sorted() == ["x", "y", "z"])
            #expect(loaded.items["x"] === loaded.items["y"])
            #expect(loaded.items["z"]?.label == "z")
            #expect(try fresh.save().written == 0, "a reloaded dictionary of references encodes the same")
            let sharedNode = try #require(loaded.items["x"])
            let sharedID = try #require(fresh.id(of: sharedNode))
            #expect(try fresh.object(id: sharedID, as: Node.self) === loaded.items["x"])
            #expect(try fresh.object(id: sharedID, as: Node.self) === fresh.object(id: sharedID, as: Node.self))
            // A different context has its own instances.
            #expect(try objects.makeContext().object(id: sharedID, as: Node.self) !== loaded.items["x"])
        }
    }

    @Test func identityCacheKeepsTheCodableObjectsItHandedOut() throws {
        let directory = TemporaryStore("weak")
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            let id = try context.insert(Node("kept"))
            try context.save()
            #expect(context.isLoaded(id), "a Codable object does not report changes: the context keeps it")
            weak var first: Node?
            first = try context.object(id: id, as: Node.self)
            #expect(first != nil)
            let other = objects.makeContext()
            weak var loaded: Node?
            loaded = try other.object(id: id, as: Node.self)
            #expect(loaded != nil && other.isLoaded(id))
            loaded?.label = "changed, not held by the caller"
            try other.save()
            #expect(try objects.makeContext().object(id: id, as: Node.self)?.label == "changed, not held by the caller")
        }
    }

    @Test func valueTypesRoundTrip() throws {
        let directory = TemporaryStore("values")
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            let note = Note()
            note.optionalText = "set"
            let id = try context.insert(note)
            let other = Note()
            other.kind = .reminder(at: other.created)
            let otherID = try context.insert(other)
            try context.save()
            let fresh = objects.makeContext()
            let loaded = try #require(try fresh.object(id: id, as: Note.self))
            #expect(loaded.title == note.title && loaded.created == note.created && loaded.data == note.data)
            #expect(loaded.identifier == note.identifier && loaded.link == note.link)
            #expect(loaded.counts == note.counts && loaded.tags == note.tags && loaded.flags == note.flags)
            #expect(loaded.optionalText == "set" && loaded.nested == note.nested && loaded.kind == note.kind)
            #expect(loaded.amount == note.amount)
            #expect(try fresh.object(id: otherID, as: Note.self)?.kind == .reminder(at: other.created))
            #expect(try fresh.object(id: otherID, as: Note.self)?.optionalText == nil)
            #expect(try fresh.save().written == 0, "dictionaries and sets encode the same way every time")
        }
    }
}

/// A parent holding its children in a wrapper field, each child pointing back through a plain field.
final class Folder: PersistentObject {
    static let typeName = "test.Folder"
    var name: String
    @ObjectList var files: [File]
    init(name: String) { self.name = name }
}

final class File: PersistentObject {
    static let typeName = "test.File"
    var name: String
    var folder: Folder
    init(name: String, folder: Folder) {
        self.name = name
        self.folder = folder
    }
}

@Suite struct BackPointerTests {
    @Test func cycleWithPlainBackPointerLoadsFromEitherEnd() throws {
        let directory = TemporaryStore("back-pointer")
        let types: [any PersistentObject.Type] = [Folder.self, File.self]
        let ids = try withObjects(directory, types: types) { objects in
            let context = objects.makeContext()
            let folder = Folder(name: "docs")
            folder.files = [File(name: "a", folder: folder), File(name: "b", folder: folder)]
            try context.setRoot(folder, named: "folder")
            try context.save()
            return (folder: try #require(context.id(of: folder)), file: try #require(context.id(of: folder.files[1])))
        }
        try withObjects(directory, types: types) { objects in
            let folder = try #require(try objects.makeContext().object(id: ids.folder, as: Folder.self))
            #expect(folder.files.map(\.name) == ["a", "b"])
            #expect(folder.files.allSatisfy { $0.folder === folder })
            let file = try #require(try objects.makeContext().object(id: ids.file, as: File.self))
            #expect(file.folder.files.map(\.name) == ["a", "b"] && file.folder.files[1] === file)
        }
    }
}
