import Dispatch
@_spi(Engine) import LogStoreSystem

/// Runs work that blocks its thread (a commit waiting for its sync, a read that touches pages not yet in
/// memory) on threads outside Swift concurrency's cooperative pool, and resumes the awaiting task when it
/// is done. The pool has one thread per core: a few tasks blocked in such work would stop every other
/// task of the process.
///
/// The work runs on at most ``maximumWorkers`` worker threads at once, in the order it was handed in;
/// work beyond that waits, queued, for a worker. A worker is the thread of a serial dispatch queue of its
/// own, which libdispatch gives a thread even when its other threads are blocked. Not a concurrent
/// dispatch queue: on Linux its threads are those of the global queues, which also run the tasks of the
/// cooperative pool, so blocked work there blocks the tasks too, until libdispatch notices and (every
/// second or so) adds a thread.
///
/// Work must not wait for other work handed to the executor (it might still be queued): the engine's
/// waits (for the group-commit leader, for the sync of accepted batches) are for threads already inside
/// the engine, never for queued work.
///
/// For example:
/// ```swift
/// let sequence = try await BlockingExecutor.run { () throws(LogStoreError) in try store.write(batch) }
/// ```
package enum BlockingExecutor {
    /// The most worker threads at once: enough for the commits of many tasks to wait side by side (and
    /// share one sync), few enough that a burst of work does not make hundreds of threads.
    static let maximumWorkers = 32

    /// The work waiting for a worker, and how many workers run.
    private struct Queue: Sendable {
        /// Work in the order it was handed in, from `head` on (the slots before `head` are done).
        var jobs: [(@Sendable () -> Void)?] = []
        var head = 0
        var workers = 0
    }

    /// The queue (a pthread mutex, which the thread sanitizer sees, unlike a futex-based `Mutex`).
    private static let queue = ConditionLock(Queue())

    /// Runs `work` on a worker thread and returns what it returns, suspending the calling task meanwhile.
    ///
    /// The work runs to the end whatever happens to the task: cancelling the task neither stops it nor
    /// ends the wait early (callers check for cancellation before they start work that must not be cut
    /// short, such as a commit).
    /// - returns: what `work` returned.
    /// - throws: what `work` threw.
    package static func run<Value: Sendable, Failure: Error>(
        _ work: @escaping @Sendable () throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        let outcome: Result<Value, Failure> = await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: Result(catching: work)) }
        }
        return try outcome.get()
    }

    /// Queues `job`, and starts a worker when fewer than ``maximumWorkers`` run.
    private static func submit(_ job: @escaping @Sendable () -> Void) {
        let startsWorker = queue.withLock { queue in
            queue.jobs.append(job)
            guard queue.workers < maximumWorkers else { return false }
            queue.workers += 1
            return true
        }
        if startsWorker {
            DispatchQueue(label: "LogStore.BlockingExecutor").async { work() }
        }
    }

    /// A worker: runs queued jobs until there is none left.
    private static func work() {
        while let job = next() { job() }
    }

    /// The next job, or nil (and one worker fewer) when none is queued.
    private static func next() -> (@Sendable () -> Void)? {
        queue.withLock { queue in
            guard queue.head < queue.jobs.count else {
                queue.workers -= 1
                return nil
            }
            let job = queue.jobs[queue.head]
            queue.jobs[queue.head] = nil
            queue.head += 1
            if queue.head == queue.jobs.count {
                queue.jobs.removeAll(keepingCapacity: true)
                queue.head = 0
            } else if queue.head >= 64 && queue.head * 2 >= queue.jobs.count {
                queue.jobs.removeFirst(queue.head)
                queue.head = 0
            }
            return job
        }
    }
}
