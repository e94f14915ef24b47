import CXXHash
import Foundation
import LogStore

/// The file that keeps one indexed class's indexes between opens (`index-TTTTTTTT.lsindex` in the store's
/// directory, `TTTTTTTT` the class's type tag in hexadecimal), so that the first query after an open reads
/// it instead of every record of the class. Its layout is in `Documentation/Format.md` ("Index files").
///
/// A file is trusted only for what it can prove: its checksum covers every byte; it names the store it was
/// written for (the identifier in the store's `STORE` file), the declaration it holds (a fingerprint of the
/// class's index definitions), and the sequence number it is exact at, which must not be past the store's.
/// And it holds, for each object, the version of the record its keys were read from: an object whose version
/// in the store differs has its record read again, one the store no longer holds is dropped, one the file
/// lacks is read. A file written only after the store synced everything up to its sequence number cannot
/// name a version that a crash took back.
enum IndexFile {
    static let magic: [UInt8] = Array("LSINDEX1".utf8)
    static let formatVersion: UInt16 = 2
    static let headerSize = 64
    static let fileExtension = "lsindex"

    /// The file name of the indexes of the class whose tag is `tag`.
    static func fileName(tag: UInt32) -> String {
        let hex = String(tag, radix: 16)
        return "index-" + String(repeating: "0", count: max(0, 8 - hex.count)) + hex + "." + fileExtension
    }

    /// The fingerprint of `type`'s declaration: its name, tags, field aliases and index definitions. A file
    /// whose fingerprint differs was written for other indexes and is not read.
    static func fingerprint(of type: IndexedType) -> UInt64 {
        fingerprint(
            typeName: type.registered.name, tags: Array(type.tags), aliases: type.aliases,
            indexes: type.definitions.map { ($0.name, $0.fields, $0.isUnique) })
    }

    /// The fingerprint of a declaration from its parts (`verify` computes it from the index catalog, which
    /// has no field aliases: it matches the files of classes without any).
    static func fingerprint(
        typeName: String, tags: [UInt32], aliases: [String: [String]],
        indexes: [(name: String, fields: [String], isUnique: Bool)]
    ) -> UInt64 {
        var text = "keys 1;type \(typeName);tags "
        text += tags.sorted().map(String.init).joined(separator: ",")
        for (name, earlier) in aliases.sorted(by: { $0.key < $1.key }) {
            text += ";alias \(name)=" + earlier.joined(separator: ",")
        }
        for index in indexes {
            text += ";index \(index.name)|" + index.fields.joined(separator: ",") + (index.isUnique ? "|unique" : "")
        }
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBytes { XXH3_64bits($0.baseAddress, $0.count) }
    }

    /// What ties a file to its store and declaration.
    struct Ties {
        var storeID: [UInt8]
        /// Nil to read a file whatever declaration it was written for (`verify`, which has no classes).
        var fingerprint: UInt64?
        var indexCount: Int
    }

    // MARK: Writing

