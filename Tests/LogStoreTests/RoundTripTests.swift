import Foundation
import TestSupport
import Testing

@testable @_spi(Testing) import LogStore

@Suite struct RoundTripTests {
    @Test func everyRecordShapeRoundTripsAndSurvivesReopen() throws {
        let directory = TemporaryStore()
        let shapes: [(refs: Int, payload: [UInt8])] = [
            (0, []),
            (0, payloadBytes(1 << 20, seed: 1)),
            (3, payloadBytes(1 << 20, seed: 2, compressible: true)),
            (0, payloadBytes(5000, seed: 3)),
            (1000, payloadBytes(200, seed: 4)),
            (LogStoreLimits.maxReferenceCount, payloadBytes(10, seed: 5)),
        ]
        var expected: [Record] = []
        do {
            let store = try directory.open(options: testOptions())
            let target = try store.put(typeTag: 99, payload: [])
            expected.append(Record(id: target, typeTag: 99, payload: []))
            for (index, shape) in shapes.enumerated() {
                let references = [ObjectID](repeating: target, count: shape.refs)
                let id = try store.put(typeTag: UInt32(index), references: references, payload: shape.payload)
                let record = Record(id: id, typeTag: UInt32(index), references: references, payload: shape.payload)
                #expect(try store.get(id) == record)
                expected.append(record)
            }
            try store.close()
        }
        let reopened = try directory.open(options: testOptions())
        for record in expected {
            #expect(try reopened.get(record.id) == record)
        }
        #expect(try reopened.count() == expected.count)
        #expect(reopened.recovery == nil)
        try reopened.close()
    }

    @Test func compressiblePayloadIsStoredSmaller() throws {
        let directory = TemporaryStore()
        let store = try directory.open(options: testOptions(segmentSize: 1 << 24))
        let payload = payloadBytes(100_000, seed: 9, compressible: true)
        let id = try store.put(typeTag: 1, payload: payload)
        #expect(try store.get(id)?.payload == payload)
        try store.close()
        let size = try FileManager.default.attributesOfItem(atPath: directory.segmentFiles()[0])[.size] as? Int
        #expect((size ?? .max) < 80_000)
    }

    @Test func deletesRootsAndBatches() throws {
        let directory = TemporaryStore()
        var store = try directory.open(options: testOptions())
        let a = try store.put(typeTag: 1, payload: [1])
        let b = try store.put(typeTag: 2, references: [a], payload: [2])
        try store.setRoot("main", to: b)
        #expect(throws: LogStoreError.self) { try store.delete(a) }  // b still refers to it
        try store.put(b, typeTag: 2, payload: [2])
        try store.delete(a)
        #expect(try store.get(a) == nil)
        #expect(try !store.contains(a))
        #expect(throws: LogStoreError.self) { try store.delete(a) }

        let c = store.newID()
        let d = store.newID()
        try store.write { batch in
            batch.put(c, typeTag: 1, payload: [3])
            batch.put(d, typeTag: 1, references: [c], payload: [4])
            batch.setRoot("other", to: d)
            batch.removeRoot("main")
        }
        try store.close()
        store = try directory.open(options: testOptions())
        #expect(try store.roots() == ["other": d])
        #expect(try store.ids() == [b, c, d])
        #expect(try store.ids(ofType: 1) == [c, d])
        #expect(try store.count(ofType: 2) == 1)
        #expect(try store.countsByType() == [1: 2, 2: 1])
        #expect(try store.get(d)?.references == [c])
        #expect(try store.get(b)?.references == [])
        let next = store.newID()
        #expect(next > d)
        try store.close()
    }
}
