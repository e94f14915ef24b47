import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#endif

/// The same race as ``ReadOnlyBesideWriterTests``, made deterministic with the syscall seam: the writer's
/// compaction (or a deletion by hand) runs at an exact point of a read-only open or `verify`.
@Suite struct ReadOnlyRetryTests {
    /// A system call of a load, just before which the test changes the store.
    struct Point: Sendable, CustomStringConvertible {
        var operation: FaultInjector.Operation
        var pathSuffix: String
        var description: String { "\(operation) of *\(pathSuffix)" }
    }

    static let points = [
        // Before the manifest is read: the listing then shows the outputs the manifest lists.
        Point(operation: .open, pathSuffix: "SEGMENTS"),
        // After the manifest is opened, before it is read: the reader gets the old manifest (its
        // descriptor keeps the replaced file), whose segments are then gone from the listing.
        Point(operation: .read, pathSuffix: "SEGMENTS"),
        // After the listing, before the first segment is opened: the listed segments are gone.
        Point(operation: .open, pathSuffix: ".seg"),
        // While the segments are read, before a hint is opened: hint and segment are deleted.
        Point(operation: .open, pathSuffix: ".hint"),
    ]

    @Test(arguments: points, [false, true])
    func aCompactionAtThisPointOfALoadIsFollowed(point: Point, verifying: Bool) throws {
        let directory = TemporaryStore("retry-compaction")
        let (writer, ids) = try ReadOnlyBesideWriterTests.writer(directory)
        _ = try writer.compact()  // outputs, with hint files
        try ReadOnlyBesideWriterTests.overwrite(writer, ids, version: 4)  // all of them garbage now
        #expect(directory.fileNames().contains { $0.hasSuffix(".hint") })
        let faults = FaultInjector()
        let compactions = Shared<[String]>([])
        faults.perform(before: point.operation, pathSuffix: point.pathSuffix) { _ in
            do {
                let report = try writer.compact()
                compactions.withLock { $0.append("deleted \(report.segmentsCompacted)") }
            } catch {
                compactions.withLock { $0.append("\(error)") }
            }
        }
        if verifying {
            let report = try Store.verify(at: directory.path, faultInjector: faults)
            #expect(report.problems.isEmpty, "\(report.problems)")
            #expect(report.liveObjects == ids.count)
        } else {
            let store = try directory.open(options: ReadOnlyBesideWriterTests.readOnlyOptions(faults))
            #expect(try store.ids() == ids)
            for id in ids { #expect(try store.get(id) == writer.get(id), "\(id)") }
            try store.close()
        }
        let ran = compactions.withLock { $0 }
        #expect(ran.count == 1 && ran.allSatisfy { $0.hasPrefix("deleted ") && $0 != "deleted 0" }, "\(ran)")
        try writer.close()
        #expect(try Store.verify(at: directory.path).isSound)
    }
}

// MARK: - Real losses, and a store that never stops changing

extension ReadOnlyRetryTests {
    /// A closed store of at least three segments; `unverifiedBecause` is for a test that damages it.
    static func closedStore(_ label: String, unverifiedBecause reason: String? = nil) throws -> TemporaryStore {
        let directory = TemporaryStore(label, unverifiedBecause: reason)
        let (store, _) = try ReadOnlyBesideWriterTests.writer(directory, rounds: 2)
        try store.close()
        return directory
    }

    static func readOnlyOpenError(_ directory: String, _ faults: FaultInjector? = nil) -> LogStoreError? {
        do {
            try Store.open(at: directory, options: ReadOnlyBesideWriterTests.readOnlyOptions(faults)).close()
            return nil
        } catch {
            return error
        }
    }

    @Test func aSegmentThatIsReallyMissingIsStillMissingSegment() throws {
        let directory = try Self.closedStore("retry-missing", unverifiedBecause: "a segment is removed")
        let lost = directory.segmentFiles()[1]
        try FileManager.default.removeItem(atPath: lost)
        let name = (lost as NSString).lastPathComponent
        let error = try #require(Self.readOnlyOpenError(directory.path))
        #expect(error.code == .missingSegment && error.message.contains(name), "\(error)")
        let report = try Store.verify(at: directory.path)
        #expect(report.problems.contains { $0.message.contains("missing") && $0.message.contains(name) })
    }

    /// Deleted between the listing and its `open`, without the manifest changing: the load starts again,
    /// finds the manifest still listing it, and reports the loss (not a store that kept changing).
    @Test(arguments: [false, true])
    func aSegmentDeletedByHandBetweenListingAndOpeningIsMissingSegment(verifying: Bool) throws {
        let directory = try Self.closedStore("retry-deleted", unverifiedBecause: "a segment is removed")
        let lost = directory.segmentFiles()[1]
        let name = (lost as NSString).lastPathComponent
        let faults = FaultInjector()
        faults.perform(before: .open, pathSuffix: "/" + name) { path in _ = unlink(path) }
        if verifying {
            let report = try Store.verify(at: directory.path, faultInjector: faults)
            #expect(report.problems.contains { $0.message.contains("missing") && $0.message.contains(name) })
        } else {
            let error = try #require(Self.readOnlyOpenError(directory.path, faults))
            #expect(error.code == .missingSegment && error.message.contains(name), "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: lost))
    }

    @Test func aLoadStartsAgainAfterASegmentVanishesAndGivesUpAfterBoundedAttempts() throws {
        let directory = try Self.closedStore("retry-bounded")
        let faults = FaultInjector()
        faults.inject(.open, .error(ENOENT), times: 3, pathSuffix: ".seg")
        let store = try directory.open(options: ReadOnlyBesideWriterTests.readOnlyOptions(faults))
        #expect(try store.count() == ReadOnlyBesideWriterTests.objectCount)
        #expect(store.openNotes.contains { $0.contains("read again 3 time(s)") }, "\(store.openNotes)")
        try store.close()

        faults.inject(.open, .error(ENOENT), times: 10_000, pathSuffix: ".seg")
        let error = try #require(Self.readOnlyOpenError(directory.path, faults))
        #expect(error.code == .ioError && error.message.contains("kept changing"), "\(error)")
        #expect((error.underlying as? SystemError)?.errno == ENOENT)
        faults.clear()
        #expect(Self.readOnlyOpenError(directory.path, faults) == nil)
    }
}

// MARK: - Damage that does not last

extension ReadOnlyRetryTests {
    /// Writes `byte` at `offset` of the file at `path`, in place.
    static func poke(_ path: String, at offset: UInt64, _ byte: UInt8) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: [byte])
        try handle.close()
    }

