@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Loading beside a writer. A read-only open or `verify` takes no lock, so a writer in another process
/// (or another `Store` of this one) may append, create segments, rewrite the manifest and, compacting,
/// delete segments while it loads. Each attempt reads the manifest, lists the directory and opens every
/// listed segment (``PinnedSegments``) before it reads any; when that shows the set of segments changed
/// in between, the attempt is dropped and the load starts again, a bounded number of times. The append
/// segment is scanned from a copy (``SegmentCopy``), and damage counts only when found twice. See
/// "Readers beside a writer" (section 6.8) in `Documentation/Format.md`.
extension StoreLoader {
    /// Why an attempt was dropped: the store's set of segments changed while it was listed and opened.
    struct StoreChange {
        var message: String
        var file: String
        var underlying: SystemError?

        init(_ message: String, file: String, underlying: SystemError? = nil) {
            self.message = message
            self.file = file
            self.underlying = underlying
        }
    }

    /// What one attempt gave.
    enum Attempt {
        case loaded(Loaded)
        case changed(StoreChange)
    }

    /// How many attempts a read-only open or `verify` makes before it reports that the store kept
    /// changing.
    static let maximumAttempts = 40

    /// The pause before attempt `attempt` (counted from 0): none before the first, then 1 ms more for
    /// each attempt, at most 10 ms (so all attempts take at most about 0.35 s of pauses).
    static func pause(before attempt: Int) -> Duration { .milliseconds(min(attempt, 10)) }

    /// Whether the load watches for changes made by a writer beside it (read-only and `verify`; an open
    /// for writing holds the lock, so nothing changes under it).
    var tracksChanges: Bool {
        if case .writable = mode { return false }
        return true
    }

    /// Rebuilds the state from the segments, starting again (read-only and `verify`) while a writer
    /// changes the set of segments under it.
    ///
    /// Such a load also reports damage only when the next attempt finds exactly the same: the end of
    /// the append segment may be being written while it is scanned, so a scan can pass bytes not yet
    /// written and then find frames written after them (which would be corruption if it lasted).
    /// - throws: ``LogStoreError``: as an open or `verify` does; with code `ioError` and a message saying
    ///   so when the store kept changing for ``maximumAttempts`` attempts.
    func load() throws(LogStoreError) -> Loaded {
        /// Why attempts were dropped.
        var changes: [StoreChange] = []
        /// The damage the last attempt that got that far found, to be confirmed by the next one.
        var unconfirmed: (damage: [String], change: StoreChange)?
        /// Drops the attempt that found `damage`, unless it is the same as before (then it lasted).
        func lasted(_ damage: [String], file: String?) -> Bool {
            if unconfirmed?.damage == damage { return true }
            if let previous = unconfirmed { changes.append(previous.change) }
            let change = StoreChange("damage found, read again to confirm it: \(damage[0])", file: file ?? directory)
            unconfirmed = (damage, change)
            return false
        }
        for attempt in 0..<Self.maximumAttempts {
            if attempt > 0 { SystemClock.sleep(Self.pause(before: attempt)) }
            let outcome: Attempt
            do throws(LogStoreError) {
                outcome = try loadAttempt()
            } catch  where tracksChanges && Self.isDamage(error.code) {
                if lasted([error.description], file: error.file) { throw error }
                continue
            }
            switch outcome {
            case .loaded(var loaded):
                let damage = loaded.problems.map { "\($0.file) @ \($0.offset.map(String.init) ?? "-"): \($0.message)" }
                if !damage.isEmpty, !lasted(damage, file: loaded.problems.first?.file) { continue }
                if damage.isEmpty, let previous = unconfirmed { changes.append(previous.change) }
                if let first = changes.first {
                    loaded.notes.append(
                        "\(directory): read again \(changes.count) time(s), as a writer beside it changed the store "
                            + "while it was read (first: \(first.message))")
                }
                return loaded
            case .changed(let change):
                changes.append(change)
            }
        }
        let change = changes.last ?? unconfirmed?.change ?? StoreChange("the store kept changing", file: directory)
        throw LogStoreError(
            .ioError,
            "the store kept changing while it was read (\(Self.maximumAttempts) attempts); last: \(change.message)",
            file: change.file, underlying: change.underlying)
    }

    /// Whether an error of `code` reports damage in a segment (which a writer may be writing).
    private static func isDamage(_ code: LogStoreError.Code) -> Bool {
        code == .corruptFrame || code == .corruptSegmentHeader
    }

    /// One attempt: manifest, then listing, then (read-only and `verify`) every listed segment opened,
    /// then the segments loaded. Only an attempt that tracks changes can return ``Attempt/changed(_:)``.
    private func loadAttempt() throws(LogStoreError) -> Attempt {
        var loaded = Loaded()
        if case .writable = mode { try removeUnfinishedCompactions() }
        // The manifest before the listing: a segment it lists was there before the listing began.
        let manifestFile = readManifestFile()
        let names: [String]
        do {
            names = try io.listDirectory(directory)
        } catch {
            throw LogStoreError(.ioError, "cannot list the store directory", file: directory, underlying: error)
        }
        let numbers = names.compactMap(LogFormat.segmentNumber(fromFileName:)).sorted()
        var loader = self
        loader.hintNames = Set(names.filter { $0.hasSuffix("." + HintFile.fileExtension) })
        if let change = try checkManifest(manifestFile, against: numbers, into: &loaded) { return .changed(change) }
        var readable = numbers
        if tracksChanges {
            switch try PinnedSegments.pin(numbers, in: directory, io: io, listingUnopenable: collectsProblems) {
            case .vanished(let path, let error):
                return .changed(
                    StoreChange(
                        "segment \(path) was deleted (by a writer's compaction) while the store was read", file: path,
                        underlying: error))
            case .pinned(let pinned):
                loader.pinned = pinned
                // `verify` lists a segment it cannot open (a dangling symbolic link, no permission) and
                // checks the others.
                for failure in pinned.unopenable {
                    loaded.problems.append(
                        Problem(file: failure.path, offset: nil, message: "cannot open segment: \(failure.error)"))
                }
                let unopenable = Set(pinned.unopenable.map(\.number))
                readable.removeAll { unopenable.contains($0) }
            }
            if let change = unlistedSegmentsChange(numbers, manifest: loaded.manifest, file: manifestFile) {
                return .changed(change)
            }
        }
        var result = try loader.loadListed(readable, into: loaded)
        // The dictionaries listed with the segments: a writer deletes one only after every segment naming
        // it is deleted, so one of them missing now may be named by a segment read here (read again).
        if let change = try loader.loadDictionaries(into: &result, listedBefore: names) {
            return .changed(change)
        }
        return .loaded(result)
    }

