import Foundation
import Testing

@testable @_spi(Testing) import LogStore

/// Errors describe themselves to Foundation (`localizedDescription`) as they do to `print`.
@Suite struct ErrorDescriptionTests {
    @Test func aStoreErrorsLocalizedDescriptionIsItsDescription() throws {
        let directory = TemporaryDirectory("error-text")
        let error = try #require(throws: LogStoreError.self) {
            try Store.open(at: directory.path + "/missing", options: StoreOptions(createIfMissing: false))
        }
        let bridged: any Error = error
        #expect(bridged.localizedDescription == error.description)
        #expect(bridged.localizedDescription.contains("storeMissing: no store directory"))
    }

    @Test func aSystemErrorsLocalizedDescriptionIsItsDescription() {
        let error: any Error = SystemError(call: "open", errno: ENOENT, path: "/nowhere")
        #expect(error.localizedDescription == "open(/nowhere): No such file or directory (errno 2)")
    }
}
