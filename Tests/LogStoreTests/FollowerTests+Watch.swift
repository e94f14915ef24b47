import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

/// `logstore-tool watch`, run as a separate process beside a writer in this one.
extension FollowerTests {
    @Test func watchPrintsEachCommittedBatchAsOneJSONLine() throws {
        let directory = TemporaryStore("follow-watch")
        let writer = try directory.open(options: Self.writerOptions())
        let first = try writer.put(typeTag: 1, payload: [1])
        let child = try RunningTool(["watch", directory.path, "--count", "4"])
        #expect(child.waitForError(containing: "watching", timeout: 60), "the tool did not start following")

        let (leaf, holder) = (writer.newID(), writer.newID())
        try writer.write { batch in
            batch.put(leaf, typeTag: 3, payload: [2], pinned: false)
            batch.put(holder, typeTag: 4, references: [leaf], payload: [3])
            batch.setRoot("main", to: holder)
            batch.setRoot("a \"quoted\" name", to: first)
            batch.setRoot("main", to: first)
        }
        try writer.write { batch in
            batch.removeRoot("main")
            batch.delete(holder)
        }
        let (a, b) = (writer.newID(), writer.newID())
        try writer.write { batch in
            batch.put(a, typeTag: 5, references: [b], payload: [4], pinned: false)
            batch.put(b, typeTag: 6, references: [a], payload: [5], pinned: false)
        }
        #expect(try writer.collectGarbage().collected == 2)
        try writer.put(typeTag: 1, payload: [6])

        #expect(child.waitForExit(timeout: 60), "watch did not stop after --count 4")
        let result = child.finish()
        #expect(result.status == 0 && !result.signaled, "\(result.output)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let references = "\"freedBy\":\"referenceCounting\""
        #expect(
            lines == [
                "{\"sequence\":2,\"written\":[{\"id\":\(leaf),\"type\":3},{\"id\":\(holder),\"type\":4}],"
                    + "\"deleted\":[],\"freed\":[],\(references),"
                    + "\"rootsSet\":{\"main\":\(first),\"a \\\"quoted\\\" name\":\(first)},\"rootsRemoved\":[]}",
                "{\"sequence\":3,\"written\":[],\"deleted\":[{\"id\":\(holder),\"type\":4}],"
                    + "\"freed\":[{\"id\":\(leaf),\"type\":3}],\(references),\"rootsSet\":{},\"rootsRemoved\":[\"main\"]}",
                "{\"sequence\":4,\"written\":[{\"id\":\(a),\"type\":5},{\"id\":\(b),\"type\":6}],\"deleted\":[],"
                    + "\"freed\":[],\(references),\"rootsSet\":{},\"rootsRemoved\":[]}",
                "{\"sequence\":5,\"written\":[],\"deleted\":[],\"freed\":[{\"id\":\(a),\"type\":5},{\"id\":\(b),\"type\":6}],"
                    + "\"freedBy\":\"markSweep\",\"rootsSet\":{},\"rootsRemoved\":[]}",
            ], "\(result.output)")
        // Every line is JSON.
        for line in lines { #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "\(line)") }
    }

    @Test func watchSaysWhatItMissedBeforeTheOpenAndStopsOnCtrlC() throws {
        let directory = TemporaryStore("follow-watch-after")
        let writer = try directory.open(options: Self.writerOptions())
        for index in 0..<3 { try writer.put(typeTag: 1, payload: [UInt8(index)]) }
        let child = try RunningTool(["watch", directory.path, "--after", "1"])
        #expect(child.waitForError(containing: "watching", timeout: 60), "the tool did not start following")
        let id = try writer.put(typeTag: 2, payload: [9])
        #expect(child.waitForOutput(containing: "\"sequence\":4", timeout: 30))
        child.interrupt()
        #expect(child.waitForExit(timeout: 30), "watch did not stop on SIGINT")
        let result = child.finish()
        #expect(result.status == 0 && !result.signaled, "\(result.output)")
        #expect(
            result.stdout.split(separator: "\n").map(String.init) == [
                "{\"missed\":{\"after\":1,\"through\":3}}",
                "{\"sequence\":4,\"written\":[{\"id\":\(id),\"type\":2}],\"deleted\":[],\"freed\":[],"
                    + "\"freedBy\":\"referenceCounting\",\"rootsSet\":{},\"rootsRemoved\":[]}",
            ], "\(result.output)")

        let refused = try ToolRunner.run(["watch", directory.path, "--count", "0"])
        #expect(refused.status != 0 && refused.stderr.contains("--count must be at least 1"), "\(refused.output)")
    }
}
