import Foundation
import LogStore

/// The ODB's record formats (specified in `Documentation/ODB.md`, "Record formats"): every constant,
/// the encoder and the decoder.
enum ODBFormat {
    /// The named root that points at the root table.
    static let rootName = "odb.root"
    /// Engine type tag of table records: `TypeNames.tag(for: "logstore.odb.table")`.
    static let tableTag = TypeNames.tag(for: "logstore.odb.table")
    /// Engine type tag of bucket records: `TypeNames.tag(for: "logstore.odb.bucket")`.
    static let bucketTag = TypeNames.tag(for: "logstore.odb.bucket")

    /// First payload byte: the record's form.
    static let inlineForm: UInt8 = 1
    static let hashedForm: UInt8 = 2
    static let bucketForm: UInt8 = 3

    /// Entry kinds (low 7 bits of the kind byte).
    static let kindTable: UInt8 = 0
    static let kindFalse: UInt8 = 1
    static let kindTrue: UInt8 = 2
    static let kindInt: UInt8 = 3
    static let kindDouble: UInt8 = 4
    /// A date as seconds since 1970: written by earlier versions, still read (the conversion from `Date`'s
    /// own value, seconds since 2001, rounds: a date read back could be off by about 10⁻⁷ s).
    static let kindDateSince1970: UInt8 = 5
    static let kindString: UInt8 = 6
    static let kindData: UInt8 = 7
    /// A date as `Date`'s own value, seconds since 2001-01-01 UTC (`timeIntervalSinceReferenceDate`): exact.
    static let kindDate: UInt8 = 8
    /// Kind-byte flag: an application type string follows the kind byte.
    static let applicationTypeFlag: UInt8 = 0x80

    /// An inline table becomes a hashed one above this many children…
    static let maxInlineEntries = 128
    /// …or above this many payload bytes.
    static let maxInlineBytes = 8 << 10
    /// A bucket splits above this many entries…
    static let maxBucketEntries = 64
    /// …or above this many payload bytes (a bucket of one huge value never splits further).
    static let maxBucketBytes = 8 << 10
    /// The largest directory depth (2^24 buckets).
    static let maxDepth = 24

    // MARK: - Encoding

    /// The payload and references of `node`.
    static func encode(_ node: ODBNode) -> (payload: [UInt8], references: [ObjectID]) {
        var bytes: [UInt8] = []
        var references: [ObjectID] = []
        switch node {
        case .inline(let table):
            bytes.reserveCapacity(16 + table.count * 16)
            bytes.append(inlineForm)
            appendEntries(table, to: &bytes, references: &references)
        case .bucket(let depth, let table):
            bytes.reserveCapacity(16 + table.count * 16)
            bytes.append(bucketForm)
            bytes.append(UInt8(depth))
            appendEntries(table, to: &bytes, references: &references)
        case .hashed(let directory):
            bytes.reserveCapacity(2 + directory.buckets.count * 2)
            bytes.append(hashedForm)
            bytes.append(UInt8(directory.depth))
            var positions: [ObjectID: Int] = [:]
            for bucket in directory.buckets {
                let position: Int
                if let known = positions[bucket] {
                    position = known
                } else {
                    position = references.count
                    positions[bucket] = position
                    references.append(bucket)
                }
                appendVarint(UInt64(position), to: &bytes)
            }
        }
        return (bytes, references)
    }

    private static func appendEntries(_ table: EntryTable, to bytes: inout [UInt8], references: inout [ObjectID]) {
        appendVarint(UInt64(table.count), to: &bytes)
        for entry in table.entries {
            appendString(entry.key, to: &bytes)
            switch entry.content {
            case .table(let id):
                bytes.append(kindTable)
                appendVarint(UInt64(references.count), to: &bytes)
                references.append(id)
            case .value(let value, let applicationType):
                let flag = applicationType == nil ? 0 : applicationTypeFlag
                switch value {
                case .bool(let flagValue): bytes.append((flagValue ? kindTrue : kindFalse) | flag)
                case .int: bytes.append(kindInt | flag)
                case .double: bytes.append(kindDouble | flag)
                case .date: bytes.append(kindDate | flag)
                case .string: bytes.append(kindString | flag)
                case .data: bytes.append(kindData | flag)
                }
                if let applicationType { appendString(applicationType, to: &bytes) }
                switch value {
                case .bool: break
                case .int(let number):
                    appendVarint(UInt64(bitPattern: Int64((number << 1) ^ (number >> 63))), to: &bytes)
                case .double(let number): appendUInt64(number.bitPattern, to: &bytes)
                case .date(let date): appendUInt64(date.timeIntervalSinceReferenceDate.bitPattern, to: &bytes)
                case .string(let string): appendString(string, to: &bytes)
                case .data(let data):
                    appendVarint(UInt64(data.count), to: &bytes)
                    bytes.append(contentsOf: data)
                }
            }
        }
    }

