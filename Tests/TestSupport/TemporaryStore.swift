import Foundation
import LogStore
import Synchronization
import Testing

/// A fresh, empty directory under the system's temporary folder for one test's store, checked at
/// teardown and then removed (as bbolt checks every test database at cleanup).
///
/// Teardown is the end of the test's scope (`deinit`): it closes the stores that ``open(options:)``
/// opened (or that ``closesAtTeardown(_:by:)`` was given) and that are still alive, runs
/// ``Store/verify(at:)`` on every store in the directory (the directory itself, and each of its
/// subdirectories, that holds a store's files), records an issue at the line that made the directory when
/// verify throws or reports a problem, and removes the directory. A directory without a store's files (a
/// test of the tool's messages, an export folder) is only removed.
///
/// Tests that damage a store on purpose opt out with ``init(_:unverifiedBecause:sourceLocation:)``,
/// giving the reason.
///
/// For example:
/// ```swift
/// let directory = TemporaryStore("round-trip")
/// let store = try directory.open(options: StoreOptions(segmentSize: 1 << 16))
/// try store.put(ObjectID(1), typeTag: 0, payload: [1, 2, 3])
/// try store.close()
/// // verified and removed when `directory` goes out of scope
/// ```
package final class TemporaryStore: Sendable {
    /// The directory.
    package let path: String
    /// Why teardown does not verify the store, or nil when it does.
    package let unverifiedReason: String?
    private let sourceLocation: SourceLocation
    private let closers = Mutex<[@Sendable () -> Void]>([])
    /// The cipher teardown verifies the stores with (those of an encrypted test), or nil.
    private let cipher = Mutex<(any StoreCipher)?>(nil)

    /// Has teardown verify the stores with `cipher` (a test of encrypted stores).
    package func verifies(with cipher: any StoreCipher) { self.cipher.withLock { $0 = cipher } }

    /// A fresh directory whose store is verified at teardown; `label` goes into its name.
    ///
    /// With `unverifiedBecause`, teardown only removes it: for a test that damages its store on purpose
    /// (the reason says how), so that verify would rightly reject it.
    package init(
        _ label: String = "store", unverifiedBecause reason: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        path = Self.makeDirectory(label)
        unverifiedReason = reason
        self.sourceLocation = sourceLocation
    }

    private static func makeDirectory(_ label: String) -> String {
        let path = FileManager.default.temporaryDirectory.path + "/logstore-test-\(label)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    deinit {
        for close in closers.withLock({ $0 }) { close() }
        if unverifiedReason == nil {
            for store in storeDirectories() { verify(store) }
        }
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Opens the store in the directory (``Store/open(at:options:)``); teardown closes it if it is still
    /// open then.
    package func open(options: StoreOptions = StoreOptions()) throws(LogStoreError) -> Store {
        closesAtTeardown(try Store.open(at: path, options: options)) { try $0.close() }
    }

    /// Has teardown close `object` (a store, an object store, an ODB of this directory) with `close`
    /// before it verifies, if `object` is still alive then; returns `object`.
    @discardableResult
    package func closesAtTeardown<Object: AnyObject & Sendable>(
        _ object: Object, by close: @escaping @Sendable (Object) throws -> Void
    ) -> Object {
        closers.withLock { $0.append { [weak object] in if let object { try? close(object) } } }
        return object
    }

    /// The directory and those of its subdirectories that hold a store's files (identity, manifest or
    /// segments).
    private func storeDirectories() -> [String] {
        let fileManager = FileManager.default
        let subdirectories = ((try? fileManager.contentsOfDirectory(atPath: path)) ?? []).sorted()
            .map { path + "/" + $0 }
            .filter { (try? fileManager.attributesOfItem(atPath: $0))?[.type] as? FileAttributeType == .typeDirectory }
        return ([path] + subdirectories).filter { directory in
            ((try? fileManager.contentsOfDirectory(atPath: directory)) ?? []).contains { name in
                name == StoreIdentity.fileName || name == SegmentManifest.fileName || name.hasSuffix(".seg")
            }
        }
    }

    /// Runs `verify` on `directory` and records every problem as an issue.
    private func verify(_ directory: String) {
        do {
            let report = try Store.verify(at: directory, cipher: cipher.withLock { $0 })
            if !report.problems.isEmpty {
                let problems = report.problems.map { "  \($0)" }.joined(separator: "\n")
                Issue.record(
                    "teardown verify of \(directory) found \(report.problems.count) problem(s):\n\(problems)",
                    sourceLocation: sourceLocation)
            }
        } catch {
            Issue.record("teardown verify of \(directory) failed: \(error)", sourceLocation: sourceLocation)
        }
    }

    /// Paths of the segment files, in order.
    package func segmentFiles() -> [String] {
        fileNames().filter { $0.hasSuffix(".seg") }.map { path + "/" + $0 }
    }

    /// Names of every file in the directory, sorted.
    package func fileNames() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }
}
