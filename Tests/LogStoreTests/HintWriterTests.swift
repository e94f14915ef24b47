import Foundation
@_spi(Engine) import LogStoreFormat
import Synchronization
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Hint files have one writer at a time (compaction, the background compactor, `writeHints()` and
/// `close()` all write them under the compaction lock), and a compaction never runs beside or after a close.
@Suite struct HintWriterTests {
    /// Hints whose rename is slowed down, so that two writers of one hint would overlap.
    private static func slowHintRenames() -> FaultInjector {
        let faults = FaultInjector()
        let temporaryHint = "." + HintFile.fileExtension + LogFormat.writingSuffix
        faults.inject(.rename, .delay(microseconds: 2000), times: .max, pathSuffix: temporaryHint)
        return faults
    }

    /// The hint files in `directory` whose segment is not there.
    private static func strayHints(in directory: String) throws -> [String] {
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: directory))
        return names.filter { name in
            guard name.hasSuffix("." + HintFile.fileExtension) else { return false }
            return !names.contains(String(name.dropLast(HintFile.fileExtension.count)) + LogFormat.segmentExtension)
        }.sorted()
    }

    /// Round after round of garbage and an on-demand `compact()`, with the background compactor looking
    /// every 10 ms and a thread asking for the missing hints meanwhile: every pass and every hint write
    /// succeeds, and no hint is left for a segment that is gone.
    @Test func compactionBesideOtherHintWritersNeverFails() throws {
        let directory = TemporaryStore("hint-writers")
        var options = testOptions(segmentSize: 1 << 16, fsync: .never, faults: Self.slowHintRenames())
        options.compaction = CompactionOptions(
            background: true, startGarbageRatio: 0, segmentGarbageRatio: 0.01, minimumInterval: .milliseconds(10),
            markSweepInterval: .zero)
        let store = try directory.open(options: options)
        let stop = Atomic<Bool>(false)
        let failures = Shared<[String]>([])
        let hinter = ThreadGroup()
        hinter.start(1) { _ in
            while !stop.load(ordering: .relaxed) {
                do { try store.writeHints() } catch { failures.withLock { $0.append("writeHints: \(error)") } }
                Thread.sleep(forTimeInterval: 0.001)
            }
        }
        var ids: [ObjectID] = []
        for index in 0..<40 { ids.append(try store.put(typeTag: 1, payload: payloadBytes(300, seed: UInt64(index)))) }
        let start = ContinuousClock.now
        var rounds = 0
        func elapsed() -> Duration { ContinuousClock.now - start }
        while rounds < 12 || elapsed() < .milliseconds(500), elapsed() < .seconds(5) {
            for (index, id) in ids.enumerated() where index % 3 == rounds % 3 {
                try store.put(id, typeTag: 1, payload: payloadBytes(300, seed: UInt64(rounds * 1000 + index)))
            }
            do {
                _ = try store.compact()
            } catch {
                failures.withLock { $0.append("compact, round \(rounds): \(error)") }
            }
            rounds += 1
        }
        stop.store(true, ordering: .relaxed)
        hinter.join()
        let background = try store.statistics().backgroundCompactionError
        try store.close()
        #expect(failures.withLock { $0 }.isEmpty, "\(rounds) rounds: \(failures.withLock { $0.prefix(5) })")
        #expect(background == nil, "background: \(String(describing: background))")
        #expect(try Self.strayHints(in: directory.path) == [])
    }

    /// A `compact()` that starts while `close()` writes the last hints waits for them, and is then refused
    /// with `closed`: nothing is written once `close()` has returned, and the store reopens with every object.
    @Test func compactionDuringCloseIsRefused() throws {
        let directory = TemporaryStore("close-compact")
        let faults = FaultInjector()
        var options = testOptions(segmentSize: 1 << 16, faults: faults)
        options.compaction.background = false
        let store = try directory.open(options: options)
        var expected: [ObjectID: [UInt8]] = [:]
        let ids = (0..<200).map { _ in store.newID() }
        for start in stride(from: 0, to: ids.count, by: 20) {
            try store.write { batch in
                for index in start..<start + 20 {
                    batch.put(ids[index], typeTag: 1, payload: payloadBytes(1000, seed: UInt64(index)))
                }
            }
        }
        try store.write { batch in
            for (index, id) in ids.enumerated() {
                if index % 2 == 0 {
                    batch.delete(id)
                } else {
                    expected[id] = payloadBytes(1000, seed: UInt64(index))
                }
            }
        }
        // Sealed segments without hints and with garbage: close writes their hints, a pass would rewrite them.
        #expect(try store.statistics().segments.filter { !$0.isActive && $0.garbageBytes > 0 }.count > 1)

        let closeReturned = Atomic<Bool>(false)
        let writesAfterClose = Shared<[String]>([])
        faults.observe { call in
            if closeReturned.load(ordering: .acquiring) { writesAfterClose.withLock { $0.append("\(call)") } }
            return nil
        }
        let outcome = Shared<String?>(nil)
        let compactor = ThreadGroup()
        // Just before close renames its first hint into place (it holds the compaction lock then), another
        // thread asks for a compaction.
        faults.perform(before: .rename, pathSuffix: "." + HintFile.fileExtension + LogFormat.writingSuffix) { _ in
            compactor.start(1) { _ in
                let result: String
                do throws(LogStoreError) {
                    _ = try store.compact()
                    result = "compacted"
                } catch {
                    result = "\(error.code)"
                }
                outcome.withLock { $0 = result }
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        try store.close()
        closeReturned.store(true, ordering: .releasing)
        compactor.join()
        // Whatever the pass would still have written shows up once it had time to.
        Thread.sleep(forTimeInterval: 0.05)
        #expect(outcome.withLock { $0 } == "closed")
        #expect(writesAfterClose.withLock { $0 }.isEmpty, "\(writesAfterClose.withLock { $0.prefix(5) })")
        let reopened = try Store.open(at: directory.path, options: testOptions(segmentSize: 1 << 16))
        #expect(try reopened.ids() == expected.keys.sorted())
        for (id, payload) in expected { #expect(try reopened.get(id)?.payload == payload) }
        try reopened.close()
    }
}
