import Foundation
import LogStore
import LogStoreExamples
import LogStoreObjects
import Synchronization
import TestSupport
import Testing

/// Contexts read one committed state, never overwrite what they did not see, and stay usable after a
/// refused save.
@Suite struct IsolationTests {
    /// A layer of `count` circles of radius `round`, named after `round`.
    private func makeLayer(round: Int, count: Int = 20) -> Layer {
        Layer(
            name: "\(round)",
            shapes: (0..<count).map { Circle(center: Point(x: Double($0), y: 0), radius: Double(round)) })
    }

    /// The round every object of a loaded layer was saved in (nil when they disagree).
    private func rounds(of layer: Layer) -> [Int] {
        var rounds = [Int(layer.name) ?? -1]
        for shape in layer.shapes { rounds.append(Int((shape as? Circle)?.radius ?? -1)) }
        return rounds
    }

    /// Readers load the whole layer in fresh contexts while `write(round)` saves rounds; every load must
    /// come back whole and from one save.
    private func loadWhileSaving(_ label: String, write: @escaping (ObjectContext, Layer, Int) throws -> Void) throws {
        let directory = TemporaryStore(label)
        let objects = try openObjects(directory)
        let writer = objects.makeContext()
        let layer = makeLayer(round: 0)
        try writer.setRoot(layer, named: "main")
        try writer.save()

        let stop = Atomic<Bool>(false)
        let loads = Atomic<Int>(0)
        let problems = Mutex<[String]>([])
        let group = DispatchGroup()
        for _ in 0..<2 {
            // Threads of their own, not the global queue's: other tests running meanwhile can keep every
            // thread of that pool busy, and the readers would then hardly run.
            group.enter()
            Thread {
                defer { group.leave() }
                while !stop.load(ordering: .relaxed) {
                    do {
                        let context = objects.makeContext()
                        guard let loaded = try context.root(named: "main", as: Layer.self) else {
                            problems.withLock { $0.append("no root") }
                            return
                        }
                        let rounds = rounds(of: loaded)
                        if Set(rounds).count != 1 || rounds.count != 21 {
                            problems.withLock { $0.append("mixed: \(rounds)") }
                        }
                        loads.add(1, ordering: .relaxed)
                    } catch {
                        problems.withLock { $0.append("\(error)") }
                    }
                }
            }.start()
        }
        var round = 1
        let start = ContinuousClock.now
        while loads.load(ordering: .relaxed) < 400 || round < 50, ContinuousClock.now - start < .seconds(60) {
            try write(writer, layer, round)
            round += 1
        }
        stop.store(true, ordering: .relaxed)
        group.wait()
        let found = problems.withLock { $0 }
        #expect(found.isEmpty, "\(found.count) bad loads of \(loads.load(ordering: .relaxed)), e.g. \(found.prefix(3))")
        #expect(loads.load(ordering: .relaxed) >= 300)
        try objects.close()
    }

    @Test func graphLoadsNeverMixTwoSaves() throws {
        try loadWhileSaving("mixed") { context, layer, round in
            layer.name = "\(round)"
            for shape in layer.shapes { (shape as? Circle)?.radius = Double(round) }
            try context.save()
        }
    }

    @Test func loadsNeverFailWhileAWriterFreesWhatTheyLoad() throws {
        try loadWhileSaving("freeing") { context, layer, round in
            // The old shapes lose their last reference and are collected by the save.
            let replacement = makeLayer(round: round)
            layer.name = replacement.name
            layer.shapes = replacement.shapes
            try context.save()
        }
    }

