@_spi(Engine) import LogStoreFormat

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

    /// A call that changes files, as the seam is about to make it (for ``observe(_:)``).
    public enum Call: Sendable, Equatable {
        /// `open` of `path` with `flags` (`O_CREAT`, `O_TRUNC`, …).
        case open(path: String, flags: Int32)
        /// `pwrite` of `bytes` at `offset`.
        case write(path: String, offset: UInt64, bytes: [UInt8])
        /// `ftruncate` to `size`.
        case truncate(path: String, size: UInt64)
        /// `fdatasync` of a file.
        case syncFile(path: String)
        /// `fsync` of a directory.
        case syncDirectory(path: String)
        /// `rename`.
        case rename(from: String, to: String)
        /// `unlink`.
        case unlink(path: String)
        /// `mkdir`.
        case makeDirectory(path: String)
    }

    /// Which calls a rule applies to, and how many of them are left.
    private struct Rule<Effect: Sendable>: Sendable {
        package var operation: Operation
        /// Only calls on a path ending with this; nil for every call of `operation`.
        package var pathSuffix: String?
        package var effect: Effect
        package var skip: Int
        package var remaining: Int

        package func matches(_ operation: Operation, _ path: String?) -> Bool {
            guard operation == self.operation else { return false }
            guard let pathSuffix else { return true }
            return path?.hasSuffix(pathSuffix) ?? false
        }
    }

    /// An action run before a call (see ``perform(before:pathSuffix:after:times:_:)``).
    private typealias Action = @Sendable (String) -> Void

    // pthread mutexes (`ConditionLock`), not `Mutex`: the thread sanitizer cannot see a futex-based
    // lock, and tests run it while a store's threads (the filler's zero writes) call in concurrently.
    // Leaves of the lock order: taken inside the seam, under whatever lock the caller holds.
    private let rules = ConditionLock<[Rule<Fault>]>([], rank: .faultInjector)
    private let actions = ConditionLock<[Rule<Action>]>([], rank: .faultInjector)
    private let counts = ConditionLock<[Operation: Int]>([:], rank: .faultInjector)
    private let observer = ConditionLock<(@Sendable (Call) -> Fault?)?>(nil, rank: .faultInjector)

    /// Makes an injector with no faults.
    public init() {}

    /// Arms a fault: the next `times` calls of `operation`, after skipping `after` calls, get `fault`.
    /// With `pathSuffix`, only calls on a path ending with it count (e.g. `".seg"` for segment files).
    public func inject(
        _ operation: Operation, _ fault: Fault, after: Int = 0, times: Int = 1, pathSuffix: String? = nil
    ) {
        rules.withLock {
            $0.append(Rule(operation: operation, pathSuffix: pathSuffix, effect: fault, skip: after, remaining: times))
        }
    }

    /// Arms an action: just before the next `times` calls of `operation` on a path ending with
    /// `pathSuffix`, after skipping `after` such calls, `action` runs with the call's path; then the call
    /// runs as usual (or gets an armed fault). That is how a test changes the store's files at an exact
    /// point of a load, e.g. deletes a segment between the directory listing and the segment's `open`.
    /// As with faults, a call counts only against the first armed action it matches, so a second action
    /// for the same calls starts counting once the first is used up.
    ///
    /// For example, to compact a writer's store just before a read-only open opens its first segment:
    /// ```swift
    /// faults.perform(before: .open, pathSuffix: ".seg") { _ in _ = try? writer.compact() }
    /// ```
    public func perform(
        before operation: Operation, pathSuffix: String, after: Int = 0, times: Int = 1,
        _ action: @escaping @Sendable (String) -> Void
    ) {
        actions.withLock {
            $0.append(Rule(operation: operation, pathSuffix: pathSuffix, effect: action, skip: after, remaining: times))
        }
    }

    /// Shows `observer` every call that changes files, just before the seam makes it (after armed faults
    /// and actions, and only when none of them failed the call); a fault it returns applies to the call
    /// as an armed one would. That is how a test models the disk: what was written, what was synced,
    /// and what a power loss at a chosen call would leave (see the reliability tests).
    public func observe(_ observer: @escaping @Sendable (Call) -> Fault?) {
        self.observer.withLock { $0 = observer }
    }

    /// The fault the observer returns for the call `describe` gives (asked only when there is an
    /// observer; nil: a call that is not observed), if any.
    package func observed(_ describe: () -> Call?) -> Fault? {
        guard let observer = observer.withLock({ $0 }), let call = describe() else { return nil }
        return observer(call)
    }

    /// Removes every armed fault and action.
    public func clear() {
        rules.withLock { $0.removeAll() }
        actions.withLock { $0.removeAll() }
    }

    /// How many calls of `operation` went through the seam so far.
    public func calls(_ operation: Operation) -> Int { counts.withLock { $0[operation, default: 0] } }

    /// Runs the action armed for this call, if any, then returns the fault armed for it, if any; counts
    /// the call. The action runs outside the injector's locks (it may call into other stores).
    package func fault(for operation: Operation, path: String?) -> Fault? {
        counts.withLock { $0[operation, default: 0] += 1 }
        if let action = actions.withLock({ Self.next(in: &$0, operation, path) }) { action(path ?? "") }
        return rules.withLock { Self.next(in: &$0, operation, path) }
    }

    /// The effect of the first rule matching the call, counting the call against that rule.
    private static func next<Effect: Sendable>(in rules: inout [Rule<Effect>], _ operation: Operation, _ path: String?)
        -> Effect?
    {
        guard let index = rules.firstIndex(where: { $0.matches(operation, path) }) else { return nil }
        if rules[index].skip > 0 {
            rules[index].skip -= 1
            return nil
        }
        let effect = rules[index].effect
        rules[index].remaining -= 1
        if rules[index].remaining <= 0 { rules.remove(at: index) }
        return effect
    }
}
