import Foundation

/// Runs the jobs of the tasks that prefer it on one thread of its own, so that their latency does not
/// depend on the shared pool (which tests keep busy with blocking work).
///
/// For example:
/// ```swift
/// let executor = ThreadExecutor()
/// defer { executor.stop() }
/// let reader = Task(executorPreference: executor) { for await change in feed { record(change) } }
/// ```
///
/// `@unchecked Sendable`: its mutable state (`jobs`, `stopped`) is only touched holding `condition`.
package final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false

    package init() {
        Thread.detachNewThread { [self] in run() }
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread once the jobs queued are run.
    package func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
