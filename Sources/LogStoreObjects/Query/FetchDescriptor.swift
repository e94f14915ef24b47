import Foundation
import LogStore

/// What to fetch: objects of one class that match a predicate, sorted, and a page of them — the
/// conventions of SwiftData's `FetchDescriptor`, with Foundation's `Predicate` and `SortDescriptor`.
///
/// For example:
///
/// ```swift
/// let cutoff = Date().addingTimeInterval(7 * 86_400)
/// var due = FetchDescriptor<Task>(
///     predicate: #Predicate { $0.dueDate < cutoff && $0.priority >= 2 },
///     sortBy: [SortDescriptor(\.dueDate)])
/// due.fetchLimit = 20
/// let tasks = try context.fetch(due)          // through the index on dueDate, when Task declares one
/// print(try context.explain(due))             // index dueDate: dueDate < …
/// ```
///
/// A query uses an index of the class (``PersistentObject/indexes``) when the predicate's top-level
/// conjunction compares the index's first field with a constant (`==`, `<`, `<=`, `>`, `>=`,
/// `starts(with:)`; further fields of a compound index after `==` on the ones before), or, with no usable
/// condition, when its only sort descriptor is on the first field of an index over numbers, dates or
/// booleans and a limit is set. Otherwise it reads every object of the class. Either way the predicate is
/// evaluated on every object returned, so an index never changes a result, only its cost.
public struct FetchDescriptor<T: PersistentObject> {
    /// The objects to return; nil returns them all.
    public var predicate: Predicate<T>?
    /// The order of the results; ties, and the order with none, are by object id.
    public var sortBy: [SortDescriptor<T>]
    /// How many results to return at most.
    public var fetchLimit: Int?
    /// How many of the sorted results to skip.
    public var fetchOffset: Int?
    /// Whether objects of subclasses of `T` are included.
    public var includesSubclasses: Bool

    /// A descriptor of the objects of `T` matching `predicate`, in the order of `sortBy`.
    public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = [], includesSubclasses: Bool = true) {
        self.predicate = predicate
        self.sortBy = sortBy
        self.includesSubclasses = includesSubclasses
    }
}

/// How a query finds its objects, as ``ObjectContext/explain(_:)`` tells.
public struct QueryPlan: Sendable, CustomStringConvertible {
    /// Through which index, or nil for a scan of every object of the class.
    public let index: String?
    /// The conditions the index answers, in words (`dueDate < 2026-11-25…`).
    public var conditions: [String] { answered.map(\.text) }
    /// The conditions the index answers (put in words only when asked: a query does not pay for it).
    let answered: [QueryPlanner.Condition]
    /// Whether the results come in the index's order, so that no sort is needed and a limit stops early.
    public let usesIndexOrder: Bool
    /// How many objects the plan reads and tests (candidates from the index, or every object scanned).
    public let candidates: Int

    /// `index dueDate: dueDate < … (12 candidates)` or `scan of Task (1000 objects)`.
    public var description: String {
        if let index {
            let what = conditions.isEmpty ? "in index order" : conditions.joined(separator: " and ")
            return "index \(index): \(what)\(usesIndexOrder ? ", sorted by the index" : "") (\(candidates) candidates)"
        }
        return "scan (\(candidates) objects)"
    }
}
