@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// What a salvage copies and what it reports lost, worked out from a verifying load of the damaged store
/// and the frames its damaged bytes held (``SalvageInventory``).
///
/// - Every live object whose record reads back whole (frame checksum, payload decompressed) is copied.
/// - A lost frame is a loss only when nothing copied makes up for it: a lost put of an object whose copied
///   version is as new or newer, or that a surviving deletion removed after it, lost nothing.
/// - A reference of a copied object (or a root) to an object the copy does not have is listed, and the id
///   gets a placeholder record, so that the copy is a sound store.
/// - An unpinned object that something reached in the damaged store but nothing reaches in the copy (its
///   referrers are lost) is pinned in the copy and listed, so that no mark-sweep frees it unnoticed.
struct SalvagePlan {
    /// An object to copy: its id, where its record is, the ids it refers to, and whether to pin it.
    struct Object {
        var id: UInt64
        var entry: IndexEntry
        var references: [UInt64]
        var pin = false
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
        let manifest = directory + "/" + SegmentManifest.fileName
        for problem in loaded.problems where problem.file == manifest {
            report.doubts.append(
                "the segment manifest cannot be trusted (\(problem.message)): a segment deleted from the folder "
                    + "would go unnoticed")
        }
        readObjects()
        classify(inventory.frames, deletions: loaded.deletions)
        reportSplitBatches(inventory.splitBatchFrames)
        findDanglingReferences()
        findOrphans()
        highestID = max(loaded.highestID, loaded.reservedIDs > 0 ? loaded.reservedIDs - 1 : 0, inventory.highestID)
        highestID = max(highestID, inventory.frames.map(\.id).max() ?? 0, placeholders.keys.max() ?? 0)
        report.salvagedObjects = objects.count
        report.salvagedRoots = state.roots.count
        report.placeholders = placeholders.keys.sorted().map { ObjectID($0) }
        report.orphans = objects.filter(\.pin).map { ObjectID($0.id) }
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
        // Per id, the newest lost put and deletion (a frame whose sequence number cannot be trusted counts as
        // newest), and whether any lost frame's sequence number is unknown.
        var puts: [UInt64: LostFrame] = [:]
        var deletes: [UInt64: LostFrame] = [:]
        var rootChanges: [String: LostFrame] = [:]
        var uncertain: Set<UInt64> = []
        func newer(_ frame: LostFrame, than other: LostFrame?) -> Bool {
            guard let other else { return true }
            return (frame.sequence ?? .max) >= (other.sequence ?? .max)
        }
        for frame in frames {
            switch frame.kind {
            case .put, .delete:
                if frame.sequence == nil { uncertain.insert(frame.id) }
                if frame.kind == .put, newer(frame, than: puts[frame.id]) { puts[frame.id] = frame }
                if frame.kind == .delete, newer(frame, than: deletes[frame.id]) { deletes[frame.id] = frame }
            case .setRoot, .removeRoot:
                guard let name = frame.name else { continue }
                if newer(frame, than: rootChanges[name]) { rootChanges[name] = frame }
            default: continue
            }
        }
        let unreadable = Set(report.lostObjects.map(\.id.rawValue))
        for id in Set(puts.keys).union(deletes.keys).sorted() where !unreadable.contains(id) {
            let put = puts[id]
            let delete = deletes[id]
            let newest: LostFrame
            let isDeletion: Bool
            if let delete, (delete.sequence ?? .max) > (put?.sequence ?? 0) || put == nil {
                (newest, isDeletion) = (delete, true)
            } else if let put {
                (newest, isDeletion) = (put, false)
            } else {
                continue
            }
            let loss: SalvageReport.Loss
            if let entry = state.durableEntry(id) {
                let copied = state.sequence(of: entry) ?? 0
                if uncertain.contains(id) {
                    loss = .mayBeStale(copiedSequence: copied)
                } else {
                    // The same version copied from elsewhere (a compaction's output beside its input) is no loss.
                    if copied >= newest.sequence ?? .max { continue }
                    loss = isDeletion ? .deletionLost : .olderVersionCopied(sequence: copied)
                }
            } else {
                // Not live: a lost deletion lost nothing, nor did a put that a surviving deletion followed.
                if isDeletion { continue }
                if let sequence = newest.sequence, (deletions[id] ?? 0) > sequence { continue }
                loss = .lost
            }
            report.lostObjects.append(
                .init(
                    id: ObjectID(id), typeTag: put?.typeTag ?? state.durableEntry(id)?.typeTag, loss: loss,
                    file: newest.file, offset: newest.offset))
        }
        report.lostObjects.sort { $0.id < $1.id }
        for (name, frame) in rootChanges.sorted(by: { $0.key < $1.key })
        where (state.rootSequences[name] ?? 0) < frame.sequence ?? .max {
            report.lostRootChanges.append(
                .init(
                    name: name, lostTarget: frame.kind == .setRoot ? ObjectID(frame.id) : nil,
                    copiedTarget: state.roots[name], file: frame.file, offset: frame.offset))
        }
    }

    /// Objects copied (or deleted) by a format-1 batch that lost frames before them.
    private mutating func reportSplitBatches(_ frames: [LostFrame]) {
        let listed = Set(report.lostObjects.map(\.id))
        for frame in frames where frame.kind == .put || frame.kind == .delete {
            guard !listed.contains(ObjectID(frame.id)) else { continue }
            report.lostObjects.append(
                .init(
                    id: ObjectID(frame.id), typeTag: frame.kind == .put ? frame.typeTag : nil, loss: .batchPartlyLost,
                    file: frame.file, offset: frame.offset))
        }
        report.lostObjects.sort { $0.id < $1.id }
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

    /// Marks for pinning the unpinned objects nothing reaches in the copy (from a root or a pinned object),
    /// when anything was lost: what referred to them may be among the losses, and the copy's first
    /// mark-sweep would free them unnoticed. (Some may have been garbage awaiting mark-sweep in the damaged
    /// store already; which cannot be told once their referrers are gone.) A store that lost nothing is
    /// copied as it is, its garbage unpinned.
    private mutating func findOrphans() {
        guard
            !report.lostObjects.isEmpty || !report.lostRootChanges.isEmpty || !report.damagedRanges.isEmpty
                || !report.danglingReferences.isEmpty
        else { return }
        var positions: [UInt64: Int] = [:]
        positions.reserveCapacity(objects.count)
        for (position, object) in objects.enumerated() { positions[object.id] = position }
        var reached = [Bool](repeating: false, count: objects.count)
        var work = objects.indices.filter { objects[$0].entry.isPinned }
        work += state.roots.values.compactMap { positions[$0.rawValue] }
        while let position = work.popLast() {
            guard !reached[position] else { continue }
            reached[position] = true
            for target in objects[position].references {
                if let next = positions[target], !reached[next] { work.append(next) }
            }
        }
        for position in objects.indices where !reached[position] && !objects[position].entry.isPinned {
            objects[position].pin = true
        }
    }
}
