import Foundation
import LogStore
import LogStorePersistent
import TestSupport
import Testing

@testable import LogStoreObjects

/// A `@Persistent` model with indexes: a query the index answers whole returns an unchanged model without
/// testing it again, except where the index and Swift disagree.
@Persistent("test.Reading") final class Reading {
    static let indexes: [IndexDefinition] = [
        .ordered(\Reading.label), .ordered(\Reading.at), .unique(\Reading.stamp), .ordered(\Reading.weight),
    ]
    var label: String
    var at: Date
    var stamp: Date
    var weight: Double
    init(label: String, at: Date, stamp: Date, weight: Double) {
        self.label = label
        self.at = at
        self.stamp = stamp
        self.weight = weight
    }
}

@Suite struct IndexedModelQueryTests {
    let base = Date(timeIntervalSinceReferenceDate: 800_000_000)
    let notANumber = Date(timeIntervalSinceReferenceDate: .nan)

    /// Stores readings and returns a new context (every model unchanged).
    private func stored(_ objects: ObjectStore, _ readings: [Reading]) throws -> ObjectContext {
        let context = objects.makeContext()
        for reading in readings { try context.insert(reading) }
        try context.save()
        return objects.makeContext()
    }

    /// The index compares a prefix by bytes, `starts(with:)` by characters: "q\u{308}x" starts with the
    /// bytes of "q" but its first character is "q̈".
    @Test func aPrefixIsTestedByCharacters() throws {
        try withObjects(TemporaryStore("model-prefix"), types: [Reading.self]) { objects in
            let context = try stored(
                objects,
                [
                    Reading(label: "q\u{308}x", at: base, stamp: base, weight: 1),
                    Reading(label: "qa", at: base, stamp: base.addingTimeInterval(1), weight: 1),
                ])
            let descriptor = FetchDescriptor<Reading>(predicate: #Predicate { $0.label.starts(with: "q") })
            #expect(try context.explain(descriptor).index == "label")
            #expect(try context.fetch(descriptor).map(\.label) == ["qa"])
            #expect(try context.fetchIDs(descriptor).count == 1)
            #expect(try context.fetchCount(descriptor) == 1)
        }
    }

    /// A stored NaN date is after every date in the index, but `>` says false.
    @Test func aStoredNaNIsTestedInARange() throws {
        try withObjects(TemporaryStore("model-nan-range"), types: [Reading.self]) { objects in
            let context = try stored(
                objects,
                [
                    Reading(label: "nan", at: notANumber, stamp: base, weight: .nan),
                    Reading(
                        label: "later", at: base.addingTimeInterval(60), stamp: base.addingTimeInterval(1), weight: 2),
                ])
            let cutoff = base
            let dates = FetchDescriptor<Reading>(predicate: #Predicate { $0.at > cutoff })
            #expect(try context.explain(dates).index == "at")
            #expect(try context.fetch(dates).map(\.label) == ["later"])
            #expect(try context.fetchCount(dates) == 1)
            let weights = FetchDescriptor<Reading>(predicate: #Predicate { $0.weight >= 1.5 })
            #expect(try context.fetch(weights).map(\.label) == ["later"])
            #expect(try context.fetchIDs(weights).count == 1)
        }
    }

    /// NaN asked for: the index holds it equal to itself, `==` does not.
    @Test func aNaNLookupFindsNothing() throws {
        try withObjects(TemporaryStore("model-nan-lookup"), types: [Reading.self]) { objects in
            let context = try stored(objects, [Reading(label: "nan", at: base, stamp: notANumber, weight: 1)])
            #expect(try context.fetchUnique(Reading.self, where: \.stamp, equals: notANumber) == nil)
            #expect(try context.fetchUniqueID(Reading.self, where: \.stamp, equals: notANumber) == nil)
            let stamp = notANumber
            #expect(try context.fetch(FetchDescriptor<Reading>(predicate: #Predicate { $0.stamp == stamp })).isEmpty)
        }
    }

    /// Without NaN, the index answers a `Double` range whole, -0 equal to 0 as in Swift.
    @Test func aDoubleRangeIsAnsweredAsSwiftCompares() throws {
        try withObjects(TemporaryStore("model-double"), types: [Reading.self]) { objects in
            let weights: [Double] = [-1, -0.0, 0, 0.5, 1, 2.5]
            let context = try stored(
                objects,
                weights.enumerated().map { index, weight in
                    Reading(
                        label: "w\(index)", at: base, stamp: base.addingTimeInterval(Double(index)), weight: weight)
                })
            for low in [-1.0, -0.0, 0.0, 0.75] {
                let descriptor = FetchDescriptor<Reading>(predicate: #Predicate { $0.weight >= low })
                let expected = weights.enumerated().filter { $0.element >= low }.map { "w\($0.offset)" }
                #expect(try context.fetch(descriptor).map(\.label).sorted() == expected, "weight >= \(low)")
                #expect(try context.fetchCount(descriptor) == expected.count, "weight >= \(low)")
            }
        }
    }

    /// An index built from more records than one thread reads (the records are read and the entries sorted
    /// in parts on two threads) answers as a scan would.
    @Test func aLargeBuildAnswersAsAScan() throws {
        let directory = TemporaryStore("model-large-build")
        let count = 24_000
        try withObjects(directory, types: [Reading.self]) { objects in
            var context = objects.makeContext()
            for index in 0..<count {
                // Times out of order, so that the sorted entries differ from the id order.
                let minute = Double((index * 7_919) % count)
                try context.insert(
                    Reading(
                        label: "r\(index)", at: base.addingTimeInterval(minute * 60),
                        stamp: base.addingTimeInterval(Double(index)), weight: Double(index % 10)))
                if index % 4_000 == 3_999 {
                    try context.save()
                    context = objects.makeContext()
                }
            }
        }
        // Open again: the indexes are built from the records by the first query.
        try withObjects(directory, types: [Reading.self]) { objects in
            let fresh = objects.makeContext()
            let low = base.addingTimeInterval(1_000 * 60)
            let high = base.addingTimeInterval(1_300 * 60)
            let range = FetchDescriptor<Reading>(
                predicate: #Predicate { $0.at >= low && $0.at < high }, sortBy: [SortDescriptor(\.at)])
            let expected = (0..<count).filter { (1_000..<1_300).contains(($0 * 7_919) % count) }
                .sorted { ($0 * 7_919) % count < ($1 * 7_919) % count }.map { "r\($0)" }
            #expect(try fresh.fetch(range).map(\.label) == expected)
            for index in [0, 11_999, 23_999] {
                let found = try fresh.fetchUnique(
                    Reading.self, where: \.stamp, equals: base.addingTimeInterval(Double(index)))
                #expect(found?.label == "r\(index)")
            }
        }
    }

    /// A field number listed twice among those to read (a name and an alias of the same number) keeps the
    /// value read.
    @Test func aFieldNumberWantedTwiceKeepsItsValue() throws {
        let payload: [UInt8] = [
            ObjectFormat.versionAllEager, ObjectFormat.Tag.keyed.rawValue, 3, ObjectFormat.Tag.string.rawValue, 1,
            UInt8(ascii: "x"), 0,
        ]
        let found = try IndexKeyReader.fields(payload, references: [], wanted: [3, 3])
        guard case .one(.string("x")) = found[3] else {
            Issue.record("field 3 read as \(String(describing: found[3]))")
            return
        }
    }
}
