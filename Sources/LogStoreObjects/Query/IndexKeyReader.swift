import Foundation
import LogStore

/// Reads the index keys of a stored record from its payload, without decoding the object: the top-level
/// fields an index names are found by their numbers, and their values turned into ``IndexValue``s
/// (references through the record's reference list).
struct IndexKeyReader {
    /// For each index of a type, for each of its fields, the field numbers to look for: the current name's
    /// first, then the old names' (``PersistentObject/fieldAliases``). Empty when no record names it yet.
    let numbers: [[[Int]]]
    /// Whether each index has a single field (an array field then gives one key per element).
    let single: [Bool]
    /// Every field number of ``numbers``, each once (a few: searched in order, faster than hashing).
    let wanted: [Int]
    /// The values of one record, a slot per wanted number (reused from record to record: an array made per
    /// record costs an allocation and a runtime metadata lookup).
    private var values: [FieldValues?]

    init(definitions: [ResolvedIndex], aliases: [String: [String]], catalog: KeyCatalog.Snapshot) {
        numbers = definitions.map { definition in
            definition.fields.map { field in
                ([field] + (aliases[field] ?? [])).compactMap { catalog.numbers[$0] }
            }
        }
        single = definitions.map { $0.fields.count == 1 }
        wanted = Array(Set(numbers.joined().joined())).sorted()
        values = Array(repeating: nil, count: wanted.count)
    }

    /// The keys of each index for a record: one key per index, or, for a single-field index on an array
    /// field, one per element. A payload that cannot be read gives every index one absent key (the object
    /// is then read and tested by every query, and reports its damage when it is loaded).
    mutating func keys(payload: [UInt8], references: [ObjectID]) -> [[CompoundKey]] {
        for slot in values.indices { values[slot] = nil }
        do {
            try Self.read(payload, references: references, wanted: wanted, into: &values)
        } catch {
            return numbers.map { fields in [CompoundKey(fields.map { _ in IndexValue.absent })] }
        }
        /// The value of the first of `candidates` (field numbers) the record holds.
        func value(_ candidates: [Int]) -> FieldValues? {
            for number in candidates {
                if let slot = wanted.firstIndex(of: number), let found = values[slot] { return found }
            }
            return nil
        }
        var result: [[CompoundKey]] = []
        result.reserveCapacity(numbers.count)
        for (index, fields) in numbers.enumerated() {
            if single[index] {
                switch fields.first.flatMap(value) {
                case .none: result.append([CompoundKey(.absent)])
                case .one(let value): result.append([CompoundKey(value)])
                case .many(let elements):
                    var unique: [IndexValue] = []
                    for element in elements where !unique.contains(element) { unique.append(element) }
                    result.append(unique.map { CompoundKey($0) })
                }
            } else {
                result.append([
                    CompoundKey(
                        fields.map { candidates -> IndexValue in
                            if case .one(let found) = value(candidates) { return found }
                            return .absent
                        })
                ])
            }
        }
        return result
    }

    enum FieldValues {
        case one(IndexValue)
        case many([IndexValue])
    }

    /// The values of the `wanted` top-level fields of a payload, by field number.
    static func fields(_ payload: [UInt8], references: [ObjectID], wanted: [Int]) throws(ObjectStoreError)
        -> [Int: FieldValues]
    {
        var values = [FieldValues?](repeating: nil, count: wanted.count)
        try read(payload, references: references, wanted: wanted, into: &values)
        var found: [Int: FieldValues] = [:]
        // A number listed twice has its value in its first slot only.
        for (slot, number) in wanted.enumerated() where found[number] == nil { found[number] = values[slot] }
        return found
    }

    /// Reads the values of the `wanted` top-level fields of a payload into `values` (one slot per wanted
    /// number, in its order).
    private static func read(
        _ payload: [UInt8], references: [ObjectID], wanted: [Int], into values: inout [FieldValues?]
    ) throws(ObjectStoreError) {
        var reader = ByteReader(payload, objectID: nil, typeName: nil)
        let version = try reader.readByte()
        if ObjectFormat.hasEagerCount(version: version) {
            _ = try reader.readVarint()
        } else if !ObjectFormat.isKnown(version: version) {
            throw reader.corrupt("unknown payload version \(version)")
        }
        guard try reader.readByte() == ObjectFormat.Tag.keyed.rawValue else { return }
        while try reader.peekByte() != 0 {
            let number = Int(clamping: try reader.readVarint())
            guard let slot = wanted.firstIndex(of: number) else {
                try reader.skipValue()
                continue
            }
            let tag = try reader.peekByte()
            let found: FieldValues
            if tag == ObjectFormat.Tag.unkeyed.rawValue {
                reader.offset += 1
                var elements: [IndexValue] = []
                while try reader.peekByte() != 0 { elements.append(try value(&reader, references)) }
                reader.offset += 1
                found = .many(elements)
            } else {
                found = .one(try value(&reader, references))
            }
            values[slot] = found
        }
    }

    /// One value; containers give `absent` (and are skipped).
    private static func value(_ reader: inout ByteReader, _ references: [ObjectID]) throws(ObjectStoreError)
        -> IndexValue
    {
        let raw = try reader.peekByte()
        guard let tag = ObjectFormat.Tag(rawValue: raw) else { throw reader.corrupt("unknown value tag \(raw)") }
        switch tag {
        case .keyed, .unkeyed, .map, .end:
            try reader.skipValue()
            return .absent
        default: reader.offset += 1
        }
        switch tag {
        case .null: return .null
        case .falseValue: return .bool(false)
        case .trueValue: return .bool(true)
        case .signed: return .int(try reader.readSigned())
        case .unsigned: return try reader.readVarint().indexValue
        case .double: return .double(Double(bitPattern: try reader.readFixed64()))
        case .float, .singleDouble: return .double(Double(Float(bitPattern: try reader.readFixed32())))
        case .integralDouble: return .int(try reader.readIntegralDouble())
        case .string:
            let bytes = try reader.readBytes(try reader.readCount())
            if bytes.allSatisfy({ $0 < 0x80 }) { return .string(String(decoding: bytes, as: UTF8.self)) }
            guard let string = String(validating: bytes, as: UTF8.self) else {
                throw reader.corrupt("string is not UTF-8")
            }
            return string.indexValue
        case .bytes: return .bytes(Array(try reader.readBytes(try reader.readCount())))
        case .uuid:
            let bytes = Array(try reader.readBytes(16))
            let uuid = (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            )
            return .uuid(UUID(uuid: uuid))
        case .reference:
            let index = try reader.readVarint()
            guard index < UInt64(references.count) else { return .absent }
            return .reference(references[Int(index)])
        case .lazyReference: return .reference(ObjectID(try reader.readVarint()))
        case .keyed, .unkeyed, .map, .end: return .absent
        }
    }
}