    /// The bytes of a file holding `data`, exact at `sequence`.
    static func encode(_ data: TypeIndexData, sequence: UInt64, ties: Ties) -> [UInt8] {
        let entryCount = data.entries.reduce(0) { $0 + $1.count }
        var writer = ByteWriter(capacity: headerSize + data.objectCount * 5 + entryCount * 14 + 8)
        writer.bytes.append(contentsOf: repeatElement(0, count: headerSize))
        // Each section starts with its length, so that a reader can read them on several threads.
        func section(_ body: (inout ByteWriter) -> Void) {
            let start = writer.bytes.count
            writer.writeFixed64(0)
            body(&writer)
            let length = UInt64(writer.bytes.count - start - 8)
            writer.bytes.withUnsafeMutableBytes {
                $0.storeBytes(of: length.littleEndian, toByteOffset: start, as: UInt64.self)
            }
        }
        section { writer in
            // In increasing order of id, each as its distance from the one before.
            var objects: [(id: UInt64, version: UInt64)] = []
            objects.reserveCapacity(data.objectCount)
            data.versions.forEachEntry { id, version in objects.append((id.rawValue, version)) }
            if !objects.indices.dropFirst().allSatisfy({ objects[$0 - 1].id < objects[$0].id }) {
                objects.sort { $0.id < $1.id }
            }
            var previous: UInt64 = 0
            for (id, version) in objects {
                writer.writeVarint(id - previous)
                writer.writeVarint(version)
                previous = id
            }
        }
        for index in 0..<ties.indexCount {
            section { writer in
                let entries = data.entries[index]
                writer.writeVarint(UInt64(entries.count))
                var previous: [UInt8]?
                entries.forEach(from: entries.startPosition, to: entries.endPosition) { entry in
                    writer.writeVarint(entry.id.rawValue)
                    write(entry.key, after: &previous, to: &writer)
                    return true
                }
            }
        }
        let bodyLength = writer.bytes.count - headerSize
        writer.bytes.withUnsafeMutableBytes { raw in
            for (offset, byte) in magic.enumerated() { raw[offset] = byte }
            raw.storeBytes(of: formatVersion.littleEndian, toByteOffset: 8, as: UInt16.self)
            raw.storeBytes(of: UInt32(ties.indexCount).littleEndian, toByteOffset: 12, as: UInt32.self)
            for (offset, byte) in ties.storeID.prefix(16).enumerated() { raw[16 + offset] = byte }
            raw.storeBytes(of: (ties.fingerprint ?? 0).littleEndian, toByteOffset: 32, as: UInt64.self)
            raw.storeBytes(of: sequence.littleEndian, toByteOffset: 40, as: UInt64.self)
            raw.storeBytes(of: UInt64(data.objectCount).littleEndian, toByteOffset: 48, as: UInt64.self)
            raw.storeBytes(of: UInt64(bodyLength).littleEndian, toByteOffset: 56, as: UInt64.self)
        }
        let checksum = writer.bytes.withUnsafeBytes { XXH3_64bits($0.baseAddress, $0.count) }
        writer.writeFixed64(checksum)
        return writer.bytes
    }