    /// Loads the dictionary files. Beside a writer they are listed again after the segments were read (a
    /// frame is written only after the dictionary it names is durable, so every dictionary a loaded frame
    /// names is in that listing); an open for writing holds the lock, and the listing the segments were
    /// taken from, `listedBefore`, serves.
    /// - throws: ``LogStoreError`` `corruptDictionary` for a damaged one (unless verifying, which lists it).
    /// - returns: a change when a dictionary of `listedBefore` is gone, or one listed now vanished before it
    ///   was read (beside a writer).
    private func loadDictionaries(into loaded: inout Loaded, listedBefore: [String]) throws(LogStoreError)
        -> StoreChange?
    {
        var names = listedBefore
        if tracksChanges {
            do {
                names = try io.listDirectory(directory)
            } catch {
                throw LogStoreError(.ioError, "cannot list the store directory", file: directory, underlying: error)
            }
        }
        let dictionariesBefore = listedBefore.filter { DictionaryFile.id(fromFileName: $0) != nil }
        if tracksChanges, let gone = Set(dictionariesBefore).subtracting(names).first {
            let path = directory + "/" + gone
            return StoreChange("dictionary \(path) was deleted while the store was read", file: path)
        }
        let found = StoreDictionaries.load(
            directory, names: names, records: loaded.manifest?.dictionaries, io: io, encryption: encryption)
        if tracksChanges, found.damage.contains(where: { if case .unrecorded = $0.kind { true } else { false } }) {
            // Written (and recorded in a manifest newer than the one read) while the store was read: a frame
            // read here may name it.
            if case .bytes(let bytes) = readManifestFile(),
                case .success(let current) = bytes.withUnsafeBytes({ SegmentManifest.decode($0) }),
                current.dictionaries != loaded.manifest?.dictionaries
            {
                return StoreChange("a dictionary was written while the store was read", file: manifestPath)
            }
        }
        loaded.state.dictionaries = found.dictionaries
        for damage in found.damage {
            switch damage.kind {
            case .unrecorded:
                loaded.notes.append("\(damage.path): \(damage.message)")
            case .vanished(let error) where tracksChanges:
                return StoreChange(
                    "dictionary \(damage.path) was deleted while the store was read", file: damage.path,
                    underlying: error)
            case .vanished(let error), .unreadable(let error):
                if collectsProblems {
                    loaded.problems.append(Problem(file: damage.path, offset: nil, message: damage.message))
                } else {
                    throw LogStoreError(.ioError, damage.message, file: damage.path, underlying: error)
                }
            case .invalid(let unsupported):
                try fail(
                    damage.path, damage.offset, damage.message, unsupported ? .unsupportedVersion : .corruptDictionary,
                    &loaded)
            }
        }
        return nil
    }

    /// When the listing holds segments the manifest does not list (made after the manifest was read, or
    /// left unlisted by a crash), the listing and the opened segments are one consistent set only if the
    /// manifest did not change meanwhile: otherwise a segment made and compacted away after the manifest
    /// was read could be missing while a newer one that depends on it is there.
    private func unlistedSegmentsChange(_ numbers: [UInt32], manifest: SegmentManifest?, file: ManifestFile)
        -> StoreChange?
    {
        let listed = Set(manifest?.segments ?? [])
        guard numbers.contains(where: { !listed.contains($0) }), readManifestFile() != file else { return nil }
        return StoreChange("the segment manifest changed while the store's segments were listed", file: manifestPath)
    }

    /// The append segment's bytes up to `dataEnd`, copied with `pread` (all `size` bytes when anything
    /// but zeros follows the hole at `dataEnd`, in `dataAfterHole`). When the file has become shorter (the
    /// writer sealed it and cut off the space extended ahead of its writes), `dataEnd` becomes its length.
    /// - throws: ``LogStoreError`` with code `ioError` when the segment cannot be read.
    func copyOfAppendSegment(
        _ file: SegmentFile, size: UInt64, dataEnd: inout UInt64, dataAfterHole: [Range<UInt64>]
    ) throws(LogStoreError) -> SegmentCopy {
        do {
            for region in dataAfterHole {
                let after = try io.read(file.fd, count: Int(region.count), at: region.lowerBound, path: file.path)
                if !after.allSatisfy({ $0 == 0 }) {
                    dataEnd = size
                    break
                }
            }
            let copy = try SegmentCopy(fd: file.fd, count: Int(dataEnd), path: file.path, io: io)
            dataEnd = UInt64(copy.bytes.count)
            return copy
        } catch {
            throw LogStoreError(.ioError, "cannot read segment", file: file.path, underlying: error)
        }
    }
}
