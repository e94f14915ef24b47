#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Makes chosen system calls of one store fail, write short, or end the process, for tests.
///
/// For example, to make the second `fsync` fail with `EIO`:
/// ```swift
/// let faults = FaultInjector()
/// faults.inject(.sync, .error(EIO), after: 1)
/// let store = try Store.open(at: path, options: StoreOptions(faultInjector: faults))
/// ```
@_spi(Testing)
public final class FaultInjector: Sendable {
    /// A group of system calls that a fault can target.
    public enum Operation: String, Sendable, CaseIterable {
        /// `open`.
        case open
        /// `write`, `pwrite`.
        case write
        /// `fsync`, `fdatasync` (of files and of directories).
        case sync
        /// `rename`.
        case rename
        /// `unlink`.
        case unlink
        /// `ftruncate`.
        case truncate
        /// `pread`.
        case read
        /// `pwrite` of the zeros written ahead of the writer (``PageCacheFiller``). Only a speed-up: an
        /// error or a short write just stops the zeros.
        case zeroFill
    }

    /// What an injected fault does.
    public enum Fault: Sendable, Equatable {
        /// The call fails with this errno and does nothing.
        case error(Int32)
        /// A write writes at most this many bytes (a short write) and reports that count.
        case shortWrite(Int)
        /// A write writes at most this many bytes, then the process ends at once (`_exit(137)`),
        /// as if it had been killed mid-write. Any other call ends the process before it runs.
        case crash(afterBytes: Int)
        /// The call waits this many microseconds, then runs as usual.
        case delay(microseconds: Int)
    }

    private struct Rule {
        var operation: Operation
        var fault: Fault
        var skip: Int
        var remaining: Int
    }

    // pthread mutexes (`ConditionLock`), not `Mutex`: the thread sanitizer cannot see a futex-based
    // lock, and tests run it while a store's threads (the filler's zero writes) call in concurrently.
    private let rules = ConditionLock<[Rule]>([])
    private let counts = ConditionLock<[Operation: Int]>([:])

    /// Makes an injector with no faults.
    public init() {}

    /// Arms a fault: the next `times` calls of `operation`, after skipping `after` calls, get `fault`.
    public func inject(_ operation: Operation, _ fault: Fault, after: Int = 0, times: Int = 1) {
        rules.withLock { $0.append(Rule(operation: operation, fault: fault, skip: after, remaining: times)) }
    }

    /// Removes every armed fault.
    public func clear() { rules.withLock { $0.removeAll() } }

    /// How many calls of `operation` went through the seam so far.
    public func calls(_ operation: Operation) -> Int { counts.withLock { $0[operation, default: 0] } }

    /// The fault for this call of `operation`, if one is armed; counts the call.
    func fault(for operation: Operation) -> Fault? {
        counts.withLock { $0[operation, default: 0] += 1 }
        return rules.withLock { rules -> Fault? in
            guard let index = rules.firstIndex(where: { $0.operation == operation }) else { return nil }
            if rules[index].skip > 0 {
                rules[index].skip -= 1
                return nil
            }
            let fault = rules[index].fault
            rules[index].remaining -= 1
            if rules[index].remaining <= 0 { rules.remove(at: index) }
            return fault
        }
    }
}
