import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// Errors describe themselves to Foundation (`localizedDescription`) as they do to `print`: code,
/// message, file and offset, cause.
@Suite struct ErrorDescriptionTests {
    @Test func aStoreErrorsLocalizedDescriptionIsItsDescription() throws {
        let directory = TemporaryStore("error-text")
        let error = try #require(throws: LogStoreError.self) {
            try Store.open(at: directory.path + "/missing", options: StoreOptions(createIfMissing: false))
        }
        let bridged: any Error = error
        #expect(bridged.localizedDescription == error.description)
        #expect(bridged.localizedDescription.contains("storeMissing: no store directory"))
        #expect(bridged.localizedDescription.contains(directory.path + "/missing"))
    }

    @Test func aCorruptionErrorsLocalizedDescriptionNamesFileOffsetAndCause() {
        let cause = SystemError(call: "pread", errno: EIO, path: "/data/0000000002.seg")
        let error: any Error = LogStoreError(
            .corruptFrame, "checksum mismatch", file: "/data/0000000002.seg", offset: 4096, underlying: cause)
        #expect(
            error.localizedDescription
                == "corruptFrame: checksum mismatch [/data/0000000002.seg @ 4096] (cause: \(cause))")
    }

    @Test func aSystemErrorsLocalizedDescriptionIsItsDescription() {
        let error: any Error = SystemError(call: "open", errno: ENOENT, path: "/nowhere")
        #expect(error.localizedDescription == "open(/nowhere): No such file or directory (errno 2)")
    }
}
