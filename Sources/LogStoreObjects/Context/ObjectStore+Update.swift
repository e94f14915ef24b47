import LogStore

extension ObjectStore {
    /// Runs `body` in a new context and saves what it changed; when the save fails with `conflict` (another
    /// context changed an object `body` read and changed), runs it again in another new context, which reads
    /// the newer state, up to `attempts` times in all.
    ///
    /// Before running `body` again it waits until the save it conflicted with is visible (so the new
    /// context reads a state at least as new) and then a short random time that doubles with each attempt
    /// (at most 2 ms), so that writers of one object spread out; while a run that conflicted 4 times or
    /// more retries, the other runs of this object store wait for it (up to 50 ms), so none starves. The context keeps every object `body`
    /// loads until the save, so a change to an object `body` does not hold on to is saved too.
    ///
    /// Use it for short read-modify-write work that can simply be redone, such as incrementing a counter
    /// or adding to a list. `body` may run more than once, so it should change nothing outside the context
    /// it is given. Work that must not be redone without asking (an edit the user made on the screen) saves
    /// through its own context instead and handles `conflict` itself, e.g. by showing both versions.
    ///
    /// For example:
    /// ```swift
    /// try objects.update { context in
    ///     guard let circle = try context.object(id: id, as: Circle.self) else { return }
    ///     circle.radius += 1
    /// }
    /// ```
    /// - parameter attempts: how many times `body` may run (at least 1).
    /// - returns: what the successful run of `body` returned.
    /// - throws: what `body` throws, the last `conflict` when every attempt conflicted, and what
    ///   ``ObjectContext/save()`` throws.
    @discardableResult
    public func update<Result>(attempts: Int = 3, _ body: (ObjectContext) throws -> Result) throws -> Result {
        var attempt = 1
        var run = ContendedRun(contention)
        defer { run.end() }
        while true {
            run.admit()
            let context = makeContext()
            let result = try body(context)
            let failure: ObjectStoreError
            do {
                try context.save()
                return result
            } catch {
                failure = error
            }
            guard failure.code == .conflict, attempt < attempts else { throw failure }
            run.conflicted(attempt)
            ConflictBackoff.wait(after: attempt, store: store)
            attempt += 1
        }
    }

    /// ``update(attempts:_:)`` for Swift concurrency: runs `body` in the caller's isolation (on the caller's
    /// actor, or in the calling task), and suspends instead of blocking while it backs off between attempts.
    /// The save encodes the changed objects in the caller's isolation too; the commit, and the wait for
    /// its sync, run on a thread outside the cooperative pool while the caller is suspended (see
    /// ``write(attempts:_:)`` to run `body` there as well). A cancelled task stops retrying and throws
    /// `CancellationError`; a save that has begun is finished.
    ///
    /// On an actor, other work of the actor may run while the commit waits (as at any `await`), including
    /// other updates, which may then conflict with this one and retry. `body` should not hand its
    /// context, or the objects it loads, to such work: they are the save's until `update` returns.
    ///
    /// For example:
    /// ```swift
    /// try await objects.update { context in
    ///     guard let circle = try context.object(id: id, as: Circle.self) else { return }
    ///     circle.radius += 1
    /// }
    /// ```
    /// - parameter attempts: how many times `body` may run (at least 1).
    /// - returns: what the successful run of `body` returned.
    /// - throws: what `body` throws, the last `conflict` when every attempt conflicted, what
    ///   ``ObjectContext/save()`` throws, and `CancellationError`.
    @discardableResult
    public func update<Result>(
        attempts: Int = 3, isolation: isolated (any Actor)? = #isolation, _ body: (ObjectContext) throws -> Result
    ) async throws -> Result {
        var attempt = 1
        var run = ContendedRun(contention)
        defer { run.end() }
        while true {
            try Task.checkCancellation()
            try await run.admit()
            let context = makeContext()
            let result = try body(context)
            let failure: ObjectStoreError
            do {
                _ = try await context.writeChanges()
                return result
            } catch {
                failure = error
            }
            guard failure.code == .conflict, attempt < attempts else { throw failure }
            run.conflicted(attempt)
            try await ConflictBackoff.pause(after: attempt, store: store)
            attempt += 1
        }
    }
}
