@_spi(Engine) import LogStoreSystem

/// Whether registered classes conform to the protocols queries named, as found by loading one object of
/// the class (see ``ObjectContext/ids(of:includingSubclasses:)``).
///
/// One per ``ObjectStore``, shared by its contexts on any thread. A class's conformances are fixed when
/// the program is built, so an answer, once found, holds for the life of the process.
final class ConformanceCache: Sendable {
    /// A registered class and a protocol type.
    private struct Key: Hashable {
        let type: ObjectIdentifier
        let existential: ObjectIdentifier
    }

    private struct State {
        var answers: [Key: Bool] = [:]
        /// How many objects were loaded to find an answer.
        var probes = 0
    }

    /// A pthread mutex rather than `Mutex`: the thread sanitizer cannot see a futex-based lock on Linux.
    private let state = ConditionLock(State())

    /// Whether `type` conforms to `existential`, when an earlier query found out.
    func answer(_ type: any PersistentObject.Type, _ existential: Any.Type) -> Bool? {
        let key = Key(type: ObjectIdentifier(type), existential: ObjectIdentifier(existential))
        return state.withLock { $0.answers[key] }
    }

    /// Records whether `type` conforms to `existential`, found by loading one of its objects.
    func record(_ conforms: Bool, _ type: any PersistentObject.Type, _ existential: Any.Type) {
        let key = Key(type: ObjectIdentifier(type), existential: ObjectIdentifier(existential))
        state.withLock { state in
            state.answers[key] = conforms
            state.probes += 1
        }
    }

    /// How many objects were loaded to find whether their class conforms to a protocol.
    var probes: Int { state.withLock { $0.probes } }
}
