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

/// Opens the ODB of `directory` with test options.
func openODB(_ directory: TemporaryStore, cacheBudget: Int = ODB.defaultCacheBudget) throws -> ODB {
    try ODB.open(at: directory.path, options: odbTestOptions(), cacheBudget: cacheBudget)
}

/// Runs `body` with the ODB of `directory`, then closes it and verifies the store.
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
    let report = try Store.verify(at: directory.path)
    #expect(report.problems.isEmpty, "verify: \(report.problems)")
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
