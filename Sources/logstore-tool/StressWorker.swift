import Dispatch
import LogStore

/// One thread of `stress`: random puts, gets, overwrites that re-link references, deletes, root changes
/// and batches on objects and roots of its own, each read checked against its model of what it wrote.
///
/// Threads share the store and never each other's objects, so each model is exact: any difference
/// between a read and the model is an error.
struct StressWorker {
    /// What the model knows of an object: enough to make its payload again and check a read.
    struct Expected: Sendable {
        var version: UInt32
        var typeTag: UInt32
        var size: Int
        var references: [ObjectID]
    }

    /// The operations, for counts and latencies.
    enum Operation: String, CaseIterable, Sendable {
        case get, put, overwrite, delete, root, batch, collect
    }

    let thread: Int
    let store: Store
    private(set) var objects: [ObjectID: Expected] = [:]
    private(set) var roots: [String: ObjectID] = [:]
    private var incoming: [ObjectID: Int] = [:]
    private var ids: [ObjectID] = []
    /// Where each id is in `ids`, so a delete takes it out at once.
    private var positions: [ObjectID: Int] = [:]
    private var random: Xorshift
    private(set) var latencies: [Operation: LatencyHistogram] = [:]
    private(set) var errors: [String] = []
    /// Every object this thread deleted: reads of them must find nothing.
    private(set) var deleted: [ObjectID] = []
    private(set) var errorCount = 0

    init(thread: Int, store: Store, seed: UInt64) {
        self.thread = thread
        self.store = store
        self.random = Xorshift(seed: seed &+ UInt64(thread) &* 0x9E37_79B9_7F4A_7C15)
    }

    /// The payload of version `version` of `id`: JSON-like text naming both, then filler.
    static func payload(_ id: ObjectID, _ expected: Expected) -> [UInt8] {
        var bytes = Array("{\"id\":\(id.rawValue),\"version\":\(expected.version),\"kind\":\"stress\",\"v\":[".utf8)
        var generator = Xorshift(seed: id.rawValue &* 31 &+ UInt64(expected.version))
        while bytes.count < expected.size {
            bytes.append(contentsOf: Array("\(generator.next() % 1000),".utf8))
        }
        return Array(bytes.prefix(expected.size))
    }

    private mutating func fail(_ message: String) {
        errorCount += 1
        if errors.count < 20 { errors.append("thread \(thread): \(message)") }
    }

    /// Runs one random operation, timing it.
    mutating func step() {
        let roll = random.next() % 100
        let operation: Operation
        switch roll {
        case ..<40: operation = ids.isEmpty ? .put : .get
        case ..<60: operation = .put
        case ..<75: operation = ids.isEmpty ? .put : .overwrite
        case ..<83: operation = .delete
        case ..<90: operation = .root
        case ..<99: operation = .batch
        default: operation = thread == 0 && random.next() % 50 == 0 ? .collect : .get
        }
        let started = DispatchTime.now().uptimeNanoseconds
        switch operation {
        case .get: checkRandomObject()
        case .put, .overwrite, .batch:
            let count = operation == .batch ? 10 : 1
            writeObjects(count: count, overwriting: operation == .overwrite)
        case .delete: deleteRandomObject()
        case .root: changeRoot()
        case .collect:
            do { _ = try store.collectGarbage() } catch { fail("collectGarbage: \(error)") }
        }
        latencies[operation, default: LatencyHistogram()].record(DispatchTime.now().uptimeNanoseconds - started)
    }

    private mutating func randomID() -> ObjectID? {
        ids.isEmpty ? nil : ids[Int(random.next() % UInt64(ids.count))]
    }

    /// Checks `id` against the model.
    mutating func check(_ id: ObjectID, in store: Store) {
        guard let expected = objects[id] else { return }
        do {
            guard let record = try store.get(id) else { return fail("object \(id) is missing") }
            if record.typeTag != expected.typeTag || record.references != expected.references
                || record.payload != Self.payload(id, expected)
            {
                fail("object \(id) differs from version \(expected.version) written")
            }
        } catch {
            fail("get \(id): \(error)")
        }
    }

