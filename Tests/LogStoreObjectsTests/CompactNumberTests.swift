import Foundation
import LogStore
import LogStoreExamples
import TestSupport
import Testing

@testable import LogStoreObjects

/// A class of `Double` and `Float` fields, encoded through `Codable`.
final class Measures: PersistentObject {
    static let typeName = "test.Measures"
    var double: Double
    var single: Float
    var doubles: [Double]

    init(double: Double, single: Float, doubles: [Double]) {
        self.double = double
        self.single = single
        self.doubles = doubles
    }
}

/// The same fields through ``FieldCodable`` (the path of `@Persistent` models).
final class FieldMeasures: PersistentObject, FieldCodable {
    static let typeName = "test.FieldMeasures"
    var double: Double
    var single: Float

    init(double: Double, single: Float) {
        self.double = double
        self.single = single
    }

    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(double, for: "double")
        try fields.write(single, for: "single")
    }

    init(fields: FieldReader) throws {
        double = try fields.read(Double.self, for: "double")
        single = try fields.read(Float.self, for: "single")
    }

    enum CodingKeys: String, CodingKey { case double, single }
}

/// A value that is an integer or a double, decoded by trying `Int` first (as JSON-value enums do): a stored
/// `Double` must come back a double, whatever its value.
enum Number: Codable, Equatable {
    case integer(Int)
    case double(Double)

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let integer = try? container.decode(Int.self) {
            self = .integer(integer)
        } else {
            self = .double(try container.decode(Double.self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .integer(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        }
    }
}

/// A `Double` beside a lazy reference: a payload of version 4 (eager count, compact numbers).
final class LazyMeasure: PersistentObject {
    static let typeName = "test.LazyMeasure"
    var scale: Double
    var target: LazyRef<Measures>
    var eager: Measures

    init(scale: Double, target: Measures, eager: Measures) {
        self.scale = scale
        self.target = LazyRef(target)
        self.eager = eager
    }
}

/// A `Double` under a unique index.
final class Level: PersistentObject {
    static let typeName = "test.Level"
    static let indexes: [IndexDefinition] = [.unique(\Level.value, field: "value")]
    var value: Double
    var label: String

    init(_ value: Double, _ label: String) {
        self.value = value
        self.label = label
    }
}

final class Numbers: PersistentObject {
    static let typeName = "test.Numbers"
    var values: [Number]
    init(values: [Number]) { self.values = values }
}

@Suite struct CompactNumberTests {
    let types: [any PersistentObject.Type] = [
        Measures.self, FieldMeasures.self, Numbers.self, LazyMeasure.self, Level.self,
    ]

    /// Doubles at every edge of the encodings: integers below and at 2⁴⁸, -0, values a Float holds and
    /// does not, infinities, NaNs with payload bits, subnormals.
    static let edgeDoubles: [Double] = [
        0, -0.0, 1, -1, 127, -4, 5.5, 0.5, 0.1, 1.0 / 3, 0x1p48 - 1, -(0x1p48 - 1), 0x1p48, -0x1p48, 0x1p53,
        0x1p53 + 2, 1e300, -1e-300, .infinity, -.infinity, .nan, Double(nan: 0x1234, signaling: false),
        -Double.nan, Double(nan: 0x55, signaling: true), .leastNonzeroMagnitude, 1e9, 0x1p30, 0x1p27 - 1,
        0x1p27, 0x1p47 + 1, .greatestFiniteMagnitude, Double(Float.greatestFiniteMagnitude),
        Double(Float.leastNonzeroMagnitude), 1e20, 3.0e-5,
    ]

    static let edgeFloats: [Float] = [
        0, -0.0, 3, -3, 0x1p20 - 1, 0x1p20, -0x1p20, 0.1, 1e20, .infinity, -.infinity, .nan,
        Float(nan: 0x12, signaling: false), Float(nan: 0x12, signaling: true), .leastNonzeroMagnitude,
        .greatestFiniteMagnitude,
    ]

    /// Every edge value, and random ones (printed seed), comes back bit for bit through `Codable` and
    /// through `FieldCodable`, fresh from the store.
    @Test(arguments: [false, true]) func doublesAndFloatsComeBackBitForBit(fieldCoding: Bool) throws {
        var random = SplitMix64(seed: testSeed("CompactNumberTests", default: 0x5EED_0D0B))
        var doubles = Self.edgeDoubles
        var floats = Self.edgeFloats
        for _ in 0..<300 {
            doubles.append(Double(bitPattern: random.next()))
            doubles.append(Double(Int64(bitPattern: random.next()) >> (random.next() % 64)))
            doubles.append(Double(Float(bitPattern: UInt32(truncatingIfNeeded: random.next()))))
            floats.append(Float(bitPattern: UInt32(truncatingIfNeeded: random.next())))
            floats.append(Float(Int32(truncatingIfNeeded: random.next()) >> Int32(random.next() % 32)))
        }
        while floats.count < doubles.count { floats.append(Float(floats.count)) }
        let directory = TemporaryStore("compact-numbers")
        try withObjects(directory, types: types, tuning: ObjectStoreTuning(usesFieldCoding: fieldCoding)) { objects in
            let context = objects.makeContext()
            var ids: [ObjectID] = []
            var fieldIDs: [ObjectID] = []
            for (double, single) in zip(doubles, floats) {
                ids.append(try context.insert(Measures(double: double, single: single, doubles: [double, -double])))
                fieldIDs.append(try context.insert(FieldMeasures(double: double, single: single)))
            }
            try context.save()
            let fresh = objects.makeContext()
            for (index, (double, single)) in zip(doubles, floats).enumerated() {
                let loaded = try #require(try fresh.object(id: ids[index], as: Measures.self))
                #expect(loaded.double.bitPattern == double.bitPattern, "\(double)")
                #expect(loaded.single.bitPattern == single.bitPattern, "\(single)")
                #expect(loaded.doubles.map(\.bitPattern) == [double, -double].map(\.bitPattern), "\(double)")
                let fields = try #require(try fresh.object(id: fieldIDs[index], as: FieldMeasures.self))
                #expect(fields.double.bitPattern == double.bitPattern, "\(double)")
                #expect(fields.single.bitPattern == single.bitPattern, "\(single)")
            }
        }
    }

    /// An integral `Double` takes a tag and its zigzag varint, one a `Float` holds exactly 5 bytes, any other
    /// 9; the payload says version 3 when it holds a compact number and stays version 1 when not.
    @Test func compactNumbersAreShorterAndMarkThePayloadVersion() throws {
        let directory = TemporaryStore("compact-numbers-bytes")
        try withObjects(directory, types: types) { objects in
            let context = objects.makeContext()
            func payload(_ double: Double, _ single: Float) throws -> [UInt8] {
                let id = try context.insert(FieldMeasures(double: double, single: single))
                try context.save()
                return try #require(try objects.store.get(id)).payload
            }
            let integral = try payload(-4, 3)
            let single = try payload(5.5, 3)
            let full = try payload(0.1, 0.1)
            #expect(integral[0] == ObjectFormat.versionAllEagerCompactNumbers)
            #expect(full[0] == ObjectFormat.versionAllEager)
            // version, keyed, field, tag + 1 byte, field, tag + 1 byte, end
            #expect(integral.count == 1 + 1 + 1 + 2 + 1 + 2 + 1)
            #expect(integral.contains(ObjectFormat.Tag.integralDouble.rawValue))
            #expect(single.count == integral.count + 3)
            #expect(full.count == 1 + 1 + 1 + 9 + 1 + 5 + 1)
            #expect(!full.contains(ObjectFormat.Tag.integralDouble.rawValue))
            // A large integer a Float holds exactly takes the Float's 4 bytes (its varint would take 5 or
            // more); one it does not hold, its varint.
            #expect(try payload(1e9, 0).count == integral.count + 3)
            #expect(try payload(0x1p30 + 1, 0).count == integral.count + 4)
            #expect(try payload(0x1p27 - 1, 0).count == integral.count + 3)
        }
    }

    /// The worked example of `Objects.md` ("The payload format"), byte for byte, with this store's field
    /// numbers.
    @Test func theGuidesWorkedExample() throws {
        let directory = TemporaryStore("compact-numbers-example")
        try withObjects(directory, types: drawingTypes) { objects in
            let context = objects.makeContext()
            let id = try context.insert(Circle(center: Point(x: -4, y: 5.5), radius: 0.5))
            try context.save()
            let names = objects.catalog.snapshot().names
            func number(_ name: String) throws -> UInt8 { UInt8(try #require(names.firstIndex(of: name))) }
            let expected: [UInt8] = [
                0x03, 0x0A,
                try number("center"), 0x0A,
                try number("x"), 0x10, 0x07,
                try number("y"), 0x11, 0x00, 0x00, 0xB0, 0x40,
                0x00,
                try number("radius"), 0x11, 0x00, 0x00, 0x00, 0x3F,
                0x00,
            ]
            #expect(try #require(try objects.store.get(id)).payload == expected)
        }
    }

    /// A payload with lazy references and compact numbers (version 4) keeps its eager count: the eager
    /// reference loads with the object, the lazy one on access.
    @Test func lazyReferencesBesideCompactNumbers() throws {
        let directory = TemporaryStore("compact-numbers-lazy")
        try withObjects(directory, types: types) { objects in
            let context = objects.makeContext()
            let id = try context.insert(
                LazyMeasure(
                    scale: 2, target: Measures(double: 1, single: 1, doubles: [7]),
                    eager: Measures(double: 0.25, single: 2, doubles: [])))
            try context.save()
            #expect(try #require(try objects.store.get(id)).payload[0] == ObjectFormat.versionWithLazyCompactNumbers)
            let fresh = objects.makeContext()
            let loaded = try #require(try fresh.object(id: id, as: LazyMeasure.self))
            #expect(loaded.scale == 2 && loaded.eager.double == 0.25)
            #expect(!loaded.target.isLoaded)
            #expect(try loaded.target.get().doubles == [7])
        }
    }

    /// Payloads of version 1 with every number in full (as stores written before compact numbers hold) read
    /// as before.
    @Test func fullWidthDoublesOfVersionOnePayloadsStillRead() throws {
        let directory = TemporaryStore("compact-numbers-old")
        try withObjects(directory, types: types) { objects in
            let context = objects.makeContext()
            let id = try context.insert(FieldMeasures(double: 0.1, single: 0.1))
            try context.save()
            let record = try #require(try objects.store.get(id))
            // 01 0A <double field> 06 <8 bytes> <single field> 07 <4 bytes> 00: set the 8 bytes to 3.0.
            var payload = record.payload
            #expect(payload[0] == ObjectFormat.versionAllEager && payload[3] == ObjectFormat.Tag.double.rawValue)
            withUnsafeBytes(of: (3.0).bitPattern.littleEndian) { payload.replaceSubrange(4..<12, with: $0) }
            let old = try objects.store.put(typeTag: record.typeTag, payload: payload)
            let loaded = try #require(try objects.makeContext().object(id: old, as: FieldMeasures.self))
            #expect(loaded.double == 3.0 && loaded.single == 0.1)
        }
    }

    /// An integral `Double` whose varint says 2⁴⁸ or more was not written by any writer: the read is refused
    /// as damage, not rounded.
    @Test func anOutOfRangeIntegralDoubleIsDamage() throws {
        let directory = TemporaryStore("compact-numbers-range")
        try withObjects(directory, types: types) { objects in
            let context = objects.makeContext()
            let id = try context.insert(FieldMeasures(double: 3, single: 0.5))
            try context.save()
            let record = try #require(try objects.store.get(id))
            // 03 0A <double field> 10 06 <single field> 11 <4 bytes> 00: the 3 becomes 2⁵⁰.
            var payload = record.payload
            #expect(payload[3] == ObjectFormat.Tag.integralDouble.rawValue && payload[4] == 6)
            var writer = ByteWriter(capacity: 10)
            writer.writeSigned(1 << 50)
            payload.replaceSubrange(4..<5, with: writer.bytes)
            let forged = try objects.store.put(typeTag: record.typeTag, payload: payload)
            #expect(throws: ObjectStoreError.self) {
                try objects.makeContext().object(id: forged, as: FieldMeasures.self)
            }
        }
    }

    /// A unique index over records of both encodings (a full-width `Double` of a store written before
    /// compact numbers, and compact ones): equal values are one key, ranges take both, and a save that
    /// repeats an old record's value is refused.
    @Test func indexKeysOfBothEncodingsAgree() throws {
        let directory = TemporaryStore("compact-numbers-index")
        try withObjects(directory, types: types) { objects in
            let context = objects.makeContext()
            let template = try context.insert(Level(0.1, "template"))
            try context.save()
            let record = try #require(try objects.store.get(template))
            // Version 1, every Double in 8 bytes, as before compact numbers: copies holding 1, 2 and 3.
            var old: [ObjectID] = []
            for value in [1.0, 2.0, 3.0] {
                var payload = record.payload
                let at = try #require(payload.firstIndex(of: ObjectFormat.Tag.double.rawValue))
                withUnsafeBytes(of: value.bitPattern.littleEndian) {
                    payload.replaceSubrange(at + 1..<at + 9, with: $0)
                }
                old.append(try objects.store.put(typeTag: record.typeTag, payload: payload))
            }
            let new = objects.makeContext()
            for value in [4.0, 5.0] { try new.insert(Level(value, "new \(value)")) }
            try new.save()
            let reader = objects.makeContext()
            #expect(try reader.fetchUniqueID(Level.self, where: \.value, equals: 2.0) == old[1])
            let low = 1.5
            let high = 4.5
            let range = try reader.fetch(
                FetchDescriptor<Level>(
                    predicate: #Predicate { $0.value >= low && $0.value <= high }, sortBy: [SortDescriptor(\.value)]))
            #expect(range.map(\.value) == [2, 3, 4])
            let clash = objects.makeContext()
            try clash.insert(Level(3, "again"))
            #expect(throws: ObjectStoreError.self) { try clash.save() }
        }
    }

    /// A field changed from `Double` to `Float` reads a stored compact `Double` (the value a Float holds).
    @Test func aFloatFieldReadsAStoredSingleDouble() throws {
        let directory = TemporaryStore("compact-numbers-float")
        let id = try withObjects(directory, types: [StoredAsDouble.self]) { objects in
            let context = objects.makeContext()
            let id = try context.insert(StoredAsDouble(value: 2.5))
            try context.save()
            return id
        }
        try withObjects(directory, types: [ReadAsFloat.self]) { objects in
            let loaded = try objects.makeContext().object(id: id, as: ReadAsFloat.self)
            #expect(loaded?.value == 2.5)
        }
    }

    /// A stored `Double` with an integral value is not an integer to a decoder that tries `Int` first: the
    /// value comes back as the case it was saved as.
    @Test func anIntegralDoubleIsNotReadAsAnInteger() throws {
        let directory = TemporaryStore("compact-numbers-enum")
        try withObjects(directory, types: types) { objects in
            let context = objects.makeContext()
            let values: [Number] = [.integer(3), .double(3), .double(-0.0), .double(2.5), .integer(-7), .double(1e300)]
            let id = try context.insert(Numbers(values: values))
            try context.save()
            let loaded = try #require(try objects.makeContext().object(id: id, as: Numbers.self))
            #expect(loaded.values == values)
            if case .double(let zero) = loaded.values[2] { #expect(zero.sign == .minus) }
        }
    }

    /// A field changed from `Double` to `Int` refuses the stored doubles, integral or not, with a typed
    /// error (as before compact numbers); a field changed from `Int` to `Double` reads the stored integers.
    @Test func anIntegerFieldRefusesAStoredDouble() throws {
        let directory = TemporaryStore("compact-numbers-mismatch")
        let ids = try withObjects(directory, types: [StoredAsDouble.self]) { objects in
            let context = objects.makeContext()
            let ids = [try context.insert(StoredAsDouble(value: 4)), try context.insert(StoredAsDouble(value: 4.5))]
            try context.save()
            return ids
        }
        try withObjects(directory, types: [ReadAsInteger.self]) { objects in
            for id in ids {
                #expect(throws: ObjectStoreError.self) {
                    try objects.makeContext().object(id: id, as: ReadAsInteger.self)
                }
            }
        }
        let integerID = try withObjects(directory, types: [ReadAsInteger.self]) { objects in
            let context = objects.makeContext()
            let id = try context.insert(ReadAsInteger(value: 9))
            try context.save()
            return id
        }
        try withObjects(directory, types: [StoredAsDouble.self]) { objects in
            let loaded = try objects.makeContext().object(id: integerID, as: StoredAsDouble.self)
            #expect(loaded?.value == 9)
        }
    }
}

/// One field, a `Double`.
final class StoredAsDouble: PersistentObject {
    static let typeName = "test.ChangedNumber"
    var value: Double
    init(value: Double) { self.value = value }
}

/// The same stored type, its field changed to `Float`.
final class ReadAsFloat: PersistentObject {
    static let typeName = "test.ChangedNumber"
    var value: Float
    init(value: Float) { self.value = value }
}

/// The same stored type, its field changed to `Int`.
final class ReadAsInteger: PersistentObject {
    static let typeName = "test.ChangedNumber"
    var value: Int
    init(value: Int) { self.value = value }
}
