import Foundation
import Synchronization
import TestSupport

@testable @_spi(Testing) import LogStore

#if canImport(Glibc)
    import Glibc
#endif

/// A model of the disk under one store directory, fed by the store's syscall seam, that can say what a
/// power loss at a chosen call would leave.
///
/// It follows every call that changes files: a file's contents become durable at its `fdatasync`, the
/// directory's names (creations, renames, removals) at the directory's `fsync`. Until then they are
/// pending. When the power goes (at call number `powerLossAt`, counted from 1 over the observed calls),
/// that call and every later one fail with `EIO`, as they would on a machine that stopped; the store is
/// then abandoned, and ``materialize(_:)`` rewrites the directory as the disk could hold it after the
/// reboot:
/// - the durable names, then a prefix of the pending name changes (a journalling file system keeps their
///   order);
/// - each file's durable contents, then a subset of its pending writes and truncations in order (the
///   disk may have written some and not earlier ones), the last kept write possibly torn to a prefix.
///
/// The page-cache filler's zero writes are refused (only a speed-up), so every byte that reaches a file
/// goes through the model.
final class PowerLossSimulator: Sendable {
    /// What the disk keeps of the pending changes.
    enum Outcome: Sendable, CustomStringConvertible {
        /// Nothing that was not synced.
        case syncedOnly
        /// Everything (as if the power had gone just after the last call).
        case everything
        /// A random choice: a prefix of the name changes, a subset of each file's writes, a torn write.
        case random(seed: UInt64)

        var description: String {
            switch self {
            case .syncedOnly: "synced only"
            case .everything: "everything"
            case .random(let seed): "random(seed: \(seed))"
            }
        }
    }

    private enum FileChange {
        case write(offset: Int, bytes: [UInt8])
        case truncate(Int)

        func apply(to contents: inout [UInt8], tornTo limit: Int? = nil) {
            switch self {
            case .write(let offset, let bytes):
                let kept = limit.map { Array(bytes.prefix($0)) } ?? bytes
                if contents.count < offset + kept.count {
                    contents.append(contentsOf: repeatElement(0, count: offset + kept.count - contents.count))
                }
                contents.replaceSubrange(offset..<(offset + kept.count), with: kept)
            case .truncate(let size):
                if size < contents.count {
                    contents.removeSubrange(size...)
                } else {
                    contents.append(contentsOf: repeatElement(0, count: size - contents.count))
                }
            }
        }
    }

    private struct File {
        var durable: [UInt8]
        var current: [UInt8]
        var pending: [FileChange] = []
    }

    private enum NameChange {
        case create(String, Int)
        case rename(String, String)
        case unlink(String)
    }

    private struct State {
        var calls = 0
        var powerLossAt: Int?
        var powerLost = false
        /// An injected error: at call `at`, once or from then on (the disk itself keeps working).
        var error: (at: Int, errno: Int32, persistent: Bool)?
        var errorsInjected = 0
        /// The kind of each observed call, in order.
        var kinds: [String] = []
        var files: [Int: File] = [:]
        var names: [String: Int] = [:]
        var durableNames: [String: Int] = [:]
        var pendingNames: [NameChange] = []
        var nextFile = 0
        /// Calls on paths the model does not know (a defect of the model or of the store).
        var unknown: [String] = []
    }

    let directory: String
    private let state = Mutex(State())

    /// Starts from the files now in `directory` (all durable) and observes `faults`' store.
    init(directory: String, faults: FaultInjector) throws {
        self.directory = directory
        var initial = State()
        for name in try FileManager.default.contentsOfDirectory(atPath: directory).sorted() {
            let path = directory + "/" + name
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            initial.files[initial.nextFile] = File(durable: bytes, current: bytes)
            initial.names[name] = initial.nextFile
            initial.nextFile += 1
        }
        initial.durableNames = initial.names
        state.withLock { $0 = initial }
        faults.inject(.zeroFill, .error(EIO), times: Int.max)
        faults.observe { [self] call in observe(call) }
    }

    /// Makes the power go at observed call `number` (1 for the first; nil: never).
    func losePower(atCall number: Int?) { state.withLock { $0.powerLossAt = number } }

    /// Makes observed call `number` fail with `errno` (and, when `persistent`, every later one), the
    /// failing calls doing nothing.
    func fail(atCall number: Int, errno: Int32, persistent: Bool) {
        state.withLock { $0.error = (number, errno, persistent) }
    }

    /// Calls failed by ``fail(atCall:errno:persistent:)`` so far.
    var errorsInjected: Int { state.withLock { $0.errorsInjected } }

    /// The kind of each observed call ("write", "syncFile", …), in order.
    var callKinds: [String] { state.withLock { $0.kinds } }

    private static func kind(of call: FaultInjector.Call) -> String {
        switch call {
        case .open: "open"
        case .write: "write"
        case .truncate: "truncate"
        case .syncFile: "syncFile"
        case .syncDirectory: "syncDirectory"
        case .rename: "rename"
        case .unlink: "unlink"
        case .makeDirectory: "makeDirectory"
        }
    }

    /// Observed calls so far (the one that found the power gone included).
    var calls: Int { state.withLock { $0.calls } }
    /// Whether the power has gone.
    var powerLost: Bool { state.withLock { $0.powerLost } }
    /// Paths of calls the model could not place.
    var unknownPaths: [String] { state.withLock { $0.unknown } }