    private mutating func checkRandomObject() {
        if !deleted.isEmpty, random.next() % 8 == 0 {
            checkGone(deleted[Int(random.next() % UInt64(deleted.count))], in: store)
        } else if let id = randomID() {
            check(id, in: store)
        }
    }

    /// Checks that a deleted object stays deleted.
    mutating func checkGone(_ id: ObjectID, in store: Store) {
        do {
            if try store.get(id) != nil { fail("deleted object \(id) is back") }
        } catch {
            fail("get of deleted \(id): \(error)")
        }
    }

    /// Puts `count` objects in one batch: new ones, or new versions of existing ones (with new references,
    /// which re-links the graph).
    private mutating func writeObjects(count: Int, overwriting: Bool) {
        var batch = WriteBatch()
        var changes: [(ObjectID, Expected)] = []
        for _ in 0..<count {
            let reuse = overwriting || (count > 1 && random.next() % 3 == 0)
            let id = reuse ? randomID() ?? store.newID() : store.newID()
            guard !changes.contains(where: { $0.0 == id }) else { continue }
            let referenceCount = Int(random.next() % 4)
            let references = (0..<referenceCount).compactMap { _ in randomID() }.filter { $0 != id }
            let expected = Expected(
                version: (objects[id]?.version ?? 0) + 1, typeTag: 1 + UInt32(random.next() % 4),
                size: 16 + Int(random.next() % 1_000), references: references)
            batch.put(
                id, typeTag: expected.typeTag, references: references, payload: Self.payload(id, expected))
            changes.append((id, expected))
        }
        do {
            _ = try store.write(batch)
        } catch {
            return fail("write of \(changes.count) objects: \(error)")
        }
        for (id, expected) in changes {
            if let old = objects[id] {
                for target in old.references { incoming[target, default: 0] -= 1 }
            } else {
                positions[id] = ids.count
                ids.append(id)
            }
            for target in expected.references { incoming[target, default: 0] += 1 }
            objects[id] = expected
        }
    }

    /// Deletes an object that nothing refers to (the store refuses others, and says so).
    private mutating func deleteRandomObject() {
        guard let id = randomID() else { return }
        let referenced = incoming[id, default: 0] > 0 || roots.values.contains(id)
        do {
            try store.delete(id)
            if referenced { return fail("delete of \(id), still referenced, succeeded") }
        } catch {
            if !referenced || error.code != .stillReferenced { fail("delete \(id): \(error)") }
            return
        }
        for target in objects[id]?.references ?? [] { incoming[target, default: 0] -= 1 }
        objects[id] = nil
        incoming[id] = nil
        deleted.append(id)
        if let position = positions.removeValue(forKey: id) {
            let last = ids.removeLast()
            if position < ids.count {
                ids[position] = last
                positions[last] = position
            }
        }
    }

    /// Sets, moves or removes one of this thread's four roots, then checks them all.
    private mutating func changeRoot() {
        let name = "stress.\(thread).\(random.next() % 4)"
        do {
            if random.next() % 4 == 0 {
                try store.removeRoot(name)
                roots[name] = nil
            } else if let id = randomID() {
                try store.setRoot(name, to: id)
                roots[name] = id
            }
            for (name, id) in roots where try store.root(named: name) != id {
                fail("root \(name) is not \(id)")
            }
        } catch {
            fail("root \(name): \(error)")
        }
    }

    /// Checks every object and root of the model in `store` (at the end, after a reopen).
    mutating func checkAll(in store: Store) {
        for id in objects.keys.sorted(by: { $0.rawValue < $1.rawValue }) { check(id, in: store) }
        for id in deleted { checkGone(id, in: store) }
        do {
            for (name, id) in roots where try store.root(named: name) != id {
                fail("root \(name) is not \(id) after reopening")
            }
        } catch {
            fail("roots after reopening: \(error)")
        }
    }
}

/// A small deterministic generator (xorshift64*), so a run can be repeated from its seed.
struct Xorshift: Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed == 0 ? 0x2545_F491_4F6C_DD1D : seed }

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }
}
