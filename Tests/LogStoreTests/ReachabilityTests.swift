import Foundation
import LogStoreExamples
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Reference counting, mark-sweep and referential integrity, checked against reachability computed here.
@Suite struct ReachabilityTests {
    struct Node: Equatable {
        var references: [ObjectID]
        var pinned: Bool
        var payload: [UInt8]
    }

    /// A plain in-memory model of the graph and its roots.
    struct Model {
        var nodes: [ObjectID: Node] = [:]
        var roots: [String: ObjectID] = [:]

        func reachable() -> Set<ObjectID> {
            var marked = Set<ObjectID>()
            var work = Array(roots.values) + nodes.filter { $0.value.pinned }.map(\.key)
            while let id = work.popLast() {
                guard let node = nodes[id], marked.insert(id).inserted else { continue }
                work.append(contentsOf: node.references)
            }
            return marked
        }

        /// Whether a root or another live node refers to `id`.
        func isReferenced(_ id: ObjectID) -> Bool {
            roots.values.contains(id) || nodes.contains { $0.key != id && $0.value.references.contains(id) }
        }
    }

    func options() -> StoreOptions {
        var options = testOptions(segmentSize: 1 << 16)
        options.compaction.background = false
        return options
    }

    /// Checks the store against the model; drops from the model what the store collected, after
    /// checking that all of it was unreachable.
    func sync(_ store: Store, _ model: inout Model, _ context: String) throws {
        let live = Set(try store.ids())
        let reachable = model.reachable()
        #expect(reachable.isSubset(of: live), "\(context): reachable objects were collected")
        for id in Set(model.nodes.keys).subtracting(live) {
            #expect(!reachable.contains(id), "\(context): \(id) collected while reachable")
            model.nodes[id] = nil
        }
        #expect(live.isSubset(of: Set(model.nodes.keys)), "\(context): objects the model does not know")
        for (id, node) in model.nodes {
            let record = try store.get(id)
            #expect(record?.references == node.references && record?.payload == node.payload, "\(context): \(id)")
            #expect(record?.isPinned == node.pinned, "\(context): pin of \(id)")
        }
        #expect(try store.roots() == model.roots, "\(context)")
        for id in model.nodes.keys {
            let referrers = model.nodes.filter { $0.value.references.contains(id) }.map(\.key).sorted()
            #expect(try store.referrers(of: id) == referrers, "\(context): referrers of \(id)")
        }
        #expect(store.auditReferenceCounts().isEmpty, "\(context): \(store.auditReferenceCounts().prefix(3))")
    }

