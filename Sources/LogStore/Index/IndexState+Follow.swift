@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Applying the batches a store open read-only read from a writer's log (``Store/refresh()``): their
/// effects as replay applies them, the incoming reference counts kept as the writer keeps them, and the
/// description observers receive.
extension IndexState {
    /// Applies `batch`, a committed batch newer than every batch the state holds, and returns what it did.
    /// Call ``finishReplay()`` after the last batch of a lock hold.
    ///
    /// A delete frame carries no type tag: a deleted or freed object's is the one its entry had.
    mutating func applyFollowed(_ batch: FollowedBatch) -> CommittedBatch {
        // The referrer index grows with the writer's puts only: a followed batch makes it build again.
        if referrerIndex.isBuilt { referrerIndex = ReferrerIndex() }
        var committed = CommittedBatch.Parts()
        /// The entries and root targets the batch changes, as they were before it.
        var entriesBefore: [UInt64: IndexEntry?] = [:]
        var rootsBefore: [String: ObjectID?] = [:]
        var retained: UInt64 = 0
        var control = 0
        for frame in batch.frames {
            let effect: IndexEffect?
            switch frame.kind {
            case .put:
                if entriesBefore[frame.id] == nil { entriesBefore[frame.id] = .some(index.entry(frame.id)) }
                let entry = IndexEntry(
                    segment: batch.segment, offset: frame.offset, length: frame.length, typeTag: frame.typeTag,
                    flags: frame.flags.contains(.pinned) ? IndexEntry.pinnedFlag : 0)
                effect = .put(id: frame.id, entry: entry)
                committed.written.append(ObjectChange(id: ObjectID(frame.id), typeTag: frame.typeTag))
            case .delete:
                let old = index.entry(frame.id)
                if entriesBefore[frame.id] == nil { entriesBefore[frame.id] = .some(old) }
                let change = ObjectChange(id: ObjectID(frame.id), typeTag: old?.typeTag ?? 0)
                if frame.flags.contains(.collected) {
                    committed.freed.append(change)
                } else {
                    committed.deleted.append(change)
                }
                effect = .delete(id: frame.id)
                control += 1
            case .setRoot, .removeRoot:
                control += 1
                retained += UInt64(frame.length)
                guard let name = frame.rootName else {
                    effect = nil
                    break
                }
                if rootsBefore[name] == nil { rootsBefore[name] = .some(roots[name]) }
                if frame.kind == .setRoot {
                    effect = .setRoot(name, ObjectID(frame.id), sequence: batch.sequence)
                    committed.rootsSet.append(RootChange(name: name, target: ObjectID(frame.id)))
                } else {
                    effect = .removeRoot(name, sequence: batch.sequence)
                    committed.rootsRemoved.append(name)
                }
            case .reserveIDs:
                retained += UInt64(frame.length)
                effect = nil
            case .seal:
                effect = nil
            }
            if let effect { applyReplayed(effect) }
        }
        recountIncoming(entriesBefore: entriesBefore, rootsBefore: rootsBefore)
        segments.recordBatch(
            batch.segment, endOffset: batch.end, sequence: batch.sequence, controlFrames: control,
            retainedBytes: retained)
        publish(through: batch.sequence)
        return CommittedBatch(
            sequence: batch.sequence, freedBy: batch.isMarkSweep ? .markSweep : .referenceCounting, parts: committed)
    }

    /// Brings the incoming reference counts up to date after a batch: the references of the records it
    /// replaced or deleted (`entriesBefore`) and of the roots it moved (`rootsBefore`) no longer count, those
    /// of the records and roots it left do. An object the batch put again keeps the count it had (other
    /// records still refer to it); a new one starts from none. Only live objects are counted.
    private mutating func recountIncoming(entriesBefore: [UInt64: IndexEntry?], rootsBefore: [String: ObjectID?]) {
        var change: [UInt64: Int64] = [:]
        for (id, before) in entriesBefore {
            if let before { for target in references(of: before) { change[target.rawValue, default: 0] -= 1 } }
            if let after = index.entry(id) {
                for target in references(of: after) { change[target.rawValue, default: 0] += 1 }
            }
        }
        for (name, before) in rootsBefore {
            if let before { change[before.rawValue, default: 0] -= 1 }
            if let after = roots[name] { change[after.rawValue, default: 0] += 1 }
        }
        for (id, before) in entriesBefore {
            guard let entry = index.entry(id) else { continue }
            let count = Int64(before?.incoming ?? 0) + (change.removeValue(forKey: id) ?? 0)
            index.set(id, entry.withIncoming(UInt32(clamping: count)))
        }
        for (id, difference) in change where difference != 0 {
            guard let entry = index.entry(id) else { continue }
            index.set(id, entry.withIncoming(UInt32(clamping: Int64(entry.incoming) + difference)))
        }
    }

    /// Counts a seal frame of `length` bytes that ends segment `number` at `end`: retained, never garbage.
    mutating func applyFollowedSeal(segment number: UInt32, end: UInt64, length: UInt64) {
        segments.recordSeal(number, bytes: length, size: max(segments[number]?.size ?? 0, end))
    }
}
