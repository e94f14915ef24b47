import Foundation
import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// The RSS-reader scenario of the issue, and the basic operations one by one.
@Suite struct ODBScenarioTests {
    @Test func rssReaderScenario() throws {
        let directory = TemporaryStore("odb-rss")
        let feedID = "feed-0042"
        try withODB(directory) { (odb: ODB) throws in
            let feed = try odb.ensureTable(["RSS", "feeds", feedID])
            try feed.setValue("My Feed", forKey: "editedName")
            try odb.setValue(.string("<opml/>"), at: ["RSS", "subscriptions"], applicationType: "OPML")
        }
        try withODB(directory) { (odb: ODB) throws in
            #expect(try odb.value(at: ["RSS", "feeds", feedID, "editedName"]) == .string("My Feed"))
            #expect(
                try odb.value(at: ["root", "rss", "FEEDS", feedID.uppercased(), "EDITEDNAME"], as: String.self)
                    == "My Feed")
            #expect(
                try odb.object(at: ["RSS", "subscriptions"]) == .value(.string("<opml/>"), applicationType: "OPML"))
            #expect(try odb.keys(at: ["rss"]) == ["feeds", "subscriptions"])
            #expect(try odb.keys(at: ["RSS", "feeds", feedID]) == ["editedName"])
            // Keys keep their spelling when replaced through another one.
            try odb.setValue("Renamed", at: ["rss", "feeds", feedID, "EditedNAME"])
            #expect(try odb.keys(at: ["RSS", "feeds", feedID]) == ["editedName"])
            // Undo: delete it.
            #expect(try odb.delete(["RSS", "feeds", feedID, "editedName"]))
            #expect(try odb.value(at: ["RSS", "feeds", feedID, "editedName"]) == nil)
            #expect(try !odb.delete(["RSS", "feeds", feedID, "editedName"]))
        }
        try withODB(directory) { (odb: ODB) throws in
            #expect(try odb.value(at: ["RSS", "feeds", feedID, "editedName"]) == nil)
            #expect(try odb.count(at: ["RSS", "feeds", feedID]) == 0)
        }
    }

    @Test func ensureTableThroughAValueFailsAndChangesNothing() throws {
        let directory = TemporaryStore("odb-ensure")
        try withODB(directory) { (odb: ODB) throws in
            try odb.setValue(12, at: ["a", "b"])
            let error = odbError { try odb.ensureTable(["A", "B", "c"]) }
            #expect(error?.code == .notATable)
            #expect(error?.path == ["A", "B"])
            #expect(odbError { try odb.setValue(1, at: ["a", "b", "c"]) }?.code == .notATable)
            #expect(odbError { try odb.ensureTable(["a", "b"]) }?.code == .notATable)
            #expect(try odb.value(at: ["a", "b"]) == .int(12))
            #expect(try odb.value(at: ["a", "b", "c"]) == nil)
            #expect(odbError { _ = try odb.table(at: ["a", "b"]) }?.code == .notATable)
        }
    }

    @Test func createTableReplacesAndNeedsAParent() throws {
        let directory = TemporaryStore("odb-create")
        try withODB(directory) { (odb: ODB) throws in
            try odb.setValue("x", at: ["prefs", "window", "title"])
            try odb.setValue(3, at: ["prefs", "window", "count"])
            try odb.setValue("value", at: ["prefs", "single"])
            let before = try odbRecordCount(odb.store)
            let window = try odb.createTable(["prefs", "WINDOW"])
            #expect(try window.count() == 0)
            #expect(try odb.keys(at: ["prefs"]) == ["single", "window"])
            #expect(try odbRecordCount(odb.store) == before)  // the old table is gone, the new one came
            try odb.createTable(["prefs", "single"])
            #expect(try odb.object(at: ["prefs", "single"]) == .table)
            #expect(odbError { try odb.createTable(["missing", "table"]) }?.code == .notFound)
            #expect(odbError { try odb.createTable([]) }?.code == .rootTable)
            #expect(odbError { try odb.delete(["root"]) }?.code == .rootTable)
        }
    }

    @Test func deletingATableFreesItsSubtreeAndCompactionReclaimsIt() throws {
        let directory = TemporaryStore("odb-delete")
        try withODB(directory) { (odb: ODB) throws in
            for table in 0..<50 {
                try odb.transaction { tx in
                    for key in 0..<40 {
                        let filler = UUID().uuidString + UUID().uuidString
                        try tx.setValue(.string(filler), at: ["big", "t\(table)", "sub", "k\(key)"])
                    }
                }
            }
            try odb.setValue("kept", at: ["small"])
            #expect(try odbRecordCount(odb.store) == 1 + 1 + 50 * 2)
            try odb.store.compact()
            let full = try odb.store.statistics().segments.reduce(0) { $0 + $1.bytes }
            #expect(try odb.delete(["BIG"]))
            #expect(try odbRecordCount(odb.store) == 1)
            try odb.store.compact()
            let after = try odb.store.statistics().segments.reduce(0) { $0 + $1.bytes }
            #expect(after * 10 < full, "\(after) bytes after, \(full) before")
            #expect(try odb.value(at: ["small"]) == .string("kept"))
            #expect(try odb.value(at: ["big", "t1", "sub", "k1"]) == nil)
        }
    }

    @Test func valuesOfEveryKindRoundTrip() throws {
        let directory = TemporaryStore("odb-values")
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let values: [String: ODBValue] = [
            "bool": .bool(true), "false": .bool(false), "int": .int(-42), "big": .int(Int.max), "small": .int(Int.min),
            "double": .double(3.5), "date": .date(date), "string": .string("Grüße, 世界"),
            "data": .data(Data([0, 1, 2, 255])),
        ]
        try withODB(directory) { (odb: ODB) throws in
            for (key, value) in values {
                try odb.setValue(value, at: ["values", key], applicationType: key == "data" ? "bin" : nil)
            }
        }
        try withODB(directory) { (odb: ODB) throws in
            for (key, value) in values { #expect(try odb.value(at: ["values", key]) == value) }
            #expect(try odb.object(at: ["values", "data"])?.applicationType == "bin")
            #expect(try odb.value(at: ["values", "int"], as: Int.self) == -42)
            #expect(try odb.value(at: ["values", "int"], as: String.self) == nil)
            #expect(try odb.value(at: ["values", "int"], as: Double.self) == -42)
            #expect(try odb.value(at: ["values", "date"], as: Date.self) == date)
        }
    }

    @Test func keysFoldCaseWithOneFixedFolding() throws {
        let directory = TemporaryStore("odb-fold")
        try withODB(directory) { (odb: ODB) throws in
            try odb.setValue(1, at: ["Straße"])
            #expect(try odb.value(at: ["STRASSE"]) == .int(1))
            #expect(try odb.value(at: ["strasse"]) == .int(1))
            try odb.setValue(2, at: ["FEeDs"])
            #expect(try odb.value(at: ["feeds"]) == .int(2))
            try odb.setValue(3, at: ["Caf\u{E9}"])
            #expect(try odb.value(at: ["CAFE\u{301}"]) == .int(3))
            try odb.setValue(4, at: ["ΟΔΟΣ"])
            #expect(try odb.value(at: ["οδος"]) == .int(4))
            #expect(try odb.keys(at: []) == ["Café", "FEeDs", "Straße", "ΟΔΟΣ"])
            #expect(try odb.count(at: ["root"]) == 4)
        }
    }

    @Test func pathsParseAndPrint() throws {
        #expect(try ODBPath(parsing: "root.RSS.feeds") == ["RSS", "feeds"])
        #expect(try ODBPath(parsing: "") == [])
        #expect(try ODBPath(parsing: "ROOT") == [])
        #expect(try ODBPath(parsing: "a.\"b.c\".d") == ["a", "b.c", "d"])
        #expect(ODBPath(["a", "b.c", "q\"x"]).description == "a.\"b.c\".\"q\\\"x\"")
        #expect(try ODBPath(parsing: ODBPath(["a", "b.c", "q\"x"]).description) == ["a", "b.c", "q\"x"])
        #expect((try? ODBPath(parsing: "a..b")) == nil)
        #expect((try? ODBPath(parsing: "a.\"b")) == nil)
        #expect(ODBPath(["root", "root"]).keys == ["root"])
    }

    @Test func aReadOnlyStoreWithoutTablesReadsAsAnEmptyRoot() throws {
        let directory = TemporaryStore("odb-readonly")
        let store = try directory.open(options: odbTestOptions())
        try store.close()
        let readOnly = try directory.open(options: StoreOptions(createIfMissing: false, readOnly: true))
        let odb = try ODB(store: readOnly)
        #expect(try odb.keys(at: []) == [])
        #expect(try odb.value(at: ["a"]) == nil)
        #expect(odbError { try odb.setValue(1, at: ["a"]) }?.code == .store)
        try readOnly.close()
    }
}

/// Damaged table records give typed errors naming the record, and `verify` lists them.
@Suite struct ODBCorruptionTests {
    @Test func aDamagedTableRecordIsATypedErrorAndVerifyFindsIt() throws {
        let directory = TemporaryStore("odb-corrupt")
        let odb = try openODB(directory)
        defer { try? odb.close() }
        try odb.setValue("x", at: ["prefs", "name"])
        let root = try #require(try odb.store.root(named: "odb.root"))
        let prefs = try #require(try odb.store.get(root)?.references.first)
        for payload: [UInt8] in [[0x01, 0x05], [0x09], [0x01, 0x01, 0x03, 0x61], [0x01, 0x01, 0x01, 0x61, 0x7F]] {
            try odb.store.put(prefs, typeTag: TypeNames.tag(for: "logstore.odb.table"), payload: payload, pinned: false)
            let error = odbError { _ = try odb.value(at: ["prefs", "name"]) }
            #expect(error?.code == .corruptRecord, "\(payload): \(String(describing: error))")
            #expect(error?.objectID == prefs)
            #expect(try odb.verify().count == 1)
        }
    }
}
