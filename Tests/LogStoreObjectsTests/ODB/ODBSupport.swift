import Foundation
import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// Store options for ODB tests: small segments, no fsync, no background compaction.
func odbTestOptions(segmentSize: Int = 1 << 20) -> StoreOptions {
    var options = StoreOptions(segmentSize: segmentSize, fsyncPolicy: .never)
    options.compaction.background = false
    return options
}

/// Opens the ODB of `directory` with test options; the directory's teardown closes it if it is still open.
func openODB(_ directory: TemporaryStore, cacheBudget: Int = ODB.defaultCacheBudget) throws -> ODB {
    let odb = try ODB.open(at: directory.path, options: odbTestOptions(), cacheBudget: cacheBudget)
    return directory.closesAtTeardown(odb) { try $0.close() }
}

/// Runs `body` with the ODB of `directory`, checks the ODB's own verify, and closes it (the directory's
/// teardown verifies the engine store).
func withODB<Result>(_ directory: TemporaryStore, _ body: (ODB) throws -> Result) throws -> Result {
    let odb = try openODB(directory)
    let result: Result
    do {
        result = try body(odb)
        let problems = try odb.verify()
        #expect(problems.isEmpty, "ODB verify: \(problems)")
    } catch {
        try? odb.close()
        throw error
    }
    try odb.close()
    return result
}

/// The ODB error a call throws, or nil (recording an issue) when it throws none or another error.
func odbError(_ body: () throws -> Void) -> ODBError? {
    do {
        try body()
        Issue.record("expected an ODBError, nothing was thrown")
        return nil
    } catch let error as ODBError {
        return error
    } catch {
        Issue.record("expected an ODBError, got \(error)")
        return nil
    }
}

/// The number of ODB table and bucket records in the store.
func odbRecordCount(_ store: Store) throws -> Int {
    try store.count(ofType: TypeNames.tag(for: "logstore.odb.table"))
        + store.count(ofType: TypeNames.tag(for: "logstore.odb.bucket"))
}