    @Test(arguments: [1, 2, 3])
    func randomGraphsKeepExactlyTheReachableObjects(round: UInt64) throws {
        let seed = testSeed("ReachabilityTests", default: round)
        var random = SplitMix64(seed: seed)
        let directory = TemporaryStore("gc-model")
        var store = try directory.open(options: options())
        var model = Model()
        func pick() -> ObjectID? {
            let ids = model.nodes.keys.sorted()
            return ids.isEmpty ? nil : ids[Int(random.next() % UInt64(ids.count))]
        }
        func someReferences(max: UInt64 = 3) -> [ObjectID] {
            (0..<Int(random.next() % (max + 1))).compactMap { _ in pick() }
        }
        for step in 0..<500 {
            let context = "seed \(seed) step \(step)"
            switch random.next() % 12 {
            case 0, 1:  // a pinned object
                let id = store.newID()
                let node = Node(
                    references: someReferences(), pinned: true, payload: payloadBytes(50, seed: random.next()))
                try store.put(id, typeTag: 1, references: node.references, payload: node.payload, pinned: true)
                model.nodes[id] = node
            case 2, 3, 4:  // unpinned children hung under a live parent, maybe as a cycle
                guard let parent = pick(), var parentNode = model.nodes[parent] else { continue }
                let first = store.newID()
                let second = store.newID()
                let cycle = random.next() % 2 == 0
                let firstNode = Node(references: cycle ? [second] : someReferences(), pinned: false, payload: [1])
                let secondNode = Node(references: [first], pinned: false, payload: [2])
                parentNode.references.append(first)
                try store.write { batch in
                    batch.put(
                        first, typeTag: 2, references: firstNode.references, payload: firstNode.payload, pinned: false)
                    batch.put(
                        second, typeTag: 2, references: secondNode.references, payload: secondNode.payload,
                        pinned: false)
                    batch.put(
                        parent, typeTag: 1, references: parentNode.references, payload: parentNode.payload,
                        pinned: parentNode.pinned)
                }
                model.nodes[first] = firstNode
                model.nodes[second] = secondNode
                model.nodes[parent] = parentNode
            case 5, 6:  // re-link (and sometimes unpin) a live object
                guard let id = pick(), var node = model.nodes[id] else { continue }
                node.references = someReferences()
                if random.next() % 4 == 0 { node.pinned.toggle() }
                try store.put(id, typeTag: 1, references: node.references, payload: node.payload, pinned: node.pinned)
                model.nodes[id] = node
            case 7:
                let name = "root-\(random.next() % 4)"
                if random.next() % 2 == 0, let id = pick() {
                    try store.setRoot(name, to: id)
                    model.roots[name] = id
                } else {
                    try store.removeRoot(name)
                    model.roots[name] = nil
                }
            case 8:
                guard let id = pick() else { continue }
                let referrers = model.nodes.filter { $0.value.references.contains(id) }.map(\.key).sorted()
                #expect(try store.referrers(of: id) == referrers, "\(context): referrers of \(id)")
                let others = referrers.filter { $0 != id }
                if others.count >= 2, !model.roots.values.contains(id), let first = others.first,
                    let node = model.nodes[first]
                {
                    // A refused batch that also drops one referrer's reference: after it, both referrers
                    // are still listed.
                    #expect(throws: LogStoreError.self, "\(context)") {
                        try store.write { batch in
                            batch.put(
                                first, typeTag: 1, references: node.references.filter { $0 != id },
                                payload: node.payload,
                                pinned: node.pinned)
                            batch.delete(id)
                        }
                    }
                    #expect(try store.referrers(of: id) == referrers, "\(context): referrers after a refused batch")
                }
                if model.isReferenced(id) {
                    let error = #expect(throws: LogStoreError.self, "\(context)") { try store.delete(id) }
                    // The error names a root, or an object that does refer to it.
                    if !model.roots.values.contains(id) {
                        let named = error?.objects.dropFirst().first
                        #expect(
                            named.map { referrers.contains($0) && $0 != id } == true,
                            "\(context): \(String(describing: error))")
                    }
                } else {
                    try store.delete(id)
                    model.nodes[id] = nil
                }
            case 9:
                try store.collectGarbage()
                try sync(store, &model, context)
                #expect(Set(try store.ids()) == model.reachable(), "\(context): garbage left after mark-sweep")
            case 10:
                try store.compact()
            default:
                try store.close()
                store = try directory.open(options: options())
            }
            try sync(store, &model, context)
        }
        try store.collectGarbage()
        try store.compact()
        try sync(store, &model, "end")
        #expect(Set(try store.ids()) == model.reachable())
        try store.close()
        #expect(try Store.verify(at: directory.path).isSound)
    }

    @Test func danglingReferencesAndDeletesOfReferencedObjectsAreRefused() throws {
        let directory = TemporaryStore("gc-integrity")
        let store = try directory.open(options: options())
        let target = try store.put(typeTag: 1, payload: [1])
        let referrer = try store.put(typeTag: 1, references: [target], payload: [2])
        func code(_ body: () throws -> Void) -> LogStoreError.Code? {
            do {
                try body()
                return nil
            } catch {
                return (error as? LogStoreError)?.code
            }
        }
        #expect(code { try store.put(typeTag: 1, references: [store.newID()], payload: []) } == .danglingReference)
        #expect(code { try store.setRoot("r", to: store.newID()) } == .danglingReference)
        var error: LogStoreError?
        do { try store.delete(target) } catch let caught { error = caught }
        #expect(error?.code == .stillReferenced)
        #expect(error?.message.contains("object \(referrer)") == true)
        #expect(error?.objects == [target, referrer])
        let missing = store.newID()
        var dangling: LogStoreError?
        do { try store.put(referrer, typeTag: 1, references: [missing], payload: []) } catch let caught {
            dangling = caught
        }
        #expect(dangling?.code == .danglingReference && dangling?.objects == [missing, referrer])
        try store.setRoot("main", to: referrer)
        #expect(code { try store.delete(referrer) } == .stillReferenced)
        // A refused batch changes nothing.
        let before = try store.ids()
        var batch = WriteBatch()
        batch.put(store.newID(), typeTag: 1, payload: [9])
        batch.delete(target)
        #expect(code { try store.write(batch) } == .stillReferenced)
        #expect(try store.ids() == before)
        #expect(store.auditReferenceCounts().isEmpty)
        try store.close()
    }

    /// Batches that only put new objects take a path without an undo log: their counts, refusals and
    /// the fallback for other orders must match the general path.
    @Test func batchesOfNewObjectsCountReferencesLikeAnyOtherBatch() throws {
        let directory = TemporaryStore("gc-new-objects")
        let store = try directory.open(options: options())
        let old = try store.put(typeTag: 1, payload: [1])
        let ids = (0..<4).map { _ in store.newID() }
        var batch = WriteBatch()
        // A forward reference, a self-reference, a duplicate reference and an older object.
        batch.put(ids[0], typeTag: 2, references: [ids[3], old, old], payload: [0], pinned: false)
        batch.put(ids[1], typeTag: 2, references: [ids[1], ids[0]], payload: [1], pinned: false)
        batch.put(ids[2], typeTag: 2, references: [ids[1]], payload: [2])
        batch.put(ids[3], typeTag: 2, payload: [3], pinned: false)
        try store.write(batch)
        #expect(store.auditReferenceCounts().isEmpty)
        #expect(throws: LogStoreError.self) { try store.delete(old) }
        #expect(throws: LogStoreError.self) { try store.delete(ids[3]) }

        // Refused: a reference to an object that is not live; nothing of the batch is applied.
        let before = try store.ids()
        var dangling = WriteBatch()
        let fresh = store.newID()
        dangling.put(fresh, typeTag: 2, references: [old], payload: [])
        dangling.put(store.newID(), typeTag: 2, references: [store.newID()], payload: [])
        do {
            try store.write(dangling)
            Issue.record("a dangling reference was accepted")
        } catch {
            #expect(error.code == .danglingReference)
        }
        #expect(try store.ids() == before)
        #expect(store.auditReferenceCounts().isEmpty)

        // Ids out of order, and an id put twice, go the general way and count the same.
        let (x, y) = (store.newID(), store.newID())
        var unordered = WriteBatch()
        unordered.put(y, typeTag: 3, references: [x], payload: [])
        unordered.put(x, typeTag: 3, references: [old], payload: [])
        unordered.put(y, typeTag: 3, references: [x, x], payload: [])
        try store.write(unordered)
        #expect(store.auditReferenceCounts().isEmpty)

        // New objects in decreasing id order under a new root name (the fast path): the root counts.
        let (p, q) = (store.newID(), store.newID())
        var rooted = WriteBatch()
        rooted.put(q, typeTag: 4, references: [p], payload: [], pinned: false)
        rooted.put(p, typeTag: 4, references: [old], payload: [], pinned: false)
        rooted.setRoot("graph", to: q)
        try store.write(rooted)
        #expect(store.auditReferenceCounts().isEmpty)
        #expect(throws: LogStoreError.self) { try store.delete(p) }
        // Moving an existing root (the general path) frees the unpinned graph it held at once; a root
        // name set twice in one batch goes the general way too.
        let r = store.newID()
        var moved = WriteBatch()
        moved.put(r, typeTag: 4, payload: [], pinned: false)
        moved.setRoot("graph", to: r)
        moved.setRoot("second", to: q)
        moved.setRoot("second", to: r)
        try store.write(moved)
        #expect(try !store.contains(q) && !store.contains(p))
        #expect(try store.roots() == ["graph": r, "second": r])
        #expect(store.auditReferenceCounts().isEmpty)

        // Dropping the pinned referrer leaves the self-referencing object to mark-sweep, which frees it
        // and what only it kept alive.
        try store.delete(ids[2])
        #expect(try store.contains(ids[1]))
        #expect(try store.collectGarbage().collected == 3)
        #expect(try !store.contains(ids[1]) && !store.contains(ids[0]) && !store.contains(ids[3]))
        #expect(store.auditReferenceCounts().isEmpty)
        try store.close()
        let reopened = try directory.open(options: options())
        #expect(reopened.auditReferenceCounts().isEmpty)
        #expect(try Set(reopened.ids()) == [old, x, y, r])
        try reopened.close()
    }

    @Test func countsFreeChainsAtOnceAndMarkSweepFreesCycles() throws {
        let directory = TemporaryStore("gc-cycles")
        let store = try directory.open(options: options())
        let holder = try store.put(typeTag: 1, payload: [0])

        // A chain hanging from a root goes as soon as the root goes (counting, cascading).
        var chain: [ObjectID] = []
        try store.write { batch in
            for index in 0..<100 {
                let id = store.newID()
                batch.put(
                    id, typeTag: 2, references: chain.last.map { [$0] } ?? [], payload: [UInt8(index)], pinned: false)
                chain.append(id)
            }
            if let head = chain.last { batch.setRoot("chain", to: head) }
        }
        try store.removeRoot("chain")
        #expect(try chain.allSatisfy { try !store.contains($0) })
        #expect(try store.statistics().collectedByCounting == chain.count)

        // Cycles: a pair, a ring of 1,000 and a self-reference, each hung under `holder` and dropped.
        let a = store.newID()
        let b = store.newID()
        let selfish = store.newID()
        var ring: [ObjectID] = (0..<1000).map { _ in store.newID() }
        try store.write { batch in
            batch.put(a, typeTag: 3, references: [b], payload: [], pinned: false)
            batch.put(b, typeTag: 3, references: [a], payload: [], pinned: false)
            batch.put(selfish, typeTag: 3, references: [selfish], payload: [], pinned: false)
            for (index, id) in ring.enumerated() {
                batch.put(id, typeTag: 4, references: [ring[(index + 1) % ring.count]], payload: [], pinned: false)
            }
            batch.put(holder, typeTag: 1, references: [a, selfish, ring[0]], payload: [0])
        }
        try store.put(holder, typeTag: 1, payload: [0])  // drops every cycle
        let cycles = [a, b, selfish] + ring
        #expect(try cycles.allSatisfy { try store.contains($0) }, "counting alone cannot free cycles")
        let report = try store.collectGarbage()
        #expect(report.collected == cycles.count)
        #expect(try cycles.allSatisfy { try !store.contains($0) })
        #expect(try store.contains(holder))
        #expect(store.auditReferenceCounts().isEmpty)
        ring.removeAll()
        try store.close()
        let reopened = try directory.open(options: options())
        #expect(try reopened.ids() == [holder])
        try reopened.close()
    }

    @Test func anObjectRelinkedDuringMarkSweepSurvives() throws {
        let directory = TemporaryStore("gc-race")
        let store = try directory.open(options: options())
        let holder = try store.put(typeTag: 1, payload: [0])
        let a = store.newID()
        let b = store.newID()
        try store.write { batch in
            batch.put(a, typeTag: 3, references: [b], payload: [1], pinned: false)
            batch.put(b, typeTag: 3, references: [a], payload: [2], pinned: false)
            batch.put(holder, typeTag: 1, references: [a], payload: [0])
        }
        try store.put(holder, typeTag: 1, payload: [0])  // the cycle is garbage now
        let snapshot = store.takeSnapshot(recordingChanges: true)
        try store.put(holder, typeTag: 1, references: [a], payload: [0])  // re-linked after the snapshot
        let report = try store.sweep(snapshot)
        #expect(report.spared == 2)
        #expect(report.collected == 0)
        #expect(try store.get(b)?.payload == [2])
        try store.put(holder, typeTag: 1, payload: [0])
        #expect(try store.collectGarbage().collected == 2)
        try store.close()
    }

    @Test func markSweepRunsBesideWritersThatRelinkConstantly() throws {
        let directory = TemporaryStore("gc-concurrent")
        let store = try directory.open(options: options())
        let stop = Atomic<Bool>(false)
        let failures = Shared<[String]>([])
        let passes = Atomic<Int>(0)
        let holders = try (0..<2).map { _ in try store.put(typeTag: 1, payload: [0]) }
        let group = ThreadGroup()
        group.start(2) { writer in
            let holder = holders[writer]
            var random = SplitMix64(seed: 7 + UInt64(writer))
            var kept: [ObjectID] = []
            while !stop.load(ordering: .relaxed) {
                // Hang a fresh cycle under the holder, keep a few old ones, drop the rest.
                let first = store.newID()
                let second = store.newID()
                if kept.count > 4 { kept.removeFirst(Int(random.next() % 3) + 1) }
                kept.append(first)
                do {
                    try store.write { batch in
                        batch.put(first, typeTag: 2, references: [second], payload: [1], pinned: false)
                        batch.put(second, typeTag: 2, references: [first], payload: [2], pinned: false)
                        batch.put(holder, typeTag: 1, references: kept, payload: [0])
                    }
                    for id in kept where try store.get(id)?.payload != [1] {
                        failures.withLock { $0.append("kept object \(id) lost") }
                    }
                } catch {
                    failures.withLock { $0.append("write: \(error)") }
                    return
                }
            }
        }
        group.start(1) { _ in
            while !stop.load(ordering: .relaxed) {
                do {
                    try store.collectGarbage()
                    passes.add(1, ordering: .relaxed)
                } catch {
                    failures.withLock { $0.append("collect: \(error)") }
                    return
                }
            }
        }
        group.run(until: { passes.load(ordering: .relaxed) >= 20 }, thenStop: stop)
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
        #expect(store.auditReferenceCounts().isEmpty)
        try store.collectGarbage()
        // Quiet now: exactly the holders and what they hold (two objects per kept cycle) remain.
        var expected = Set(holders)
        for holder in holders {
            for first in try store.get(holder)?.references ?? [] {
                expected.insert(first)
                if let second = try store.get(first)?.references.first { expected.insert(second) }
            }
        }
        #expect(Set(try store.ids()) == expected)
        try store.close()
        #expect(try Store.verify(at: directory.path).isSound)
    }
}