    @inline(__always)
    static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    private static func appendUInt64(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    private static func appendString(_ string: String, to bytes: inout [UInt8]) {
        appendVarint(UInt64(string.utf8.count), to: &bytes)
        bytes.append(contentsOf: string.utf8)
    }

    // MARK: - Decoding

    /// Decodes the record `record` (a table or bucket record).
    /// - throws: ``ODBError`` `corruptRecord` naming the record and the byte offset.
    static func decode(_ record: Record) throws(ODBError) -> ODBNode {
        var reader = Reader(bytes: record.payload, id: record.id)
        let form = try reader.byte()
        switch form {
        case inlineForm where record.typeTag == tableTag:
            return .inline(try reader.entries(references: record.references))
        case bucketForm where record.typeTag == bucketTag:
            let depth = Int(try reader.byte())
            guard depth <= maxDepth else { throw reader.corrupt("bucket depth \(depth) is over \(maxDepth)") }
            return .bucket(depth: depth, try reader.entries(references: record.references))
        case hashedForm where record.typeTag == tableTag:
            let depth = Int(try reader.byte())
            guard depth <= maxDepth else { throw reader.corrupt("directory depth \(depth) is over \(maxDepth)") }
            var buckets: [ObjectID] = []
            buckets.reserveCapacity(1 << depth)
            for _ in 0..<(1 << depth) {
                let position = try reader.varint()
                guard position < UInt64(record.references.count) else {
                    throw reader.corrupt("bucket reference \(position) of \(record.references.count)")
                }
                buckets.append(record.references[Int(position)])
            }
            try reader.expectEnd()
            return .hashed(ODBDirectory(depth: depth, buckets: buckets))
        default:
            throw ODBError(
                .corruptRecord,
                "record \(record.id) of type tag \(record.typeTag) has form byte \(form): not an ODB table or bucket",
                objectID: record.id)
        }
    }

    /// Reads a payload, checking every length against the bytes left.
    struct Reader {
        let bytes: [UInt8]
        let id: ObjectID
        var position = 0

        init(bytes: [UInt8], id: ObjectID) {
            self.bytes = bytes
            self.id = id
        }

        func corrupt(_ reason: String) -> ODBError {
            ODBError(.corruptRecord, "record \(id) at payload byte \(position): \(reason)", objectID: id)
        }

        mutating func byte() throws(ODBError) -> UInt8 {
            guard position < bytes.count else { throw corrupt("unexpected end of payload") }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func varint() throws(ODBError) -> UInt64 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let next = try byte()
                guard shift < 64 else { throw corrupt("varint longer than 10 bytes") }
                result |= UInt64(next & 0x7F) << shift
                if next < 0x80 { return result }
                shift += 7
            }
        }

        mutating func uint64() throws(ODBError) -> UInt64 {
            guard bytes.count - position >= 8 else { throw corrupt("8-byte number past the end") }
            var value: UInt64 = 0
            for index in 0..<8 { value |= UInt64(bytes[position + index]) << UInt64(index * 8) }
            position += 8
            return value
        }

        mutating func slice() throws(ODBError) -> ArraySlice<UInt8> {
            let length = try varint()
            guard length <= UInt64(bytes.count - position) else {
                throw corrupt("length \(length) past the end (\(bytes.count - position) bytes left)")
            }
            defer { position += Int(length) }
            return bytes[position..<position + Int(length)]
        }

        mutating func string() throws(ODBError) -> String {
            let start = position
            let slice = try slice()
            guard let string = String(validating: slice, as: UTF8.self) else {
                position = start
                throw corrupt("string is not valid UTF-8")
            }
            return string
        }

        mutating func expectEnd() throws(ODBError) {
            guard position == bytes.count else { throw corrupt("\(bytes.count - position) bytes after the end") }
        }

        mutating func entries(references: [ObjectID]) throws(ODBError) -> EntryTable {
            let count = try varint()
            guard count <= UInt64(bytes.count) else { throw corrupt("entry count \(count) is over the payload size") }
            var table = EntryTable(capacity: Int(count))
            for _ in 0..<count {
                let key = try string()
                let kindByte = try byte()
                let applicationType = kindByte & applicationTypeFlag != 0 ? try string() : nil
                let content: ODBContent
                switch kindByte & ~applicationTypeFlag {
                case kindTable:
                    let position = try varint()
                    guard position < UInt64(references.count) else {
                        throw corrupt("table reference \(position) of \(references.count)")
                    }
                    content = .table(references[Int(position)])
                case kindFalse: content = .value(.bool(false), applicationType: applicationType)
                case kindTrue: content = .value(.bool(true), applicationType: applicationType)
                case kindInt:
                    let zigzag = try varint()
                    let number = Int64(bitPattern: (zigzag >> 1) ^ (0 &- (zigzag & 1)))
                    content = .value(.int(Int(number)), applicationType: applicationType)
                case kindDouble:
                    content = .value(.double(Double(bitPattern: try uint64())), applicationType: applicationType)
                case kindDate:
                    let seconds = Double(bitPattern: try uint64())
                    content = .value(
                        .date(Date(timeIntervalSinceReferenceDate: seconds)), applicationType: applicationType)
                case kindDateSince1970:
                    let seconds = Double(bitPattern: try uint64())
                    content = .value(.date(Date(timeIntervalSince1970: seconds)), applicationType: applicationType)
                case kindString: content = .value(.string(try string()), applicationType: applicationType)
                case kindData: content = .value(.data(Data(try slice())), applicationType: applicationType)
                default: throw corrupt("unknown entry kind \(kindByte)")
                }
                table.append(ODBEntry(key: key, content: content), folded: ODBKey.fold(key))
            }
            try expectEnd()
            return table
        }
    }
}
