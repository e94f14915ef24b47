import LogStore

/// The indexes a store's classes declare, stored in the store so that tools (`logstore-tool stats` and
/// `verify`) can list and check them without the classes: one pinned record of type `logstore.indexes`.
///
/// Payload (integers are varints, strings a varint byte count then UTF-8):
///
/// ```
/// catalog := version(u8 = 1) count entry*
/// entry   := typeName tagCount tag(u32 little-endian)* indexName fieldCount field* unique(u8: 0 or 1)
/// ```
///
/// `tags` are the engine type tags of the class and its registered subclasses. The object store writes
/// the record when it opens a writable store whose catalog differs from what its classes declare
/// (entries of classes it does not register are kept); a read-only open leaves it alone.
struct IndexCatalog: Equatable, Sendable {
    struct Entry: Equatable, Sendable {
        var typeName: String
        var tags: [UInt32]
        var name: String
        var fields: [String]
        var isUnique: Bool
    }

    static let typeName = TypeNames.indexCatalogTypeName
    static let tag = TypeNames.indexCatalogTag
    static let version: UInt8 = 1

    var entries: [Entry] = []

    init(entries: [Entry]) { self.entries = entries }

    /// The catalog of the indexed types of an object store.
    init(_ types: [IndexedType]) {
        entries = types.flatMap { type in
            type.definitions.map { index in
                Entry(
                    typeName: type.registered.name, tags: type.tags.sorted(), name: index.name, fields: index.fields,
                    isUnique: index.isUnique)
            }
        }
    }

    func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(Self.version)
        writer.writeVarint(UInt64(entries.count))
        for entry in entries {
            writer.writeString(entry.typeName)
            writer.writeVarint(UInt64(entry.tags.count))
            for tag in entry.tags { writer.writeFixed32(tag) }
            writer.writeString(entry.name)
            writer.writeVarint(UInt64(entry.fields.count))
            for field in entry.fields { writer.writeString(field) }
            writer.write(entry.isUnique ? 1 : 0)
        }
        return writer.bytes
    }

    /// - throws: ``ObjectStoreError`` `corruptPayload` naming the record and offset.
    init(decoding payload: [UInt8], id: ObjectID) throws(ObjectStoreError) {
        var reader = ByteReader(payload, objectID: id, typeName: Self.typeName)
        let version = try reader.readByte()
        guard version == Self.version else { throw reader.corrupt("unknown index catalog version \(version)") }
        let count = try reader.readCount()
        for _ in 0..<count {
            let typeName = try reader.readString()
            let tagCount = try reader.readCount()
            var tags: [UInt32] = []
            for _ in 0..<tagCount { tags.append(try reader.readFixed32()) }
            let name = try reader.readString()
            let fieldCount = try reader.readCount()
            var fields: [String] = []
            for _ in 0..<fieldCount { fields.append(try reader.readString()) }
            let unique = try reader.readByte()
            guard unique <= 1 else { throw reader.corrupt("unique flag \(unique) is neither 0 nor 1") }
            entries.append(Entry(typeName: typeName, tags: tags, name: name, fields: fields, isUnique: unique == 1))
        }
        guard reader.isAtEnd else { throw reader.corrupt("bytes after the last index") }
    }

    /// The stored catalog and its record's id; nil when the store has none.
    static func load(from view: Snapshot) throws(ObjectStoreError) -> (IndexCatalog, ObjectID)? {
        guard let id = view.ids(ofType: tag).first else { return nil }
        let record: Record?
        do {
            record = try view.get(id)
        } catch {
            throw ObjectStoreError(error)
        }
        guard let record else { return nil }
        return (try IndexCatalog(decoding: record.payload, id: id), id)
    }

    /// Writes the catalog of `types` into `store` when it differs from the stored one (keeping the entries
    /// of classes that `types` do not name). Does nothing on a read-only store.
    /// - throws: ``ObjectStoreError`` `store` or `corruptPayload`.
    static func record(_ types: [IndexedType], registered: Set<String>, in store: Store) throws(ObjectStoreError) {
        let view: Snapshot
        do {
            view = try store.snapshot()
        } catch {
            throw ObjectStoreError(error)
        }
        let stored = try load(from: view)
        let kept = stored?.0.entries.filter { !registered.contains($0.typeName) } ?? []
        let wanted = IndexCatalog(entries: kept + IndexCatalog(types).entries)
        guard wanted != stored?.0, !(stored == nil && wanted.entries.isEmpty) else { return }
        var batch = WriteBatch()
        batch.put(stored?.1 ?? store.newID(), typeTag: tag, payload: wanted.encoded(), pinned: true)
        do {
            try store.write(batch)
        } catch  where error.code == .readOnly {
            return
        } catch {
            throw ObjectStoreError(error)
        }
    }
}
