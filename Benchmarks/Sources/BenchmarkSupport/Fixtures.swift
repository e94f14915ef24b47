import LogStore
import LogStoreExamples

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A fresh directory under /tmp, removed (with everything in it) by ``remove()``.
public final class TemporaryDirectory: @unchecked Sendable {
    public let path: String

    public init(prefix: String = "logstore-bench", root: String = "/tmp") {
        var template = Array("\(root)/\(prefix)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed: errno \(errno)")
        path = stringFromCString(template)
    }

    /// A path inside the directory (not created).
    public func child(_ name: String) -> String { path + "/" + name }

    /// Removes the directory tree.
    public func remove() { removeTree(path) }
}

/// Removes `path` and everything under it (like `rm -rf`).
public func removeTree(_ path: String) {
    if let dir = opendir(path) {
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name == "." || name == ".." { continue }
            removeTree(path + "/" + name)
        }
        closedir(dir)
        rmdir(path)
    } else {
        unlink(path)
    }
}

/// Sizes of the files directly in `directory`: logical (st_size) and allocated (st_blocks).
public func directorySize(_ directory: String, suffix: String = "") -> (logical: Int, allocated: Int, files: Int) {
    var logical = 0
    var allocated = 0
    var files = 0
    guard let dir = opendir(directory) else { return (0, 0, 0) }
    defer { closedir(dir) }
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
        }
        guard name != ".", name != "..", suffix.isEmpty || name.hasSuffix(suffix) else { continue }
        var info = stat()
        guard stat(directory + "/" + name, &info) == 0 else { continue }
        logical += Int(info.st_size)
        allocated += Int(info.st_blocks) * 512
        files += 1
    }
    return (logical, allocated, files)
}

/// Monotonic nanoseconds.
@inline(__always)
public func nanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// What ``fillStore(_:count:batchSize:seed:)`` wrote.
public struct FillSummary: Sendable {
    public var firstID: ObjectID
    public var lastID: ObjectID
    public var count: Int
    public var payloadBytes: Int
    public var referenceCount: Int
}

/// Writes `count` generated objects (batches of `batchSize`) into `store` and returns what it wrote.
/// The objects are the same for the same seed.
@discardableResult
public func fillStore(_ store: Store, count: Int, batchSize: Int = 1000, seed: UInt64 = 0x5EED_1065_7013_E000)
    throws -> FillSummary
{
    var generator = PayloadGenerator(seed: seed)
    var written = 0
    var payloadBytes = 0
    var references = 0
    var firstID: ObjectID?
    var lastID = ObjectID(0)
    while written < count {
        var batch = WriteBatch()
        let size = min(batchSize, count - written)
        batch.reserveCapacity(size)
        for _ in 0..<size {
            let id = store.newID()
            if firstID == nil { firstID = id }
            let object = generator.next(earlierCount: UInt64(written))
            let refs = object.references(for: id, firstID: firstID!)
            batch.put(id, typeTag: object.typeTag, references: refs, payload: object.payload)
            payloadBytes += object.payload.count
            references += refs.count
            lastID = id
            written += 1
        }
        try store.write(batch)
    }
    return FillSummary(
        firstID: firstID ?? ObjectID(1), lastID: lastID, count: written, payloadBytes: payloadBytes,
        referenceCount: references)
}

/// Ids to read, drawn uniformly (seeded) from `first...last`.
public func randomIDs(count: Int, in range: ClosedRange<UInt64>, seed: UInt64 = 0xBEEF) -> [ObjectID] {
    var random = SplitMix64(seed: seed)
    let span = Int(range.upperBound - range.lowerBound + 1)
    return (0..<count).map { _ in ObjectID(range.lowerBound + UInt64(random.below(span))) }
}

/// Drops the page-cache pages of every file in `directory` (`posix_fadvise(DONTNEED)`), so the next
/// read comes from the disk (or at least from the hypervisor's cache) rather than from this kernel's
/// page cache. Needs no privileges, unlike writing /proc/sys/vm/drop_caches.
public func evictFromPageCache(_ directory: String) {
    #if os(Linux)
        guard let dir = opendir(directory) else { return }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            guard name != ".", name != ".." else { continue }
            let fd = open(directory + "/" + name, O_RDONLY)
            guard fd >= 0 else { continue }
            fdatasync(fd)
            posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED))
            close(fd)
        }
    #endif
}

