import Foundation
import LogStore

/// Chooses how a query finds its candidates: the index whose fields the predicate's conditions constrain
/// best (equalities on leading fields, then a range or prefix on the next), or the index that gives the
/// requested order when there is a limit, or a scan.
struct QueryPlanner {
    /// A condition an index answers: its field, its comparison (`==`, `<`, `<=`, `>`, `>=`, `starts with`)
    /// and the value compared with.
    struct Condition: Sendable {
        let field: String
        let comparison: String
        let value: IndexValue

        /// `due < 2026-…`, or `code starts with "QT-"`.
        var text: String {
            if case .string(let prefix) = value, comparison == "starts with" {
                return "\(field) starts with \"\(prefix)\""
            }
            return "\(field) \(comparison) \(value)"
        }
    }

    /// A chosen index and what to read of it.
    struct IndexChoice {
        let index: Int
        /// Values of the leading fields compared with `==`.
        var equalities: [IndexValue] = []
        /// Bounds on the field after them.
        var lower: (value: IndexValue, inclusive: Bool)?
        var upper: (value: IndexValue, inclusive: Bool)?
        var prefix: String?
        /// Conditions the choice answers, and how many of the predicate's.
        var described: [Condition] = []
        var consumed = 0
        /// Whether the index order is the requested order (and in which direction).
        var ordered = false
        var reverse = false
        /// How many fields the index has.
        var fieldCount = 0
    }

    let definitions: [ResolvedIndex]

    /// A query's order when it is one key path (an index can give it); nil otherwise.
    struct SingleSort {
        let keyPath: AnyKeyPath
        let reverse: Bool

        /// Read once per query, so that choosing is not generic (a generic call instantiates type metadata).
        init?<T>(_ sortBy: [SortDescriptor<T>]) {
            guard sortBy.count == 1, let sort = sortBy.first, let keyPath = sort.keyPath else { return nil }
            self.keyPath = keyPath
            reverse = sort.order == .reverse
        }
    }

    func choose(_ analysis: PredicateAnalysis, sort: SingleSort?, limited: Bool) -> IndexChoice? {
        var best: IndexChoice?
        for (number, definition) in definitions.enumerated() {
            var choice = IndexChoice(index: number)
            choice.fieldCount = definition.keyPaths.count
            var fieldIndex = 0
            while fieldIndex < definition.keyPaths.count {
                let keyPath = definition.keyPaths[fieldIndex]
                var here: [FieldCondition] = []
                var equal: FieldCondition?
                for condition in analysis.conditions where condition.keyPath == keyPath {
                    here.append(condition)
                    if equal == nil, condition.op == .equal { equal = condition }
                }
                guard !here.isEmpty else { break }
                if let equal {
                    choice.equalities.append(equal.value)
                    choice.described.append(
                        Condition(field: definition.fields[fieldIndex], comparison: "==", value: equal.value))
                    choice.consumed += here.count == 1 ? 1 : 0
                    fieldIndex += 1
                    continue
                }
                for condition in here {
                    let field = definition.fields[fieldIndex]
                    switch condition.op {
                    case .less, .lessOrEqual:
                        if choice.upper.map({ condition.value < $0.value }) ?? true {
                            choice.upper = (condition.value, condition.op == .lessOrEqual)
                        }
                        choice.described.append(
                            Condition(
                                field: field, comparison: condition.op == .less ? "<" : "<=", value: condition.value))
                    case .greater, .greaterOrEqual:
                        if choice.lower.map({ $0.value < condition.value }) ?? true {
                            choice.lower = (condition.value, condition.op == .greaterOrEqual)
                        }
                        choice.described.append(
                            Condition(
                                field: field, comparison: condition.op == .greater ? ">" : ">=", value: condition.value)
                        )
                    case .prefix:
                        if case .string(let text) = condition.value, choice.prefix == nil {
                            choice.prefix = text
                            choice.described.append(
                                Condition(field: field, comparison: "starts with", value: .string(text)))
                        }
                    case .equal: break
                    }
                    choice.consumed += 1
                }
                fieldIndex += 1
                break
            }
            // The index gives the requested order when its first field not compared with `==` is the sort's.
            if let sort, choice.prefix == nil,
                choice.equalities.count < definition.keyPaths.count,
                definition.keyPaths[choice.equalities.count] == sort.keyPath,
                Self.ordersLikeSortDescriptors(type(of: sort.keyPath).valueType)
            {
                choice.ordered = true
                choice.reverse = sort.reverse
            }
            let usable = !choice.described.isEmpty || (choice.ordered && limited)
            guard usable else { continue }
            if let current = best {
                let score = choice.described.count * 2 + (choice.ordered ? 1 : 0)
                let bestScore = current.described.count * 2 + (current.ordered ? 1 : 0)
                if score <= bestScore { continue }
            }
            best = choice
        }
        return best
    }

    /// Whether `SortDescriptor` orders values of `type` as an index does (numbers, dates, booleans; not
    /// strings, which it compares with a localized comparator, nor optionals).
    static func ordersLikeSortDescriptors(_ type: Any.Type) -> Bool {
        let orderable: [Any.Type] = [
            Int.self, Int8.self, Int16.self, Int32.self, Int64.self, UInt.self, UInt8.self, UInt16.self, UInt32.self,
            UInt64.self, Double.self, Float.self, Date.self,
        ]
        return orderable.contains { $0 == type }
    }

    /// The ids an index choice reads, in index order (each once), from `data`.
    static func ids(_ choice: IndexChoice, in data: TypeIndexData) -> [ObjectID] {
        let entries = data.entries[choice.index]
        let prefix = choice.equalities
        // Every field of a unique index compared with `==`: its hash table answers.
        if choice.lower == nil, choice.upper == nil, choice.prefix == nil, !prefix.isEmpty,
            prefix.count == choice.fieldCount, data.holders[choice.index] != nil
        {
            let key = CompoundKey(prefix)
            if data.holder(of: key, in: choice.index).exact { return data.ids(withKey: key, in: choice.index) }
        }
        var start = entries.position(ofPrefix: prefix, after: false)
        var end = entries.position(ofPrefix: prefix, after: true)
        if let lower = choice.lower {
            start = entries.position(ofPrefix: prefix + [lower.value], after: !lower.inclusive)
        }
        if let upper = choice.upper { end = entries.position(ofPrefix: prefix + [upper.value], after: upper.inclusive) }
        if let text = choice.prefix {
            start = SortedEntries.Position.later(
                start, entries.position(ofPrefix: prefix + [.string(text)], after: false))
        }
        var ids: [ObjectID] = []
        // An object holds several keys of one index only through an array field.
        var seen: Set<ObjectID>? = data.multipleKeys[choice.index].isEmpty ? nil : []
        let field = prefix.count
        func take(_ entry: IndexEntryKey) -> Bool {
            if let text = choice.prefix {
                guard let value = entry.key.value(at: field), value.hasPrefix(text) else { return choice.reverse }
            }
            if seen?.insert(entry.id).inserted ?? true { ids.append(entry.id) }
            return true
        }
        if choice.reverse {
            entries.forEachReversed(from: start, to: end, take)
        } else {
            entries.forEach(from: start, to: end, take)
        }
        return ids
    }
}

extension FieldCondition.Operator: Equatable {}