    @Test func aStaleSaveIsAConflictAndTheRetryHelperMergesBoth() throws {
        let directory = TemporaryStore("lost-update")
        try withObjects(directory) { objects in
            let setup = objects.makeContext()
            let id = try setup.insert(Circle(center: Point(x: 0, y: 0), radius: 1))
            try setup.save()

            let a = objects.makeContext()
            let b = objects.makeContext()
            let circleA = try #require(try a.object(id: id, as: Circle.self))
            let circleB = try #require(try b.object(id: id, as: Circle.self))
            circleA.center = Point(x: 5, y: 5)
            try a.save()
            circleB.radius = 9
            let error = #expect(throws: ObjectStoreError.self) { try b.save() }
            #expect(error?.code == .conflict && error?.objects == [id])
            #expect(error?.description.contains("Circle") == true)
            var stored = try #require(try objects.makeContext().object(id: id, as: Circle.self))
            #expect(stored.center == Point(x: 5, y: 5) && stored.radius == 1)

            // The pending change is still there, and saving again conflicts again: nothing is lost silently.
            #expect(circleB.radius == 9)
            #expect(throws: ObjectStoreError.self) { try b.save() }

            // The retry helper reads the newer state and applies the change to it.
            try objects.update { context -> Circle? in
                // The context holds its objects weakly: keep what you change until the save.
                let circle = try context.object(id: id, as: Circle.self)
                circle?.radius = 9
                return circle
            }
            stored = try #require(try objects.makeContext().object(id: id, as: Circle.self))
            #expect(stored.center == Point(x: 5, y: 5) && stored.radius == 9)

            // Or withdraw the one stale change: the context reloads the stored state and saves again.
            try b.refresh(circleB)
            let reloaded = try #require(try b.object(id: id, as: Circle.self))
            #expect(reloaded !== circleB && reloaded.center == Point(x: 5, y: 5) && reloaded.radius == 9)
            reloaded.radius = 10
            try b.save()
            // Saving the detached instance is refused rather than stored as a copy.
            circleB.radius = 11
            #expect(throws: ObjectStoreError.self) { try b.insert(circleB) }
        }
    }

    @Test func aDeleteOfAnObjectChangedElsewhereConflicts() throws {
        let directory = TemporaryStore("delete-conflict")
        try withObjects(directory) { objects in
            let setup = objects.makeContext()
            let id = try setup.insert(Circle(center: Point(x: 0, y: 0), radius: 1))
            try setup.save()
            let a = objects.makeContext()
            let b = objects.makeContext()
            let circleA = try #require(try a.object(id: id, as: Circle.self))
            circleA.radius = 2
            b.delete(try #require(try b.object(id: id, as: Circle.self)))
            try a.save()
            let error = #expect(throws: ObjectStoreError.self) { try b.save() }
            #expect(error?.code == .conflict)
            #expect(try objects.makeContext().object(id: id, as: Circle.self)?.radius == 2)
        }
    }

    @Test func aRefusedDeleteLeavesTheOtherChangesSavable() throws {
        let directory = TemporaryStore("refused-delete")
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            let c1 = Circle(center: Point(x: 1, y: 1), radius: 1)
            let c2 = Circle(center: Point(x: 2, y: 2), radius: 2)
            try context.setRoot(Layer(name: "layer", shapes: [c1, c2]), named: "main")
            try context.save()

            c2.radius = 20
            context.delete(c1)
            let error = #expect(throws: ObjectStoreError.self) { try context.save() }
            #expect(error?.code == .stillReferenced)
            // Withdraw the one refused change; the unrelated edit is still pending and is saved.
            context.cancelDelete(c1)
            let report = try context.save()
            #expect(report.written == 1 && report.deleted == 0)
            let again = try #require(try objects.makeContext().root(named: "main", as: Layer.self))
            #expect(again.shapes.compactMap { ($0 as? Circle)?.radius } == [1, 20])
        }
    }

    @Test func linkingAnObjectOfAnotherContextIsRefused() throws {
        let directory = TemporaryStore("foreign")
        try withObjects(directory) { objects in
            let setup = objects.makeContext()
            let id = try setup.insert(Circle(center: Point(x: 0, y: 0), radius: 1))
            try setup.save()
            let before = try objects.makeContext().count()

            let a = objects.makeContext()
            let b = objects.makeContext()
            let loadedInA = try #require(try a.object(id: id, as: Circle.self))
            try b.setRoot(Layer(name: "b", shapes: [loadedInA]), named: "main")
            let error = #expect(throws: ObjectStoreError.self) { try b.save() }
            #expect(error?.code == .foreignObject && error?.typeName == "Circle")
            #expect(try objects.makeContext().count() == before)

            // A new object added in A is A's too.
            let newInA = Circle(center: Point(x: 1, y: 1), radius: 2)
            try a.insert(newInA)
            let c = objects.makeContext()
            #expect(throws: ObjectStoreError.self) { try c.insert(newInA) }

            // The same object loaded in B by its id links fine.
            b.discardChanges()
            let loadedInB = try #require(try b.object(id: id, as: Circle.self))
            try b.setRoot(Layer(name: "b", shapes: [loadedInB]), named: "main")
            try b.save()
            #expect(try objects.makeContext().count() == before + 1)
        }
    }