    /// Writes `key`; a first field that is a string sharing at least two leading bytes with `previous` (the
    /// previous entry's first field, when a string) is written as the length of what they share and the
    /// rest. `previous` becomes the key's first field's bytes.
    private static func write(_ key: CompoundKey, after previous: inout [UInt8]?, to writer: inout ByteWriter) {
        writer.writeVarint(UInt64(1 + key.rest.count))
        if case .string(var text) = key.first {
            text.withUTF8 { utf8 in
                var shared = 0
                if let previous {
                    let limit = min(previous.count, utf8.count)
                    while shared < limit && previous[shared] == utf8[shared] { shared += 1 }
                }
                if shared >= 2 {
                    writer.write(11)
                    writer.writeVarint(UInt64(shared))
                    writer.writeVarint(UInt64(utf8.count - shared))
                    writer.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[shared...]))
                } else {
                    writer.write(7)
                    writer.writeVarint(UInt64(utf8.count))
                    writer.bytes.append(contentsOf: utf8)
                }
                if previous == nil { previous = [] }
                previous?.removeAll(keepingCapacity: true)
                previous?.append(contentsOf: utf8)
            }
        } else {
            previous = nil
            write(key.first, to: &writer)
        }
        for value in key.rest { write(value, to: &writer) }
    }

    private static func write(_ value: IndexValue, to writer: inout ByteWriter) {
        switch value {
        case .absent: writer.write(0)
        case .null: writer.write(1)
        case .bool(let flag): writer.write(flag ? 3 : 2)
        case .int(let number):
            writer.write(4)
            writer.writeSigned(number)
        case .uint(let number):
            writer.write(5)
            writer.writeFixed64(number)
        case .double(let number):
            writer.write(6)
            writer.writeFixed64(number.bitPattern)
        case .string(let text):
            writer.write(7)
            writer.writeString(text)
        case .bytes(let bytes):
            writer.write(8)
            writer.writeVarint(UInt64(bytes.count))
            writer.bytes.append(contentsOf: bytes)
        case .uuid(let uuid):
            writer.write(9)
            withUnsafeBytes(of: uuid.uuid) { writer.bytes.append(contentsOf: $0) }
        case .reference(let id):
            writer.write(10)
            writer.writeFixed64(id.rawValue)
        }
    }

    // MARK: Reading

    /// Why a file cannot be used, and where.
    struct Problem: Error, Sendable, CustomStringConvertible {
        var reason: String
        var offset: Int?
        /// Whether the file is sound but was written for other index definitions than the reader's.
        var isOtherDeclaration = false
        var description: String { reason + (offset.map { " at offset \($0)" } ?? "") }
    }

    /// The indexes a file holds, and the sequence number they are exact at.
    struct Contents {
        var data: TypeIndexData
        var sequence: UInt64
        /// The fingerprint of the declaration the file was written for.
        var fingerprint: UInt64
    }

    /// Reads the bytes of a file written for `ties`, with `unique` telling which of its indexes are unique.
    /// Checks the checksum, the ties, every count and bound, that each object is listed once, and that each
    /// index's entries are in order (no entry twice).
    static func decode(_ bytes: [UInt8], ties: Ties, unique: [Bool]) -> Result<Contents, Problem> {
        guard bytes.count >= headerSize + 8, bytes.prefix(8).elementsEqual(magic) else {
            return .failure(Problem(reason: "not an index file (wrong magic or shorter than its header)", offset: 0))
        }
        let stored = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self) }
        let computed = bytes.withUnsafeBytes { XXH3_64bits($0.baseAddress, $0.count - 8) }
        guard UInt64(littleEndian: stored) == computed else {
            return .failure(Problem(reason: "checksum mismatch", offset: bytes.count - 8))
        }
        func field<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            T(littleEndian: bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: T.self) })
        }
        guard field(8, UInt16.self) == formatVersion else {
            return .failure(Problem(reason: "unsupported index file version \(field(8, UInt16.self))", offset: 8))
        }
        guard field(10, UInt16.self) == 0 else {
            return .failure(Problem(reason: "reserved header bytes are not zero", offset: 10))
        }
        guard Int(field(12, UInt32.self)) == ties.indexCount,
            ties.fingerprint.map({ $0 == field(32, UInt64.self) }) ?? true
        else {
            return .failure(
                Problem(reason: "written for other index definitions", offset: 12, isOtherDeclaration: true))
        }
        guard bytes[16..<32].elementsEqual(ties.storeID) else {
            return .failure(Problem(reason: "written for another store", offset: 16))
        }
        let sequence = field(40, UInt64.self)
        let objectCount = field(48, UInt64.self)
        guard field(56, UInt64.self) == UInt64(bytes.count - headerSize - 8) else {
            return .failure(Problem(reason: "body length does not match the file's size", offset: 56))
        }
        // Each object takes at least 2 bytes (checked against its section below).
        guard objectCount <= UInt64(bytes.count / 2) else {
            return .failure(Problem(reason: "object count \(objectCount) exceeds the file", offset: 48))
        }
        // The sections: the objects, then one per index, each after its length.
        var sections: [Range<Int>] = []
        var offset = headerSize
        for _ in 0...ties.indexCount {
            guard bytes.count - 8 - offset >= 8 else {
                return .failure(Problem(reason: "the file ends before section \(sections.count)", offset: offset))
            }
            let length = field(offset, UInt64.self)
            guard length <= UInt64(bytes.count - 8 - offset - 8) else {
                return .failure(Problem(reason: "section length \(length) exceeds the file", offset: offset))
            }
            sections.append(offset + 8..<offset + 8 + Int(length))
            offset += 8 + Int(length)
        }
        guard offset == bytes.count - 8 else {
            return .failure(Problem(reason: "bytes after the last section", offset: offset))
        }
        let ranges = sections
        // Read on as many threads as Dispatch gives: the objects' versions and each index's entries (already
        // in order), then each index's tables.
        enum Section: Sendable {
            case versions(PagedIDMap<UInt64>)
            case entries([IndexEntryKey])
            case failed(Problem)
        }
        let read = concurrentMap(ranges.count) { number -> Section in
            do throws(Problem) {
                if number == 0 {
                    guard objectCount <= UInt64(ranges[0].count / 2) else {
                        throw Problem(reason: "object count \(objectCount) exceeds its section", offset: 48)
                    }
                    return .versions(try readVersions(bytes, ranges[0], count: Int(objectCount)))
                }
                return .entries(try readEntries(bytes, ranges[number]))
            } catch {
                return .failed(error)
            }
        }
        var versions = PagedIDMap<UInt64>()
        var lists: [[IndexEntryKey]] = []
        for section in read {
            switch section {
            case .versions(let read): versions = read
            case .entries(let list): lists.append(list)
            case .failed(let problem): return .failure(problem)
            }
        }
        let parts = TypeIndexData.IndexPart.build(lists, unique: unique)
        // Every object an index holds keys of is one the file lists (with the version its keys were read
        // from): a query never answers with an object the catch-up could not check.
        let listed = versions
        let unlisted = concurrentMap(parts.count) { number -> ObjectID? in
            let objects = parts[number].objects
            return objects.singleKeys.firstID { listed[$0] == nil }
                ?? objects.multipleKeys.keys.first { listed[$0] == nil }
        }
        for (number, id) in unlisted.enumerated() {
            guard let id else { continue }
            return .failure(
                Problem(reason: "index \(number) holds keys of object \(id), which the file does not list", offset: nil)
            )
        }
        let data = TypeIndexData(unique: unique, versions: versions, parts: parts)
        return .success(Contents(data: data, sequence: sequence, fingerprint: field(32, UInt64.self)))
    }

    /// The objects' versions, from the bytes `range` of `bytes`.
    private static func readVersions(_ bytes: [UInt8], _ range: Range<Int>, count: Int) throws(Problem)
        -> PagedIDMap<UInt64>
    {
        var reader = ByteReader(bytes, objectID: nil, typeName: nil)
        reader.offset = range.lowerBound
        var versions = PagedIDMap<UInt64>()
        do throws(ObjectStoreError) {
            var previous: UInt64 = 0
            for number in 0..<count {
                let distance = try reader.readVarint()
                guard number == 0 || distance > 0 else { throw reader.corrupt("object \(previous) listed twice") }
                let (id, overflow) = previous.addingReportingOverflow(distance)
                guard !overflow else { throw reader.corrupt("object id beyond 2^64") }
                versions.updateValue(try reader.readVarint(), forKey: ObjectID(rawValue: id))
                previous = id
            }
            guard reader.offset == range.upperBound else { throw reader.corrupt("the objects' section is longer") }
        } catch {
            throw Problem(reason: error.message, offset: reader.offset)
        }
        return versions
    }

    /// One index's entries, from the bytes `range` of `bytes`, checked to be in order.
    private static func readEntries(_ bytes: [UInt8], _ range: Range<Int>) throws(Problem) -> [IndexEntryKey] {
        var reader = ByteReader(bytes, objectID: nil, typeName: nil)
        reader.offset = range.lowerBound
        do throws(ObjectStoreError) {
            let count = try reader.readCount()
            // Each entry takes at least 3 bytes (an id, a field count and a kind).
            guard count <= (range.upperBound - reader.offset) / 3 else {
                throw reader.corrupt("entry count \(count) exceeds the index's section")
            }
            var list: [IndexEntryKey] = []
            list.reserveCapacity(count)
            // The previous entry's first field, when a string: a string that shares its start refers to it.
            var previous: [UInt8]?
            // Shared starts let a few bytes stand for a long string: the bytes they rebuild are bounded, so
            // that a small file cannot take the memory of a huge one.
            var sharedBudget = 64 * range.count + (64 << 20)
            for _ in 0..<count {
                let id = ObjectID(rawValue: try reader.readVarint())
                let entry = IndexEntryKey(key: try readKey(&reader, after: &previous, budget: &sharedBudget), id: id)
                if let last = list.last, !(last < entry) { throw reader.corrupt("entries out of order") }
                list.append(entry)
            }
            guard reader.offset == range.upperBound else { throw reader.corrupt("the index's section is longer") }
            return list
        } catch {
            throw Problem(reason: error.message, offset: reader.offset)
        }
    }

    private static func readKey(_ reader: inout ByteReader, after previous: inout [UInt8]?, budget: inout Int)
        throws(ObjectStoreError) -> CompoundKey
    {
        let count = try reader.readCount()
        guard count >= 1 else { throw reader.corrupt("a key with no field") }
        let first = try readFirstValue(&reader, after: &previous, budget: &budget)
        guard count > 1 else { return CompoundKey(first) }
        var values = [first]
        for _ in 1..<count { values.append(try readValue(&reader)) }
        return CompoundKey(values)
    }

    /// A key's first field: a value, or a string sharing its start with `previous` (kind 11), which becomes
    /// the field's bytes when it is a string. The shared bytes are taken from `budget`.
    private static func readFirstValue(_ reader: inout ByteReader, after previous: inout [UInt8]?, budget: inout Int)
        throws(ObjectStoreError) -> IndexValue
    {
        let start = reader.offset
        switch try reader.peekByte() {
        case 7:
            let value = try readValue(&reader)
            if case .string(var text) = value {
                text.withUTF8 { utf8 in
                    if previous == nil { previous = [] }
                    previous?.removeAll(keepingCapacity: true)
                    previous?.append(contentsOf: utf8)
                }
            }
            return value
        case 11:
            _ = try reader.readByte()
            let shared = try reader.readCount()
            let rest = try reader.readBytes(try reader.readCount())
            guard var bytes = previous, shared >= 1, shared <= bytes.count else {
                reader.offset = start
                throw reader.corrupt("a string sharing \(shared) bytes with a previous key that has fewer or none")
            }
            budget -= shared
            guard budget >= 0 else {
                reader.offset = start
                throw reader.corrupt("shared string starts rebuild more bytes than the file can account for")
            }
            previous = nil
            bytes.removeSubrange(shared...)
            bytes.append(contentsOf: rest)
            // ASCII is UTF-8 as it is (the generic validation costs runtime lookups on every call).
            let ascii = !bytes.contains { $0 >= 0x80 }
            guard let text = ascii ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
            else {
                reader.offset = start
                throw reader.corrupt("string is not UTF-8")
            }
            previous = bytes
            return .string(text)
        default:
            previous = nil
            return try readValue(&reader)
        }
    }

    private static func readValue(_ reader: inout ByteReader) throws(ObjectStoreError) -> IndexValue {
        switch try reader.readByte() {
        case 0: return .absent
        case 1: return .null
        case 2: return .bool(false)
        case 3: return .bool(true)
        case 4: return .int(try reader.readSigned())
        case 5:
            // A key holds an unsigned integer only above `Int64.max` (below, the same number is an `.int`).
            let number = try reader.readFixed64()
            guard number > UInt64(Int64.max) else { throw reader.corrupt("unsigned key \(number) fits a signed one") }
            return .uint(number)
        case 6: return .double(Double(bitPattern: try reader.readFixed64()))
        case 7: return .string(try reader.readString())
        case 8: return .bytes(Array(try reader.readBytes(try reader.readCount())))
        case 9:
            let bytes = Array(try reader.readBytes(16))
            let uuid = bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }
            return .uuid(UUID(uuid: uuid))
        case 10: return .reference(ObjectID(rawValue: try reader.readFixed64()))
        case let kind: throw reader.corrupt("unknown key kind \(kind)")
        }
    }
}
