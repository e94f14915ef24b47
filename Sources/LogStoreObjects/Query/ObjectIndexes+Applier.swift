import Foundation
import LogStore
@_spi(Engine) import LogStoreSystem

/// The applier: keeps the indexes' ordered entries up to date on a queue of its own, so that inserting a
/// batch's entries overlaps with the saving thread's next work instead of lengthening its commit.
///
/// A run takes, for one type at a time:
/// - for a type with a unique index, whose keys and unique tables the commit hook updated at once (the next
///   commit's unique check needs them), its ordered entries and the log of their changes
///   (``TypeIndexData/takeEntries()``): it applies the log without the state lock and puts the entries
///   back. The unique check and equality lookups go on meanwhile; queries wait for the entries.
/// - for another type, its data and every delta queued for it: it applies them (reading each put's keys)
///   and puts the data back exact through the last batch the hooks had seen. Whoever needs that data
///   meanwhile waits for it.
///
/// Nothing an index answers changes: only which thread does the work. A query that comes first applies
/// what the applier has not reached, after waiting for its current run.
extension ObjectIndexes {
    /// What one run applies to one type's indexes: the whole data with deltas, or only its entries with
    /// their log. (The data and entries are optionals, so that the run can take them and leave the only
    /// reference: a second one would make the first change copy every table.)
    private struct ApplyJob {
        var number: Int
        var data: TypeIndexData?
        var deltas: [Delta] = []
        /// The sequence numbers the data is exact at before the deltas and after them.
        var after: UInt64 = 0
        var through: UInt64 = 0
        var entries: [SortedEntries]?
        var log: [TypeIndexData.EntryChange] = []
        /// Deltas the commit hooks applied, to free.
        var garbage: [[Delta]] = []
    }

    /// How much the applier has still to do: every type's ``TypeState/backlog``, and one for each type it
    /// has out now (0 once it has caught up).
    var backlog: Int {
        state.withLock { state in
            state.types.reduce(0) { sum, type in sum + type.backlog + (type.applying ? 1 : 0) }
        }
    }

    /// Queues a run of the applier unless one is queued or running, or there is no applier (under the state
    /// lock).
    func scheduleApplier(_ state: inout State) {
        guard inBackground, !state.applierScheduled else { return }
        state.applierScheduled = true
        applierQueue.async { [weak self] in self?.runApplier() }
    }

    /// Applies what is queued until nothing is left that the applier can take.
    private func runApplier() {
        while var job = takeJob() {
            // Freed here, off the committing thread.
            job.garbage = []
            let number = job.number
            if var data = job.data {
                job.data = nil
                let applied = Self.applyDeltas(
                    job.deltas, after: job.after, to: &data, types[number], keys: nil, catalog: catalog)
                data.flushEntries()
                state.withLock { state in
                    state.types[number].finishApplying(data, applied, through: job.through)
                    state.types[number].applying = false
                }
            } else if var entries = job.entries {
                job.entries = nil
                TypeIndexData.apply(job.log, to: &entries)
                state.withLock { state in
                    state.types[number].data?.restoreEntries(entries)
                    state.types[number].applying = false
                }
            }
            state.broadcast()
        }
    }

    /// The next job: a type with queued deltas or logged entry changes whose data is here (not held by a
    /// scan); nil, with the run no longer scheduled, when there is none.
    private func takeJob() -> ApplyJob? {
        state.withLock { state in
            var garbage: [[Delta]] = []
            swap(&garbage, &state.appliedDeltas)
            for number in state.types.indices {
                // (Not a type a thread waits for: it applies what is left itself.)
                guard state.types[number].data != nil, state.types[number].recordFrom != nil,
                    state.types[number].waiting == 0
                else { continue }
                if !state.types[number].pending.isEmpty {
                    if types[number].hasUnique {
                        // (Deltas queued while a scan had the data: the unique tables need them now.)
                        apply(through: state.lastAccepted, to: &state.types[number], types[number], nil)
                    } else {
                        let through = state.lastAccepted
                        let after = state.types[number].sequence
                        let deltas = state.types[number].takeDeltas(through: through)
                        let data = state.types[number].data
                        state.types[number].data = nil
                        state.types[number].applying = true
                        return ApplyJob(
                            number: number, data: data, deltas: deltas, after: after, through: through,
                            garbage: garbage)
                    }
                }
                guard state.types[number].data?.entryLog.isEmpty == false,
                    let taken = state.types[number].data?.takeEntries()
                else { continue }
                state.types[number].applying = true
                return ApplyJob(number: number, entries: taken.entries, log: taken.log, garbage: garbage)
            }
            state.applierScheduled = false
            // (A job of garbage alone, for the run to free outside the lock.)
            return garbage.isEmpty ? nil : ApplyJob(number: -1, garbage: garbage)
        }
    }
}