    private func name(of path: String) -> String? {
        guard path.hasPrefix(directory + "/") else { return nil }
        let name = String(path.dropFirst(directory.count + 1))
        return name.contains("/") ? nil : name
    }

    private func observe(_ call: FaultInjector.Call) -> FaultInjector.Fault? {
        state.withLock { state in
            state.calls += 1
            state.kinds.append(Self.kind(of: call))
            if state.powerLost || state.calls == state.powerLossAt {
                state.powerLost = true
                return .error(EIO)
            }
            if let error = state.error, state.calls == error.at || (error.persistent && state.calls > error.at) {
                state.errorsInjected += 1
                return .error(error.errno)
            }
            apply(call, to: &state)
            return nil
        }
    }

    private func apply(_ call: FaultInjector.Call, to state: inout State) {
        func file(_ path: String) -> Int? {
            guard let name = name(of: path), let id = state.names[name] else {
                state.unknown.append("\(call)")
                return nil
            }
            return id
        }
        func change(_ path: String, _ change: FileChange) {
            guard let id = file(path) else { return }
            change.apply(to: &state.files[id, default: File(durable: [], current: [])].current)
            state.files[id]?.pending.append(change)
        }
        switch call {
        case .open(let path, let flags):
            guard let name = name(of: path) else { return }
            if state.names[name] == nil {
                guard flags & O_CREAT != 0 else { return }  // fails with ENOENT on the real disk too
                let id = state.nextFile
                state.nextFile += 1
                state.files[id] = File(durable: [], current: [])
                state.names[name] = id
                state.pendingNames.append(.create(name, id))
            } else if flags & O_TRUNC != 0 {
                change(path, .truncate(0))
            }
        case .write(let path, let offset, let bytes): change(path, .write(offset: Int(offset), bytes: bytes))
        case .truncate(let path, let size): change(path, .truncate(Int(size)))
        case .syncFile(let path):
            guard let id = file(path) else { return }
            guard var synced = state.files[id] else { return }
            synced.durable = synced.current
            synced.pending = []
            state.files[id] = synced
        case .syncDirectory(let path):
            guard path == directory else { return }
            state.durableNames = state.names
            state.pendingNames = []
        case .rename(let from, let to):
            // A missing source fails with ENOENT on the real disk too, and changes nothing.
            guard let fromName = name(of: from), let toName = name(of: to), let id = state.names[fromName] else {
                return
            }
            state.names[fromName] = nil
            state.names[toName] = id
            state.pendingNames.append(.rename(fromName, toName))
        case .unlink(let path):
            guard let name = name(of: path), state.names[name] != nil else { return }  // ENOENT
            state.names[name] = nil
            state.pendingNames.append(.unlink(name))
        case .makeDirectory: break
        }
    }

    /// Rewrites the directory as the disk could hold it after the power loss, keeping `outcome` of what
    /// was pending. Call after the store is abandoned (its calls all fail by then).
    func materialize(_ outcome: Outcome) throws {
        let snapshot = state.withLock { $0 }
        var random = SplitMix64(seed: { if case .random(let seed) = outcome { return seed } else { return 0 } }())
        func chance(_ oneIn: UInt64) -> Bool { random.next() % oneIn == 0 }

        var names = snapshot.durableNames
        let keptNames: Int
        switch outcome {
        case .syncedOnly: keptNames = 0
        case .everything: keptNames = snapshot.pendingNames.count
        case .random: keptNames = Int(random.next() % UInt64(snapshot.pendingNames.count + 1))
        }
        for change in snapshot.pendingNames.prefix(keptNames) {
            switch change {
            case .create(let name, let id): names[name] = id
            case .rename(let from, let to):
                names[to] = names[from]
                names[from] = nil
            case .unlink(let name): names[name] = nil
            }
        }
        // Everything in the directory goes (also files a reopen made since): the model says what is left.
        let fileManager = FileManager.default
        for name in try fileManager.contentsOfDirectory(atPath: directory) {
            try fileManager.removeItem(atPath: directory + "/" + name)
        }
        for (name, id) in names.sorted(by: { $0.key < $1.key }) {
            guard let file = snapshot.files[id] else { continue }
            var contents = file.durable
            switch outcome {
            case .syncedOnly: break
            case .everything: for change in file.pending { change.apply(to: &contents) }
            case .random:
                let kept = file.pending.filter { _ in !chance(2) }
                for (index, change) in kept.enumerated() {
                    var torn: Int?
                    if index == kept.count - 1, case .write(_, let bytes) = change, chance(3) {
                        torn = Int(random.next() % UInt64(bytes.count + 1))
                    }
                    change.apply(to: &contents, tornTo: torn)
                }
            }
            try Self.write(contents, to: directory + "/" + name)
        }
    }

    /// Writes `contents` to a new file, leaving 4 KiB blocks of zeros as holes (as a file extended with
    /// `ftruncate` has them).
    private static func write(_ contents: [UInt8], to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        guard ftruncate(fd, off_t(contents.count)) == 0 else { throw POSIXError(.EIO) }
        let block = 4096
        try contents.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < contents.count {
                let end = min(offset + block, contents.count)
                if raw[offset..<end].contains(where: { $0 != 0 }) {
                    guard pwrite(fd, base + offset, end - offset, off_t(offset)) == end - offset else {
                        throw POSIXError(.EIO)
                    }
                }
                offset = end
            }
        }
    }
}
