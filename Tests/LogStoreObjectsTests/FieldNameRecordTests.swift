import LogStore
import Testing

@testable import LogStoreObjects

@Suite struct FieldNameRecordTests {
    /// A field-name record holding one late name whose number exceeds the record's length (a reader that
    /// took the number for a count refused the record, and with it every open of the store): the record
    /// that made a store unopenable, byte for byte.
    @Test func aLateNameWhoseNumberExceedsTheRecordIsRead() throws {
        let payload: [UInt8] = [1, 9, 4] + Array("code".utf8)
        let pairs = try KeyCatalog.decode(payload, id: ObjectID(9))
        #expect(pairs.map(\.0) == [9])
        #expect(pairs.map(\.1) == ["code"])
    }

    /// A number out of range is still refused as damage.
    @Test func aFieldNumberOutOfRangeIsRefused() {
        let payload: [UInt8] = [1, 0, 1] + Array("x".utf8)
        let error = #expect(throws: ObjectStoreError.self) { try KeyCatalog.decode(payload, id: ObjectID(9)) }
        #expect(error?.code == .corruptPayload)
    }
}
