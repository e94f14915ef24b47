import LogStore

/// Reading and writing from Swift concurrency without blocking its cooperative pool.
///
/// The pool has one thread per core, and a task that blocks (a load whose pages are not in memory, a
/// save waiting for its sync) blocks one of them: a few such tasks stop every other task of the process.
/// ``read(_:)`` and ``write(attempts:_:)`` run their work, in a context of its own, on a thread outside
/// the pool and suspend the calling task meanwhile.
extension ObjectStore {
    /// Runs `body` with a new context on a thread outside the cooperative pool and returns what it
    /// returns; the calling task is suspended meanwhile.
    ///
    /// Everything `body` loads, queries and counts reads one snapshot of the store (taken at its first
    /// read), however other contexts save meanwhile. The context is dropped when `body` returns, with
    /// any changes `body` made to it (use ``write(attempts:_:)`` to save changes). `body` runs on another
    /// thread, so it is `@Sendable`, and it returns a `Sendable` value: hand over plain values or
    /// ``ObjectID``s, not the objects it loaded (they belong to its context).
    ///
    /// For example:
    /// ```swift
    /// let (pages, circles) = try await objects.read { context in
    ///     (try context.count(of: Page.self), try context.count(of: Circle.self))
    /// }
    /// ```
    /// - parameter body: the reading work; it gets a new context.
    /// - returns: what `body` returned.
    /// - throws: `CancellationError` when the task is cancelled before `body` starts (it does not run
    ///   then), and what `body` throws.
    public func read<Result: Sendable>(_ body: @escaping @Sendable (ObjectContext) throws -> Result) async throws
        -> Result
    {
        try Task.checkCancellation()
        return try await BlockingExecutor.run { () throws in try body(self.makeContext()) }
    }

    /// Runs `body` in a new context and saves what it changed, on a thread outside the cooperative pool
    /// (the save's wait for its sync blocks that thread, not the pool), and returns what `body` returned;
    /// the calling task is suspended meanwhile. When the save fails with `conflict`, runs `body` again in
    /// another new context, up to `attempts` times in all, as ``update(attempts:_:)`` does.
    ///
    /// Between attempts it waits, suspended, until the save it conflicted with is visible and then a short
    /// random time that doubles with each attempt, and it lets runs that keep conflicting through first
    /// (as ``update(attempts:_:)`` does). `body` may run more than once, so it should change nothing
    /// outside the context it is given; it runs on another thread, so it is `@Sendable` and returns a
    /// `Sendable` value (plain values or ``ObjectID``s, not the objects it loaded). To run the work in the
    /// caller's isolation instead (on the main actor, touching its state), use
    /// ``update(attempts:isolation:_:)``, which moves only the commit off the pool.
    ///
    /// A cancelled task stops before the next attempt and throws `CancellationError`; an attempt that has
    /// begun runs to the end, so a save that succeeded is returned, not thrown away.
    ///
    /// For example:
    /// ```swift
    /// let radius = try await objects.write { context in
    ///     guard let circle = try context.object(id: id, as: Circle.self) else { return 0.0 }
    ///     circle.radius += 1
    ///     return circle.radius
    /// }
    /// ```
    /// - parameters:
    ///   - attempts: how many times `body` may run (at least 1); 3 by default, as for
    ///     ``update(attempts:_:)``: enough for the conflicts of a few writers of one object, few enough
    ///     that work that keeps losing reports it.
    ///   - body: the work; it gets a new context, which is saved when it returns.
    /// - returns: what the successful run of `body` returned.
    /// - throws: what `body` throws (the context is not saved then, and `body` does not run again), the
    ///   last `conflict` when every attempt conflicted, what ``ObjectContext/save()`` throws, and
    ///   `CancellationError`.
    @discardableResult
    public func write<Result: Sendable>(
        attempts: Int = 3, _ body: @escaping @Sendable (ObjectContext) throws -> Result
    ) async throws -> Result {
        var attempt = 1
        var run = ContendedRun(contention)
        defer { run.end() }
        while true {
            try Task.checkCancellation()
            try await run.admit()
            let outcome = try await BlockingExecutor.run { () throws -> WriteAttempt<Result> in
                let context = self.makeContext()
                let result = try body(context)
                do throws(ObjectStoreError) {
                    try context.save()
                    return .saved(result)
                } catch {
                    return .refused(error)
                }
            }
            let failure: ObjectStoreError
            switch outcome {
            case .saved(let result): return result
            case .refused(let error): failure = error
            }
            guard failure.code == .conflict, attempt < attempts else { throw failure }
            run.conflicted(attempt)
            try await ConflictBackoff.pause(after: attempt, store: store)
            attempt += 1
        }
    }
}

/// How one attempt of ``ObjectStore/write(attempts:_:)`` ended when its body returned: saved, or the save
/// was refused (an error the body throws ends the run instead).
private enum WriteAttempt<Result: Sendable>: Sendable {
    case saved(Result)
    case refused(ObjectStoreError)
}