    @Test func objectsOfAContextThatIsGoneOrOfAnotherStoreAreRefusedAndTheSaverStaysUsable() throws {
        let first = TemporaryStore("foreign-gone")
        let second = TemporaryStore("foreign-other-store")
        try withObjects(first) { objects in
            let setup = objects.makeContext()
            let id = try setup.insert(Circle(center: Point(x: 0, y: 0), radius: 1))
            try setup.save()

            // Loaded by a context that is gone since: still not this context's.
            var orphan: Circle?
            do { orphan = try objects.makeContext().object(id: id, as: Circle.self) }
            let loaded = try #require(orphan)
            let b = objects.makeContext()
            let layer = Layer(name: "b", shapes: [loaded])
            try b.setRoot(layer, named: "main")
            let error = #expect(throws: ObjectStoreError.self) { try b.save() }
            #expect(error?.code == .foreignObject)

            // Without discarding anything, the link replaced by the object loaded here saves.
            let own = try #require(try b.object(id: id, as: Circle.self))
            layer.shapes = [own]
            #expect(try b.save().written == 1)
            #expect(try objects.makeContext().root(named: "main", as: Layer.self)?.shapes.count == 1)

            // An object of another object store.
            try withObjects(second) { others in
                let elsewhere = others.makeContext()
                try elsewhere.setRoot(Layer(name: "other", shapes: [loaded]), named: "main")
                let error = #expect(throws: ObjectStoreError.self) { try elsewhere.save() }
                #expect(error?.code == .foreignObject)
                #expect(try others.makeContext().count() == 0)
            }
        }
    }

    @Test func aLazyReferenceResolvesInTheSnapshotOfItsContext() throws {
        let directory = TemporaryStore("lazy-snapshot")
        try withObjects(directory) { objects in
            let setup = objects.makeContext()
            let square = Geometry.Square(name: "s", side: 1)
            try setup.setRoot(Geometry.LazySquare(square: square), named: "lazy")
            try setup.save()
            let squareID = try #require(setup.id(of: square))

            let reader = objects.makeContext()
            let lazy = try #require(try reader.root(named: "lazy", as: Geometry.LazySquare.self))
            #expect(!lazy.square.isLoaded)
            let writer = objects.makeContext()
            let changed = try #require(try writer.object(id: squareID, as: Geometry.Square.self))
            changed.side = 2
            try writer.save()
            #expect(try objects.makeContext().object(id: squareID, as: Geometry.Square.self)?.side == 2)

            // Loaded after the change was saved, but in the reader's snapshot: the side it had then.
            #expect(try lazy.square.get().side == 1)
            let probe = objects.makeContext()
            let probeLazy = try #require(try probe.root(named: "lazy", as: Geometry.LazySquare.self))
            _ = try probeLazy.square.get()
            #expect(try probe.save().written == 0, "a loaded lazy reference is no change")
            try reader.refresh()
            #expect(try reader.object(id: squareID, as: Geometry.Square.self)?.side == 2)
        }
    }