    /// What a scan racing the writer's appends can see: bytes not written yet, then frames written after
    /// them. Here the damage is there for the first attempt only; the second finds the segment whole.
    @Test(arguments: [false, true])
    func damageFoundOnceIsReadAgainAndReportedOnlyWhenItLasts(verifying: Bool) throws {
        let directory = try Self.closedStore(
            "retry-damage", unverifiedBecause: "it ends with a byte of a segment flipped")
        let path = try #require(directory.segmentFiles().last)
        let name = (path as NSString).lastPathComponent
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try #require(bytes.count > 60)
        let original = bytes[bytes.startIndex + 60]
        let faults = FaultInjector()
        // Before the first attempt opens the segment, and (the first action used up) before the second does.
        faults.perform(before: .open, pathSuffix: "/" + name) { _ in try? Self.poke(path, at: 60, original ^ 0xFF) }
        faults.perform(before: .open, pathSuffix: "/" + name) { _ in try? Self.poke(path, at: 60, original) }
        if verifying {
            let report = try Store.verify(at: directory.path, faultInjector: faults)
            #expect(report.problems.isEmpty, "\(report.problems)")
            #expect(report.notes.contains { $0.contains("read again 1 time(s)") }, "\(report.notes)")
        } else {
            let store = try directory.open(options: ReadOnlyBesideWriterTests.readOnlyOptions(faults))
            #expect(try store.count() == ReadOnlyBesideWriterTests.objectCount)
            #expect(store.openNotes.contains { $0.contains("read again 1 time(s)") }, "\(store.openNotes)")
            try store.close()
        }

        // Damage that lasts is reported, as before, naming the segment and the frame's offset.
        try Self.poke(path, at: 60, original ^ 0xFF)
        if verifying {
            let report = try Store.verify(at: directory.path)
            #expect(report.problems.contains { $0.file == path && $0.offset == 48 }, "\(report.problems)")
            #expect(!report.notes.contains { $0.contains("read again") }, "confirmed, not changed: \(report.notes)")
        } else {
            let error = try #require(Self.readOnlyOpenError(directory.path))
            #expect(error.code == .corruptFrame && error.file == path && error.offset == 48, "\(error)")
        }
    }
}

// MARK: - The append segment cut back while it is read

extension ReadOnlyRetryTests {
    /// The writer extends its segment ahead of its writes and cuts the extension off when it seals the
    /// segment or closes. A reader that read that space through its mapping after the cut would fault
    /// (SIGBUS, the whole process ends); it reads a copy instead, which just comes out shorter.
    @Test(arguments: [false, true])
    func theWriterCuttingTheAppendSegmentBackWhileItIsReadIsNoFault(verifying: Bool) throws {
        let directory = TemporaryStore("retry-cut")
        let (writer, ids) = try ReadOnlyBesideWriterTests.writer(directory, rounds: 2)
        var expected: [ObjectID: Record] = [:]
        for id in ids { expected[id] = try writer.get(id) }
        let path = try #require(directory.segmentFiles().last)
        let sizeOf = { () -> Int in
            ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
        }
        let extended = sizeOf()
        // As the writer's filler does with time: zeros written over the hole after the frames, so the whole
        // file is data and a reader scans all of it.
        let fd = open(path, O_WRONLY)
        let hole = lseek(fd, 0, 4)  // SEEK_HOLE
        let zeros = [UInt8](repeating: 0, count: max(0, extended - Int(hole)))
        #expect(hole > 0 && pwrite(fd, zeros, zeros.count, hole) == zeros.count)
        close(fd)
        let faults = FaultInjector()
        let closed = Shared<Bool>(false)
        // The first read of the segment is its header's (which kind of segment it is); the second copies it.
        faults.perform(before: .read, pathSuffix: "/" + (path as NSString).lastPathComponent, after: 1) { _ in
            closed.withLock { $0 = (try? writer.close()) != nil }
        }
        if verifying {
            let report = try Store.verify(at: directory.path, faultInjector: faults)
            #expect(report.problems.isEmpty, "\(report.problems)")
            #expect(report.liveObjects == ids.count)
        } else {
            let store = try directory.open(options: ReadOnlyBesideWriterTests.readOnlyOptions(faults))
            for id in ids { #expect(try store.get(id) == expected[id], "\(id)") }
            try store.close()
        }
        #expect(closed.withLock { $0 }, "the writer closed while the segment was read")
        #expect(sizeOf() < extended, "closing cut the segment back: \(sizeOf()) of \(extended) bytes")
    }
}
