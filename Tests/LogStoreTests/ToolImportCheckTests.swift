import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// What `import` checks against the store it imports into: the objects of the lines a resumed import
/// skips must be in the store as the lines have them, and ids above 2^62 are taken only when the store
/// has reserved them already.
@Suite struct ToolImportCheckTests {
    /// An export line of object `id`.
    private func line(_ id: UInt64, type: UInt32 = 1, refs: [UInt64] = [], pinned: Bool = true, payload: String)
        -> String
    {
        let encoded = Data(payload.utf8).base64EncodedString()
        let references = refs.map(String.init).joined(separator: ",")
        return
            "{\"id\":\(id),\"type\":\(type),\"refs\":[\(references)],\"pinned\":\(pinned),\"payload\":\"\(encoded)\"}"
    }

    /// A store holding objects 1 and 2 as the lines of `line(_:…)` with payloads "one" and "two" have them.
    private func storeWithTwoObjects(_ label: String) throws -> TemporaryStore {
        let directory = TemporaryStore(label)
        let store = try directory.open(options: testOptions())
        try store.reserveIDs(through: ObjectID(2))
        try store.put(ObjectID(1), typeTag: 1, payload: Array("one".utf8))
        try store.put(ObjectID(2), typeTag: 1, payload: Array("two".utf8))
        try store.close()
        return directory
    }

    @Test(arguments: [
        (UInt32(1), true, "other", "the payloads differ (3 bytes in the store, 5 bytes on the line)"),
        (UInt32(9), true, "two", "tag 1 in the store, tag 9 on the line"),
        (UInt32(1), false, "two", "pinned in the store, unpinned on the line"),
    ])
    func resumingOverAnObjectThatDiffersFromItsLineIsRefused(
        type: UInt32, pinned: Bool, payload: String, difference: String
    ) throws {
        let directory = try storeWithTwoObjects("tool-import-resume-differs")
        let input = [
            line(1, payload: "one"), line(2, type: type, pinned: pinned, payload: payload), line(3, payload: "three"),
        ]
        let result = try ToolRunner.run(
            ["import", directory.path, "--resume-after-line", "2"],
            input: Data((input.joined(separator: "\n") + "\n").utf8))
        #expect(result.status == 1, "\(result.output)")
        #expect(
            result.stderr.contains("line 2: object 2 in the store differs from line 2: \(difference)"),
            "\(result.stderr)")
        #expect(result.stderr.contains("nothing was written"), "\(result.stderr)")
        let store = try directory.open(options: testOptions())
        #expect(try store.ids() == [ObjectID(1), ObjectID(2)])
        #expect(try store.get(ObjectID(2))?.payload == Array("two".utf8))
        try store.close()
    }

    @Test func resumingOverObjectsAsTheLinesHaveThemWritesTheRest() throws {
        let directory = try storeWithTwoObjects("tool-import-resume-same")
        let input = [line(1, payload: "one"), line(2, payload: "two"), line(3, refs: [1], payload: "three")]
        let result = try ToolRunner.run(
            ["import", directory.path, "--resume-after-line", "2"],
            input: Data((input.joined(separator: "\n") + "\n").utf8))
        #expect(result.status == 0, "\(result.output)")
        let store = try directory.open(options: testOptions())
        #expect(try store.get(ObjectID(3))?.references == [ObjectID(1)])
        try store.close()
    }

    /// A store whose next id is above 2^62 (made by an earlier engine, or by an export of one) takes an
    /// import of ids below its next id, above 2^62 included; a new id above 2^62 is still refused.
    @Test func idsAboveTheLimitThatTheStoreReservedAlreadyAreImported() throws {
        let limit = LogStoreLimits.maxReservableID.rawValue
        let directory = TemporaryStore("tool-import-reserved-high")
        do {
            let store = try directory.open(options: testOptions())
            store.reserveIDsUnchecked(through: ObjectID(limit + 100))
            try store.put(ObjectID(limit + 100), typeTag: 1, payload: [1])
            try store.close()
        }
        let accepted = try ToolRunner.run(
            ["import", directory.path],
            input: Data((line(limit + 50, payload: "high") + "\n" + line(7, payload: "low") + "\n").utf8))
        #expect(accepted.status == 0, "\(accepted.output)")
        let store = try directory.open(options: testOptions())
        #expect(try store.get(ObjectID(limit + 50))?.payload == Array("high".utf8))
        #expect(try store.get(ObjectID(7))?.payload == Array("low".utf8))
        let next = try store.statistics().nextID.rawValue
        #expect(next > limit + 100)
        try store.close()

        let refused = try ToolRunner.run(
            ["import", directory.path], input: Data((line(next, payload: "new") + "\n").utf8))
        #expect(refused.status == 1, "\(refused.output)")
        #expect(
            refused.stderr.contains(
                "line 1: object id \(next) is over \(limit) (2^62) and not reserved in the store (its next id "
                    + "is \(next))"),
            "\(refused.stderr)")
    }
}
