import LogStore

/// What a store's indexes hold, read from its records without its classes: for `logstore-tool stats`
/// (sizes) and `verify` (unique indexes that two objects share a key of, records whose keys cannot be
/// read).
public struct IndexSummary: Sendable, Codable, Equatable {
    /// The class that declares the index.
    public var typeName: String
    /// The index's name.
    public var name: String
    /// Its fields, in key order.
    public var fields: [String]
    /// Whether it is unique.
    public var isUnique: Bool
    /// How many objects it covers.
    public var objects: Int
    /// How many entries it holds (an array field gives one per element).
    public var entries: Int
    /// Objects whose record lacks a field of the index (stored before the field existed) or holds a value
    /// an index cannot order: every query through the index reads them.
    public var absent: Int
    /// Memory the index takes in an object store that has built it, estimated: 80 bytes per entry (the
    /// ordered entry and the object's key), 96 more for a unique index's hash table (between 64 and 128 as
    /// it fills and doubles), and 16 per object (its version), plus the bytes of string and byte keys
    /// longer than 15 bytes (shorter ones are stored inline).
    public var estimatedMemoryBytes: Int
    /// For a unique index, keys that more than one object holds (at most 20), with the objects.
    public var duplicates: [String: [UInt64]]
}

extension IndexSummary {
    /// The indexes the store's catalog lists, each measured by reading the payloads of its class's
    /// records (no object is decoded), as of one snapshot.
    /// - throws: ``ObjectStoreError`` `store` when the store cannot be read, `corruptPayload` when the
    ///   catalog or field-name records cannot.
    public static func summaries(of store: Store) throws(ObjectStoreError) -> [IndexSummary] {
        let view: Snapshot
        do {
            view = try store.snapshot()
        } catch {
            throw ObjectStoreError(error)
        }
        guard let (catalog, _) = try IndexCatalog.load(from: view) else { return [] }
        let names = try KeyCatalog(loadingFrom: store).snapshot()
        var summaries: [IndexSummary] = []
        for entry in catalog.entries {
            let index = ResolvedIndex(name: entry.name, fields: entry.fields, isUnique: entry.isUnique, keyPaths: [])
            var reader = IndexKeyReader(definitions: [index], aliases: [:], catalog: names)
            var summary = IndexSummary(
                typeName: entry.typeName, name: entry.name, fields: entry.fields, isUnique: entry.isUnique, objects: 0,
                entries: 0, absent: 0, estimatedMemoryBytes: 0, duplicates: [:])
            var holders: [CompoundKey: [UInt64]] = [:]
            for tag in entry.tags {
                for id in view.ids(ofType: tag) {
                    let record: Record?
                    do {
                        record = try view.get(id)
                    } catch {
                        throw ObjectStoreError(error)
                    }
                    guard let record else { continue }
                    let keys = reader.keys(payload: record.payload, references: record.references)[0]
                    summary.objects += 1
                    summary.entries += keys.count
                    summary.estimatedMemoryBytes += 16 + keys.count * (entry.isUnique ? 176 : 80)
                    for key in keys {
                        for value in key.values {
                            if case .string(let text) = value, text.utf8.count > 15 {
                                summary.estimatedMemoryBytes += text.utf8.count
                            }
                            if case .bytes(let bytes) = value { summary.estimatedMemoryBytes += bytes.count }
                        }
                    }
                    if keys.contains(where: \.hasAbsent) { summary.absent += 1 }
                    if entry.isUnique {
                        for key in keys where !key.isExemptFromUniqueness {
                            holders[key, default: []].append(id.rawValue)
                        }
                    }
                }
            }
            for (key, ids) in holders where ids.count > 1 && summary.duplicates.count < 20 {
                summary.duplicates[key.description] = ids.sorted()
            }
            summaries.append(summary)
        }
        return summaries
    }
}
