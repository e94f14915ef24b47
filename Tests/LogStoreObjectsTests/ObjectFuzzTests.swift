import Foundation
import LogStore
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

/// Seeded mutation fuzzing of the object decoder: payloads from the committed corpus
/// (`Tests/Fixtures/FuzzCorpus/object-*.bin`), mutated, stored under an object of their class and loaded
/// through a fresh context, and rendered by `ObjectInspector`. No input may crash; a load either decodes
/// or throws an `ObjectStoreError`. 5,000 inputs in the suite; `LOGSTORE_FUZZ_EXECUTIONS` sets the count.
@Suite struct ObjectFuzzTests {
    /// One object of each corpus class, with its layout-independent parts (id, tag, references).
    static func corpusObjects(_ context: ObjectContext) throws -> [(name: String, id: ObjectID)] {
        let note = Note()
        let layer = Layer(
            name: "layer",
            shapes: [
                Circle(center: Point(x: 1, y: 1), radius: 1),
                Rectangle(origin: Point(x: 0, y: 0), size: Size(width: 2, height: 3)),
            ])
        let edges = Edges(
            optionalMaps: [["a": 1], nil, ["b": -2, "c": 3]], wrapped: Tags(["x", "y"]), maybeSet: ["z"],
            chain: Chain(length: 4))
        let objects: [(String, any PersistentObject)] = [("Note", note), ("Layer", layer), ("Edges", edges)]
        var made: [(name: String, id: ObjectID)] = []
        for (name, object) in objects { made.append((name, try context.insert(object))) }
        try context.save()
        return made
    }

    @Test func mutatedPayloadsDecodeOrThrow() throws {
        let directory = TemporaryStore("object-fuzz")
        try withObjects(directory, types: allTestTypes + [Edges.self]) { objects in
            let store = objects.store
            let made = try Self.corpusObjects(objects.makeContext())
            let corpusDirectory = MutationFuzzer.corpusDirectory
            // LOGSTORE_WRITE_FUZZ_CORPUS=1 writes the corpus payloads again from these objects.
            if ProcessInfo.processInfo.environment["LOGSTORE_WRITE_FUZZ_CORPUS"] != nil {
                for (name, id) in made {
                    let record = try #require(try store.get(id))
                    try Data(record.payload).write(to: URL(fileURLWithPath: corpusDirectory + "/object-\(name).bin"))
                }
            }
            var targets: [(record: Record, corpus: [UInt8])] = []
            for (name, id) in made {
                let record = try #require(try store.get(id))
                let corpus = [UInt8](
                    try Data(contentsOf: URL(fileURLWithPath: corpusDirectory + "/object-\(name).bin")))
                targets.append((record, corpus))
            }
            let inspector = try ObjectInspector(store)
            let executions = MutationFuzzer.executions(default: 5_000)
            let seed = testSeed("ObjectFuzzTests", default: 0x0B1E)
            var fuzzers = targets.enumerated().map {
                MutationFuzzer(corpus: [$0.element.corpus], seed: seed &+ UInt64($0.offset))
            }
            var outcomes = (decoded: 0, refused: 0)
            let started = ContinuousClock.now
            for execution in 0..<executions {
                let which = execution % targets.count
                var record = targets[which].record
                record.payload = fuzzers[which].next()
                _ = inspector.describe(record)
                try store.put(record)
                do {
                    _ = try objects.makeContext().object(id: record.id, as: (any PersistentObject).self)
                    outcomes.decoded += 1
                } catch {
                    outcomes.refused += 1
                }
            }
            print(
                "fuzz objects: \(executions) executions (seed \(seed)) in \(ContinuousClock.now - started), "
                    + "\(outcomes.decoded) decoded, \(outcomes.refused) refused, 0 crashes")
            #expect(outcomes.refused > 0)
        }
    }
}
