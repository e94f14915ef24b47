import Foundation
import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// `logstore-tool tables` (alias `odb`), end to end.
@Suite struct ODBToolTests {
    @Test func setListExportDeleteAndImportFromTheShell() throws {
        let directory = TemporaryStore("odb-tool")
        try withODB(directory) { (odb: ODB) throws in
            try odb.setValue("My feed", at: ["RSS", "feeds", "abc", "editedName"])
            try odb.setValue(3, at: ["RSS", "feeds", "abc", "unread"])
        }
        let path = directory.path

        var result = try ToolRunner.run(["tables", path, "rss.FEEDS.abc"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("editedName  string  My feed"), "\(result.stdout)")
        #expect(result.stdout.contains("unread      int     3"), "\(result.stdout)")

        result = try ToolRunner.run(["odb", path, "RSS.feeds.abc.rating", "--set", "4.5", "--type", "double"])
        #expect(result.status == 0, "\(result.output)")
        result = try ToolRunner.run([
            "odb", path, "RSS.feeds.\"a.b\".note", "--set", "dotted", "--application-type", "txt",
        ])
        #expect(result.status == 0, "\(result.output)")
        result = try ToolRunner.run(["tables", path, "RSS.feeds", "--json"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("{\"key\": \"a.b\", \"kind\": \"table\"}"), "\(result.stdout)")

        result = try ToolRunner.run(["tables", path, "RSS.feeds.abc.unread", "--set", "many", "--type", "int"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("not an int"), "\(result.stderr)")

        result = try ToolRunner.run(["tables", path, "RSS", "--export", "-"])
        #expect(result.status == 0, "\(result.output)")
        let exported = result.stdout
        #expect(exported.contains("\"rating\": 4.5"), "\(exported)")
        #expect(
            exported.contains("{\"$type\": \"string\", \"$value\": \"dotted\", \"$applicationType\": \"txt\"}"),
            "\(exported)")

        result = try ToolRunner.run(["tables", path, "RSS", "--delete"])
        #expect(result.status == 0, "\(result.output)")
        result = try ToolRunner.run(["tables", path, "RSS"])
        #expect(result.status != 0)

        let file = directory.path + "/rss.json"
        try exported.write(toFile: file, atomically: true, encoding: .utf8)
        result = try ToolRunner.run(["tables", path, "backup.rss", "--import", file])
        #expect(result.status == 0, "\(result.output)")
        try withODB(directory) { (odb: ODB) throws in
            #expect(try odb.value(at: ["backup", "rss", "feeds", "abc", "rating"]) == .double(4.5))
            #expect(
                try odb.object(at: ["backup", "rss", "feeds", "a.b", "note"])
                    == .value(.string("dotted"), applicationType: "txt"))
            #expect(try odb.value(at: ["backup", "rss", "feeds", "abc", "editedName"]) == .string("My feed"))
            #expect(try odb.value(at: ["RSS"]) == nil)
        }
    }

    @Test func jsonRoundTripsEveryKind() throws {
        let directory = TemporaryStore("odb-json")
        try withODB(directory) { (odb: ODB) throws in
            let values: [String: ODBValue] = [
                "t": .bool(true), "i": .int(-7), "d": .double(2.0), "f": .double(0.25), "inf": .double(.infinity),
                "s": .string("quote \" and \\ and \n"), "date": .date(Date(timeIntervalSince1970: 1_700_000_000.5)),
                "data": .data(Data([1, 2, 3])), "$dollar": .string("kept"),
            ]
            for (key, value) in values { try odb.setValue(value, at: ["src", key]) }
            try odb.setValue(1, at: ["src", "nested", "deeper", "x"])
            try odb.ensureTable(["src", "empty"])
            let json = try odb.exportJSON(at: ["src"])
            try odb.importJSON(json, at: ["copy"])
            for (key, value) in values { #expect(try odb.value(at: ["copy", key]) == value, "\(key)") }
            #expect(try odb.value(at: ["copy", "nested", "deeper", "x"]) == .int(1))
            #expect(try odb.object(at: ["copy", "empty"]) == .table)
            #expect(try odb.exportJSON(at: ["copy"]) == json)
            #expect(odbError { try odb.importJSON("[1]", at: ["x"]) }?.code == .invalidJSON)
            #expect(odbError { try odb.importJSON("{\"a\": null}", at: ["x"]) }?.code == .invalidJSON)
            #expect(try odb.value(at: ["x"]) == nil)
        }
    }

    @Test func dynamicMemberSugarReadsAndWrites() throws {
        let directory = TemporaryStore("odb-sugar")
        try withODB(directory) { (odb: ODB) throws in
            let feedID = "abc"
            odb.RSS.feeds[feedID].editedName = "x"
            let name: String? = odb.RSS.feeds[feedID].editedName
            #expect(name == "x")
            odb.RSS.feeds[feedID].unread = 5
            let unread: Int? = odb.rss.FEEDS[feedID].Unread
            #expect(unread == 5)
            odb.RSS.feeds[feedID].editedName = nil as String?
            #expect(try odb.value(at: ["RSS", "feeds", feedID, "editedName"]) == nil)
            odb.counter = 1
            let counter: Int? = odb.counter
            #expect(counter == 1)
            // A failure cannot be thrown from a setter: it is reported.
            odb.counter.nested = "no"
            #expect(odb.lastAccessError?.code == .notATable)
        }
    }
}
