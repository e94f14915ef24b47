import Foundation
import LogStoreExamples
import LogStoreObjects
import TestSupport
import Testing

@testable import LogStore

/// The object layer tells what opening repaired, and refuses damage after a clean close.
@Suite struct RecoveryReportTests {
    /// A store with one saved layer, closed cleanly, with `garbage` bytes appended to its last segment;
    /// with `crashed`, its clean-close record is removed, as a crash would have left the files.
    private func damagedStore(_ label: String, garbage: Int, crashed: Bool) throws -> TemporaryStore {
        // Without a crash, the garbage stays: the open refuses it, and so does verify.
        let directory = TemporaryStore(label, unverifiedBecause: crashed ? nil : "bytes appended after a clean close")
        let objects = try openObjects(directory)
        let context = objects.makeContext()
        try context.setRoot(Layer(name: "kept", shapes: [Circle(center: Point(x: 1, y: 2), radius: 3)]), named: "main")
        try context.save()
        try objects.close()
        if crashed {
            let manifestPath = directory.path + "/" + SegmentManifest.fileName
            var manifest = try [UInt8](Data(contentsOf: URL(fileURLWithPath: manifestPath)))
                .withUnsafeBytes { try SegmentManifest.decode($0).get() }
            manifest.cleanClose = nil
            try Data(manifest.encoded()).write(to: URL(fileURLWithPath: manifestPath))
        }
        let segments = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".seg") }.sorted()
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: directory.path + "/" + (segments.last ?? "")))
        handle.seekToEndOfFile()
        handle.write(Data(repeating: 0x5A, count: garbage))
        try handle.close()
        return directory
    }

    @Test func aCleanLogReportsNoRecovery() throws {
        let directory = TemporaryStore("recovery-clean")
        try openObjects(directory).close()
        let objects = try openObjects(directory)
        #expect(objects.recovery == nil)
        try objects.close()
    }

    @Test func aTornTailAfterACrashIsCutAndReported() throws {
        let directory = try damagedStore("recovery-torn", garbage: 77, crashed: true)
        let objects = try openObjects(directory)
        let report = try #require(objects.recovery)
        #expect(report.bytesCut == 77)
        #expect(report.savedTo != nil)
        let layer = try objects.makeContext().root(named: "main", as: Layer.self)
        #expect(layer?.name == "kept")
        try objects.close()
    }

    @Test func theSameBytesAfterACleanCloseAreRefused() throws {
        let directory = try damagedStore("recovery-refused", garbage: 77, crashed: false)
        #expect {
            try openObjects(directory).close()
        } throws: { error in
            guard let error = error as? ObjectStoreError, error.code == .store,
                let underlying = error.underlying as? LogStoreError
            else { return false }
            return underlying.code == .corruptFrame && underlying.file?.hasSuffix(".seg") == true
        }
    }
}
