import Foundation
import LogStoreObjects

/// An in-memory nested dictionary with the ODB's semantics, for the property test.
struct ODBModel {
    /// A table: folded key → (key as created, child).
    struct Table: Equatable {
        var children: [String: Entry] = [:]
    }

    struct Entry: Equatable {
        var key: String
        var child: Child
    }

    indirect enum Child: Equatable {
        case table(Table)
        case value(ODBValue, String?)
    }

    /// What an operation did: nothing wrong, or the ODB error code it must throw.
    enum Outcome: Equatable {
        case ok
        case failed(ODBError.Code)
    }

    var root = Table()

    /// The folding of the test's keys (ASCII and ß only).
    static func fold(_ key: String) -> String {
        key.lowercased().replacingOccurrences(of: "ß", with: "ss")
    }

    /// Runs `body` on the table at `keys`, creating missing tables when `create` is set.
    private static func withTable(
        _ table: inout Table, _ keys: ArraySlice<String>, create: Bool, _ body: (inout Table) -> Outcome
    ) -> Outcome {
        guard let key = keys.first else { return body(&table) }
        let folded = fold(key)
        switch table.children[folded]?.child {
        case .value: return .failed(.notATable)
        case nil:
            guard create else { return .failed(.notFound) }
            var child = Table()
            let outcome = withTable(&child, keys.dropFirst(), create: true, body)
            if outcome == .ok { table.children[folded] = Entry(key: key, child: .table(child)) }
            return outcome
        case .table(var child):
            let outcome = withTable(&child, keys.dropFirst(), create: create, body)
            table.children[folded]?.child = .table(child)
            return outcome
        }
    }

    /// Sets `key` in `table`, keeping the spelling of an existing key.
    private static func put(_ child: Child, _ key: String, in table: inout Table) {
        let folded = fold(key)
        if table.children[folded] != nil {
            table.children[folded]?.child = child
        } else {
            table.children[folded] = Entry(key: key, child: child)
        }
    }

    mutating func setValue(_ value: ODBValue, _ type: String?, at keys: [String]) -> Outcome {
        guard let last = keys.last else { return .failed(.rootTable) }
        return Self.withTable(&root, keys.dropLast()[...], create: true) { table in
            Self.put(.value(value, type), last, in: &table)
            return .ok
        }
    }

    mutating func ensureTable(_ keys: [String]) -> Outcome {
        Self.withTable(&root, keys[...], create: true) { _ in .ok }
    }

    mutating func createTable(_ keys: [String]) -> Outcome {
        guard let last = keys.last else { return .failed(.rootTable) }
        return Self.withTable(&root, keys.dropLast()[...], create: false) { table in
            Self.put(.table(Table()), last, in: &table)
            return .ok
        }
    }

    /// Deletes; `.ok` when something was deleted, `.failed(.notFound)` when nothing was there.
    mutating func delete(_ keys: [String]) -> Outcome {
        guard let last = keys.last else { return .failed(.rootTable) }
        let outcome = Self.withTable(&root, keys.dropLast()[...], create: false) { table in
            table.children.removeValue(forKey: Self.fold(last)) == nil ? .failed(.notFound) : .ok
        }
        return outcome == .ok ? .ok : .failed(.notFound)
    }

    mutating func deleteAll(_ keys: [String]) -> Outcome {
        Self.withTable(&root, keys[...], create: false) { table in
            table.children = [:]
            return .ok
        }
    }

    /// What is at `keys`.
    func child(at keys: [String]) -> Child? {
        var current = Child.table(root)
        for key in keys {
            guard case .table(let table) = current, let entry = table.children[Self.fold(key)] else { return nil }
            current = entry.child
        }
        return current
    }
}