/// The referrer named by a refused delete, and ``Store/referrers(of:)``, come from the store's index of
/// references: found however many objects come before the referrer, and kept by later puts.
@Suite struct ReferrerIndexTests {
    @Test func aRefusedDeleteNamesAReferrerBeyondAnyScanBound() throws {
        let directory = TemporaryStore("referrer-index")
        let store = try directory.open(options: testOptions(segmentSize: 1 << 20))
        defer { try? store.close() }
        let target = store.newID()
        try store.put(target, typeTag: 1, references: [], payload: [1], pinned: true)
        try store.write { batch in
            for _ in 0..<30_000 { batch.put(store.newID(), typeTag: 2, references: [], payload: [2], pinned: true) }
        }
        let referrer = store.newID()
        try store.put(referrer, typeTag: 3, references: [target], payload: [3], pinned: true)
        let error = #expect(throws: LogStoreError.self) { try store.delete(target) }
        #expect(error?.code == .stillReferenced)
        #expect(error?.objects == [target, referrer], "\(String(describing: error))")
        #expect(try store.referrers(of: target) == [referrer])

        // Kept current after it was built: a new referrer is listed, one that drops the reference is not.
        let second = store.newID()
        try store.put(second, typeTag: 3, references: [target], payload: [4], pinned: true)
        #expect(try store.referrers(of: target) == [referrer, second])
        try store.put(referrer, typeTag: 3, references: [], payload: [3], pinned: true)
        #expect(try store.referrers(of: target) == [second])
        try store.delete(second)
        #expect(try store.referrers(of: target) == [])
        try store.delete(target)
    }
}
