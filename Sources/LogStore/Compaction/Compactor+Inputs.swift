@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// Choosing a pass's inputs, and planning their copy from what the index says of them.
extension Compactor {
    /// The sealed segments a pass compacts, with their sizes (at most `limit` of them, those with the
    /// largest garbage share first); fills the "before" figures of `report`.
    func chooseInputs(
        garbageRatio: Double, rewritingAll: Bool, limit: Int?, report: inout CompactionReport
    ) -> [(file: SegmentFile, size: UInt64)] {
        var chosen = chooseSegments(garbageRatio: garbageRatio, rewritingAll: rewritingAll, report: &report)
        if let limit, chosen.count > limit {
            let shares = state.withLock { state in
                Dictionary(
                    uniqueKeysWithValues: chosen.map { segment in
                        (
                            segment.file.number,
                            Double(state.segments[segment.file.number]?.garbageBytes ?? 0)
                                / Double(max(segment.size, 1))
                        )
                    })
            }
            chosen = Array(
                chosen.sorted { (shares[$0.file.number] ?? 0) > (shares[$1.file.number] ?? 0) }.prefix(max(1, limit))
            ).sorted { $0.file.number < $1.file.number }
        }
        return chosen
    }

    /// What copying `chosen` takes: their live records and the outputs' starting figures.
    func plan(for chosen: [(file: SegmentFile, size: UInt64)]) -> CompactionPlan {
        let total = chosen.reduce(UInt64(0)) { $0 + $1.size }
        let liveTotal = state.withLock { state in
            chosen.reduce(UInt64(0)) { $0 + min(state.segments[$1.file.number]?.liveBytes ?? $1.size, $1.size) }
        }
        let numbers = Set(chosen.map(\.file.number))
        let reservation = pipeline.reservation
        let live = liveRecords(of: numbers)
        let indexOnly = state.withLock { state in numbers.filter { state.segments[$0]?.controlFrames ?? 0 == 0 } }
        let indexOnlyRecords = indexOnly.reduce(0) { $0 + (live[$1]?.count ?? 0) }
        let outputBase = state.withLock { state in
            numbers.compactMap { state.segments[$0]?.minSequence }.filter { $0 != .max }.min() ?? reservation.1
        }
        let dictionaries = state.withLock { $0.dictionaries }
        let recompression = dictionaries.newest.flatMap { newest in
            options.compression && options.sharedDictionary && !options.readOnly
                ? CompactionOutput.Recompression(
                    newest: newest, dictionaries: dictionaries,
                    compressionMinimumSize: options.effectiveCompressionMinimum) : nil
        }
        return CompactionPlan(
            numbers: numbers, total: total, liveTotal: liveTotal, reservation: reservation, live: live,
            indexOnly: indexOnly, indexOnlyRecords: indexOnlyRecords, outputBase: outputBase,
            recompression: recompression)
    }

    /// The sealed segments to compact, with their sizes; fills the "before" figures of `report`.
    func chooseSegments(garbageRatio: Double, rewritingAll: Bool, report: inout CompactionReport) -> [(
        file: SegmentFile, size: UInt64
    )] {
        // Segments a retained moment holds (the same file under its name in `history`): rewriting one frees
        // nothing while the moment keeps it, and its copy would take space of its own. A full rewrite
        // (format conversion, a new dictionary) still rewrites them. Segments a replica holds (the one it
        // has a part of and every newer one) are left alone even by a full rewrite: the replica could not
        // be brought up to date through states some commit had if their records moved meanwhile.
        let held = HistoryFolder(store: directory, io: io).heldSegments(includingMoments: !rewritingAll)
        // Under the queue lock, so no segment the writer may still append to can be chosen.
        return pipeline.withBusySegments { busy in
            state.withLock { state in
                report.segmentsBefore = state.segments.count
                report.segmentsHeld = held.count
                report.bytesBefore = state.segments.all.reduce(0) { $0 + $1.size }
                return state.segments.numbers.compactMap { number -> (SegmentFile, UInt64)? in
                    guard !busy.contains(number), !held.contains(number), let info = state.segments[number],
                        !info.hintDisagrees
                    else {
                        return nil
                    }
                    let garbage = info.garbageBytes
                    let qualifies =
                        rewritingAll
                        || (garbageRatio <= 0
                            ? (garbage > 0 || info.liveBytes == 0)
                            : Double(garbage) >= garbageRatio * Double(info.size))
                    return qualifies ? (info.file, info.size) : nil
                }
            }
        }
    }

    /// The live records of the chosen segments, found in the index in one pass.
    func liveRecords(of chosen: Set<UInt32>) -> [UInt32: [(UInt64, IndexEntry)]] {
        state.withLock { state in
            let numbers = chosen.sorted()
            guard let highest = numbers.last else { return [:] }
            // Segment number → position in `lists`, in a table when the numbers are small (one array
            // read per live object instead of a dictionary lookup), in a dictionary otherwise.
            var lists = [[(UInt64, IndexEntry)]](repeating: [], count: numbers.count)
            for (index, number) in numbers.enumerated() {
                lists[index].reserveCapacity(Int(state.segments[number]?.liveBytes ?? 0) / LogFormat.minimumFrameSize)
            }
            if highest < 1 << 20 {
                var position = [Int32](repeating: -1, count: Int(highest) + 1)
                for (index, number) in numbers.enumerated() { position[Int(number)] = Int32(index) }
                state.forEachDurable { id, entry in
                    guard Int(entry.segment) < position.count else { return }
                    let index = Int(position[Int(entry.segment)])
                    if index >= 0 { lists[index].append((id, entry)) }
                }
            } else {
                let position = Dictionary(uniqueKeysWithValues: numbers.enumerated().map { ($1, $0) })
                state.forEachDurable { id, entry in
                    if let index = position[entry.segment] { lists[index].append((id, entry)) }
                }
            }
            return Dictionary(uniqueKeysWithValues: zip(numbers, lists))
        }
    }
}
