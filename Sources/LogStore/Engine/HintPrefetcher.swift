import Foundation
@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Maps and checks the hint files of the segments a load will replay, in their order, on a thread of its
/// own: checking a hint reads every entry once more than replaying it, and on a second processor that
/// read overlaps the replay of the segments before it.
///
/// Used by an open (not by `verify`, and not under fault injection, where the order of the system calls
/// must stay that of one thread). What a hint is worth is still decided by ``StoreLoader``.
final class HintPrefetcher: Sendable {
    /// A hint file mapped and checked, or why it could not be read.
    enum Outcome: @unchecked Sendable {
        case opened(mapping: SegmentFile, checked: Result<HintReader, HintProblem>)
        case failed(SystemError)
    }
    // `@unchecked Sendable` on `Outcome`: a `HintReader` points into the read-only mapping of the
    // `SegmentFile` it travels with, which stays mapped as long as that file is referenced; an outcome is
    // made by the prefetch thread, then only read by the loader (handed over under the lock below).

    /// The outcomes read and not yet taken, and the segments whose outcome has not been taken.
    private struct State: Sendable {
        var results: [UInt32: Outcome] = [:]
        var untaken: Set<UInt32>
    }
    private let state: ConditionLock<State>
    private let cancelled = ConditionLock<Bool>(false)

    /// Starts reading `hints` (segment number and hint file path), in the order they will be asked for.
    init(_ hints: [(number: UInt32, path: String)], io: SystemIO) {
        let state = ConditionLock(State(untaken: Set(hints.map(\.number))))
        self.state = state
        let thread = Thread { [cancelled] in
            for hint in hints {
                if cancelled.withLock({ $0 }) { return }
                let outcome = Self.open(hint.number, path: hint.path, io: io)
                state.withLock { $0.results[hint.number] = outcome }
                state.broadcast()
            }
        }
        thread.name = "logstore.hints"
        thread.start()
    }

    deinit { cancelled.withLock { $0 = true } }

    /// The outcome for segment `number`'s hint, waiting for the thread to get there; nil when it does not
    /// read that hint, or gave it out already.
    func take(_ number: UInt32) -> Outcome? {
        guard state.withLock({ $0.untaken.remove(number) != nil }) else { return nil }
        return state.waitUntil { $0.results.removeValue(forKey: number) }
    }

    /// Maps the hint file at `path` and checks it (``HintReader/open(_:)``).
    static func open(_ number: UInt32, path: String, io: SystemIO) -> Outcome {
        do throws(SystemError) {
            let fd = try io.open(path, flags: O_RDONLY | O_CLOEXEC)
            let length: UInt64
            do throws(SystemError) {
                length = try io.size(fd, path: path)
            } catch {
                io.close(fd)
                throw error
            }
            io.close(fd)
            let mapping = try SegmentFile.open(
                number: number, path: path, writable: false, capacity: Int(length), io: io)
            return .opened(mapping: mapping, checked: HintReader.open(mapping.bytes(count: Int(length))))
        } catch {
            return .failed(error)
        }
    }
}