/// Runs `body(index)` on `count` new threads at once and waits for all of them.
///
/// Real threads, not Dispatch's pool: the pool runs only about as many blocks as there are cores,
/// and a writer blocked in `fdatasync` must not keep the next writer from starting.
public func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    final class Job: @unchecked Sendable {
        let body: @Sendable (Int) -> Void
        let index: Int
        init(_ body: @escaping @Sendable (Int) -> Void, _ index: Int) {
            self.body = body
            self.index = index
        }
    }
    var threads: [pthread_t] = []
    threads.reserveCapacity(count)
    for index in 0..<count {
        let job = Unmanaged.passRetained(Job(body, index)).toOpaque()
        #if canImport(Glibc)
            var thread = pthread_t()
        #else
            var thread: pthread_t?
        #endif
        let result = pthread_create(
            &thread, nil,
            { raw in
                let job = Unmanaged<Job>.fromOpaque(raw!).takeRetainedValue()
                job.body(job.index)
                return nil
            }, job)
        precondition(result == 0, "pthread_create failed: \(result)")
        #if canImport(Glibc)
            threads.append(thread)
        #else
            threads.append(thread!)
        #endif
    }
    for thread in threads { pthread_join(thread, nil) }
}

/// `count` threads that run one job at a time together: the caller's thread is worker 0 and
/// `count - 1` parked threads are the others. Waking parked threads costs a few microseconds
/// instead of the tens that creating threads for every iteration would.
public final class ThreadGang: @unchecked Sendable {
    public let count: Int
    private var job: (@Sendable (Int) -> Void)?
    private var stopping = false
    private let starts: [DispatchSemaphoreLike]
    private let done = DispatchSemaphoreLike()
    private var threads: [pthread_t] = []

    public init(_ count: Int) {
        precondition(count >= 1)
        self.count = count
        self.starts = (1..<max(count, 1)).map { _ in DispatchSemaphoreLike() }
        for index in 1..<count {
            let context = Unmanaged.passRetained(WorkerContext(gang: self, index: index)).toOpaque()
            #if canImport(Glibc)
                var thread = pthread_t()
            #else
                var thread: pthread_t?
            #endif
            let result = pthread_create(
                &thread, nil,
                { raw in
                    let context = Unmanaged<WorkerContext>.fromOpaque(raw!).takeRetainedValue()
                    context.gang.work(context.index)
                    return nil
                }, context)
            precondition(result == 0)
            #if canImport(Glibc)
                threads.append(thread)
            #else
                threads.append(thread!)
            #endif
        }
    }

    private final class WorkerContext {
        let gang: ThreadGang
        let index: Int
        init(gang: ThreadGang, index: Int) {
            self.gang = gang
            self.index = index
        }
    }

    private func work(_ index: Int) {
        while true {
            starts[index - 1].wait()
            if stopping { return }
            job!(index)
            done.signal()
        }
    }

    /// Runs `body(worker)` on every worker at once and returns when all finished.
    public func run(_ body: @escaping @Sendable (Int) -> Void) {
        job = body
        for start in starts { start.signal() }
        body(0)
        for _ in starts { done.wait() }
        job = nil
    }

    /// Ends the parked threads.
    public func stop() {
        stopping = true
        for start in starts { start.signal() }
        for thread in threads { pthread_join(thread, nil) }
        threads.removeAll()
    }
}

/// A counting semaphore over a pthread mutex and condition (no Foundation/Dispatch needed).
final class DispatchSemaphoreLike: @unchecked Sendable {
    // Heap-allocated: pthread objects must not move, which Swift does not promise for stored properties.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var value = 0

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func signal() {
        pthread_mutex_lock(mutex)
        value += 1
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    func wait() {
        pthread_mutex_lock(mutex)
        while value == 0 { pthread_cond_wait(condition, mutex) }
        value -= 1
        pthread_mutex_unlock(mutex)
    }
}

/// The text of a NUL-terminated C string held in an array.
public func stringFromCString(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
