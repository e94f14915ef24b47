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
    ///
    /// `@unchecked Sendable`: a `HintReader` points into the read-only mapping of the `SegmentFile` it
    /// travels with, which stays mapped as long as that file is referenced; an outcome is made by one
    /// thread, then only read by the loader (handed over under the lock below).
    enum Outcome: @unchecked Sendable {
        case opened(mapping: AnyObject, checked: Result<HintReader, HintProblem>)
        case failed(SystemError)
    }

    /// Where each hint not yet taken is: still queued, being read (by the thread), or read.
    private enum Phase: Sendable {
        case queued
        case reading
        case read(Outcome)
    }
    private let phases: ConditionLock<[UInt32: Phase]>
    private let cancelled = ConditionLock<Bool>(false, rank: .hintPrefetch)

    /// Starts reading `hints` (segment number and hint file path), in the order they will be asked for.
    init(_ hints: [(number: UInt32, path: String)], io: SystemIO, encryption: StoreEncryption? = nil) {
        let phases = ConditionLock(
            [UInt32: Phase](uniqueKeysWithValues: hints.map { ($0.number, .queued) }), rank: .hintPrefetch)
        self.phases = phases
        // Should the thread not start (Foundation ignores a failed `pthread_create`), `take` reads each
        // hint itself: it claims the ones still queued and waits only for one being read.
        let thread = Thread { [cancelled] in
            for hint in hints {
                if cancelled.withLock({ $0 }) { return }
                let claimed = phases.withLock { phases -> Bool in
                    guard case .queued = phases[hint.number] else { return false }
                    phases[hint.number] = .reading
                    return true
                }
                guard claimed else { continue }
                let outcome = Self.open(hint.number, path: hint.path, io: io, encryption: encryption)
                phases.withLock { $0[hint.number] = .read(outcome) }
                phases.broadcast()
            }
        }
        thread.name = "logstore.hints"
        thread.start()
    }

    deinit { cancelled.withLock { $0 = true } }

    /// The outcome for segment `number`'s hint at `path`: read ahead by the thread (waiting while it reads
    /// it), or read now when the thread has not got there; nil when it is not one of the hints given, or
    /// was taken already.
    func take(_ number: UInt32, path: String, io: SystemIO, encryption: StoreEncryption?) -> Outcome? {
        enum Step {
            case absent
            case readHere
            case wait
            case done(Outcome)
        }
        let step = phases.withLock { phases -> Step in
            switch phases[number] {
            case nil: return .absent
            case .queued:
                phases[number] = nil
                return .readHere
            case .reading: return .wait
            case .read(let outcome):
                phases[number] = nil
                return .done(outcome)
            }
        }
        switch step {
        case .absent: return nil
        case .readHere: return Self.open(number, path: path, io: io, encryption: encryption)
        case .done(let outcome): return outcome
        case .wait:
            return phases.waitUntil { phases -> Outcome? in
                guard case .read(let outcome) = phases[number] else { return nil }
                phases[number] = nil
                return outcome
            }
        }
    }

    /// Maps the hint file at `path` and checks it (``HintReader/open(_:)``); of an encrypted store, reads
    /// and decrypts it first (a file that does not open is an invalid hint).
    static func open(_ number: UInt32, path: String, io: SystemIO, encryption: StoreEncryption? = nil) -> Outcome {
        if let encryption {
            do throws(SystemError) {
                let raw = try io.readWholeFile(path, limit: UInt64(UInt32.max))
                switch raw.withUnsafeBytes({
                    SealedFile.open($0, kind: .hint, number: UInt64(number), encryption: encryption)
                }) {
                case .success(let plain):
                    let held = HeldBytes(plain)
                    return .opened(mapping: held, checked: HintReader.open(held.bytes))
                case .failure(let problem):
                    return .opened(mapping: HeldBytes([]), checked: .failure(HintProblem(problem.reason)))
                }
            } catch {
                return .failed(error)
            }
        }
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