    @Test func aContextSeesItsSnapshotUntilItMovesOn() throws {
        let directory = TemporaryStore("move-on")
        try withObjects(directory) { objects in
            let setup = objects.makeContext()
            let kept = Circle(center: Point(x: 0, y: 0), radius: 1)
            let changed = Circle(center: Point(x: 0, y: 0), radius: 1)
            let keptID = try setup.insert(kept)
            let changedID = try setup.insert(changed)
            try setup.save()

            let reader = objects.makeContext()
            let readKept = try #require(try reader.object(id: keptID, as: Circle.self))
            #expect(try reader.count(of: Circle.self) == 2)
            changed.radius = 7
            try setup.insert(Circle(center: Point(x: 1, y: 1), radius: 3))
            try setup.save()
            // Still the first snapshot: the change and the new circle are not there.
            #expect(try reader.object(id: changedID, as: Circle.self)?.radius == 1)
            #expect(try reader.count(of: Circle.self) == 2)
            try reader.refresh()
            #expect(try reader.count(of: Circle.self) == 3)
            #expect(try reader.object(id: changedID, as: Circle.self)?.radius == 7)
            // What nobody changed keeps its instance.
            #expect(try reader.object(id: keptID, as: Circle.self) === readKept)
        }
    }

    /// Writers save random states of a layer (each save writes every object, so each committed state is
    /// known), retrying on conflict; readers load it in fresh and refreshed contexts. Every load must equal a
    /// committed state. The seed is printed; set `LOGSTORE_SEED` to replay one.
    @Test func concurrentSavesAndLoadsMatchCommittedStates() throws {
        let seed = testSeed("IsolationTests", default: UInt64.random(in: 1...1 << 40))
        let directory = TemporaryStore("isolation-model")
        let objects = try openObjects(directory)
        let setup = objects.makeContext()
        try setup.setRoot(Layer(name: "0", shapes: []), named: "main")
        try setup.save()

        let committed = Mutex<Set<[Double]>>([[]])
        let observed = Mutex<[[Double]]>([])
        let problems = Mutex<[String]>([])
        let conflicts = Atomic<Int>(0)
        let writersDone = Atomic<Int>(0)
        let group = DispatchGroup()
        for writer in 0..<2 {
            DispatchQueue.global().async(group: group) {
                var random = SplitMix64(seed: seed &+ UInt64(writer))
                for step in 0..<60 {
                    let count = Int(random.next() % 6)
                    let radii = (0..<count).map { _ in Double(random.next() % 1_000_000) }
                    let replace = random.next() % 3 == 0
                    var attempts = 0
                    do {
                        try objects.update(attempts: 50) { context in
                            attempts += 1
                            guard let layer = try context.root(named: "main", as: Layer.self) else { return }
                            layer.name = "\(writer)-\(step)"
                            if replace || layer.shapes.count != count {
                                layer.shapes = radii.map { Circle(center: Point(x: 0, y: 0), radius: $0) }
                            } else {
                                for (shape, radius) in zip(layer.shapes, radii) { (shape as? Circle)?.radius = radius }
                            }
                        }
                        committed.withLock { _ = $0.insert(radii) }
                    } catch {
                        problems.withLock { $0.append("writer \(writer) step \(step): \(error)") }
                    }
                    conflicts.add(attempts - 1, ordering: .relaxed)
                }
                writersDone.add(1, ordering: .relaxed)
            }
        }
        for _ in 0..<2 {
            DispatchQueue.global().async(group: group) {
                let longLived = objects.makeContext()
                var loads = 0
                while writersDone.load(ordering: .relaxed) < 2 || loads < 150 {
                    do {
                        let context = loads % 2 == 0 ? objects.makeContext() : longLived
                        if context === longLived { try context.refresh() }
                        guard let layer = try context.root(named: "main", as: Layer.self) else { continue }
                        let radii = layer.shapes.map { ($0 as? Circle)?.radius ?? -1 }
                        observed.withLock { $0.append(radii) }
                    } catch {
                        problems.withLock { $0.append("reader: \(error)") }
                    }
                    loads += 1
                }
            }
        }
        group.wait()
        let states = committed.withLock { $0 }
        let loads = observed.withLock { $0 }
        let uncommitted = loads.filter { !states.contains($0) }
        #expect(problems.withLock { $0 }.isEmpty, "seed \(seed): \(problems.withLock { $0.prefix(3) })")
        #expect(
            uncommitted.isEmpty,
            "seed \(seed): \(uncommitted.count) of \(loads.count) loads, e.g. \(uncommitted.prefix(2))")
        #expect(loads.count >= 300)
        print("IsolationTests: \(loads.count) loads, \(conflicts.load(ordering: .relaxed)) conflicts retried")
        try objects.close()
    }
}
