@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// What a salvage copies and what it reports lost, worked out from a verifying load of the damaged store
/// and the frames its damaged bytes held (``SalvageInventory``).
///
/// - Every live object whose record reads back whole (frame checksum, payload decompressed) is copied.
/// - A lost frame is a loss only when nothing copied makes up for it: a lost put of an object whose copied
///   version is newer, or that a surviving deletion removed after it, lost nothing.
/// - A reference of a copied object (or a root) to an object the copy does not have is listed, and the id
///   gets a placeholder record, so that the copy is a sound store.
struct SalvagePlan {
    /// An object to copy: its id, where its record is, and the ids it refers to.
    struct Object {
        var id: UInt64
        var entry: IndexEntry
        var references: [UInt64]
    }

    /// The verifying load: its index and mapped segments are what the copy is read from.
    let state: IndexState
    var objects: [Object] = []
    /// The reason given in each placeholder record, by id.
    var placeholders: [UInt64: String] = [:]
    /// The highest id the source used or reserved: the copy reserves ids through it.
    var highestID: UInt64 = 0
    var report = SalvageReport()

    init(directory: String, loaded: StoreLoader.Loaded, io: SystemIO) {
        state = loaded.state
        let inventory = SalvageInventory(directory: directory, loaded: loaded, io: io)
        report.sequence = loaded.maxSequence
        report.damagedRanges = inventory.ranges
        report.notes = loaded.notes + inventory.notes
        report.problems = loaded.problems.map { .init(file: $0.file, offset: $0.offset, message: $0.message) }
        readObjects()
        classify(inventory.frames, deletions: loaded.deletions)
        findDanglingReferences()
        highestID = max(loaded.highestID, loaded.reservedIDs > 0 ? loaded.reservedIDs - 1 : 0)
        highestID = max(highestID, placeholders.keys.max() ?? 0)
        report.salvagedObjects = objects.count
        report.salvagedRoots = state.roots.count
        report.placeholders = placeholders.keys.sorted().map { ObjectID($0) }
    }

    /// Reads every live object's record; one that does not read back whole is lost as unreadable.
    private mutating func readObjects() {
        var objects: [Object] = []
        var lost: [SalvageReport.LostObject] = []
        let state = self.state
        state.forEachDurable { id, entry in
            let path = state.segments.file(entry.segment)?.path ?? "segment \(entry.segment)"
            do throws(LogStoreError) {
                guard let file = state.segments.file(entry.segment) else {
                    throw LogStoreError(.missingSegment, "its segment is missing", file: path)
                }
                let (record, _) = try RecordReader.record(
                    ObjectID(id), entry, in: file, dictionaries: state.dictionaries)
                objects.append(Object(id: id, entry: entry, references: record.references.map(\.rawValue)))
            } catch {
                lost.append(
                    .init(
                        id: ObjectID(id), typeTag: entry.typeTag, loss: .unreadable(error.message), file: path,
                        offset: UInt64(entry.offset)))
            }
        }
        self.objects = objects
        report.lostObjects += lost
    }

    /// Turns the frames the damage took into losses, where nothing copied makes up for them.
    private mutating func classify(_ frames: [LostFrame], deletions: [UInt64: UInt64]) {
        var puts: [UInt64: LostFrame] = [:]
        var deletes: [UInt64: LostFrame] = [:]
        var rootChanges: [String: LostFrame] = [:]
        for frame in frames {
            switch frame.kind {
            case .put where (puts[frame.id]?.sequence ?? 0) <= frame.sequence: puts[frame.id] = frame
            case .delete where (deletes[frame.id]?.sequence ?? 0) <= frame.sequence: deletes[frame.id] = frame
            case .setRoot, .removeRoot:
                guard let name = frame.name else { continue }
                if (rootChanges[name]?.sequence ?? 0) <= frame.sequence { rootChanges[name] = frame }
            default: continue
            }
        }
        let unreadable = Set(report.lostObjects.map(\.id.rawValue))
        for id in Set(puts.keys).union(deletes.keys).sorted() where !unreadable.contains(id) {
            let put = puts[id]
            let delete = deletes[id]
            let newest: LostFrame
            let isDeletion: Bool
            if let delete, delete.sequence > put?.sequence ?? 0 {
                (newest, isDeletion) = (delete, true)
            } else if let put {
                (newest, isDeletion) = (put, false)
            } else {
                continue
            }
            let loss: SalvageReport.Loss
            if let entry = state.durableEntry(id) {
                let copied = state.sequence(of: entry) ?? 0
                if copied > newest.sequence { continue }
                loss = isDeletion ? .deletionLost : .olderVersionCopied(sequence: copied)
            } else {
                // Not live: a lost deletion lost nothing, nor did a put that a surviving deletion followed.
                if isDeletion || (deletions[id] ?? 0) > newest.sequence { continue }
                loss = .lost
            }
            report.lostObjects.append(
                .init(
                    id: ObjectID(id), typeTag: put?.typeTag ?? state.durableEntry(id)?.typeTag, loss: loss,
                    file: newest.file, offset: newest.offset))
        }
        report.lostObjects.sort { $0.id < $1.id }
        for (name, frame) in rootChanges.sorted(by: { $0.key < $1.key })
        where (state.rootSequences[name] ?? 0) < frame.sequence {
            report.lostRootChanges.append(
                .init(
                    name: name, lostTarget: frame.kind == .setRoot ? ObjectID(frame.id) : nil,
                    copiedTarget: state.roots[name], file: frame.file, offset: frame.offset))
        }
    }

    /// Lists references to objects the copy will not have, and gives each such id a placeholder.
    private mutating func findDanglingReferences() {
        let copied = Set(objects.lazy.map(\.id))
        let lost = Dictionary(
            report.lostObjects.map { ($0.id.rawValue, $0.loss) }, uniquingKeysWith: { first, _ in first })
        func placeholder(_ target: UInt64) {
            guard placeholders[target] == nil else { return }
            placeholders[target] =
                lost[target].map { "object \(target) was lost by damage to its store (\($0))" }
                ?? "object \(target) was not live in the damaged store"
        }
        for object in objects {
            for target in object.references where !copied.contains(target) {
                report.danglingReferences.append(
                    .init(referrer: ObjectID(object.id), root: nil, target: ObjectID(target)))
                placeholder(target)
            }
        }
        for (name, target) in state.roots.sorted(by: { $0.key < $1.key }) where !copied.contains(target.rawValue) {
            report.danglingReferences.append(.init(referrer: nil, root: name, target: target))
            placeholder(target.rawValue)
        }
    }
}
