/// Working state of a context or of one of its helpers, accessed without the runtime's dynamic
/// exclusivity checks: the base class of the helpers that hold such state, and a box for the rest.
///
/// Swift checks every access to a class's stored property at run time (`swift_beginAccess`) unless it can
/// prove that no other access overlaps it. On the paths that encode and decode every field of every
/// object those checks cost about a third of the instructions of saving or loading a graph, so the
/// fields these paths use (the encoders' and decoders' buffers and cursors, the keyed containers and
/// their pool, the identity cache's tables, the load and save sessions' lists, the context's pending
/// changes, the reference fields' targets) live in one `State` struct per owner, in ``state``, which is
/// exempt from the checks. That is sound because no two accesses to one instance's ``state`` ever overlap:
/// - Across threads: each instance belongs to one ``ObjectContext`` (the context itself, its identity
///   cache, encoders, decoders, keyed containers and their pools, load and save sessions, and the
///   reference fields of the objects it loads). A context is not `Sendable`, so the compiler keeps it,
///   and everything it owns, on one thread or task at a time; no instance is shared between contexts.
/// - On that thread: the owners read or change one field of their state at a time and never pass the
///   state, or a field of it, `inout` to code that could reach the same instance again before returning
///   (a closure given to a mutating method of one field works on a copy of any other field it needs; a
///   nested load or encoding that needs a busy decoder or container takes a fresh one). The test suite
///   passes in debug builds with these checks switched on for ``state``.
///
/// Helpers subclass it (their state then sits in the helper's own allocation, one load away); a public
/// class, and a value shared by reference, hold an instance of it instead.
class ContextConfined<State> {
    /// The state.
    @exclusivity(unchecked) final var state: State

    /// An instance holding `state`.
    init(state: State) { self.state = state }
}
