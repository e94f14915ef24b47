import Foundation
import LogStore

extension ObjectContext {
    /// Stores `object` under the string `key` (a named root), replacing the object the key held before,
    /// which becomes garbage unless something else keeps it. Written by the next ``save()``.
    ///
    /// For example:
    ///
    /// ```swift
    /// let generated = try context.put(person)          // a new UUID key
    /// try context.put(other, key: "myID")
    /// try context.save()
    /// let again = try context.object(forKey: "myID", as: Person.self)
    /// ```
    /// - parameters:
    ///   - key: the key; nil generates a new unique one.
    /// - returns: the key.
    /// - throws: ``ObjectStoreError`` `unregisteredClass`, or `deletedObject`.
    @discardableResult
    public func put(_ object: any PersistentObject, key: String? = nil) throws(ObjectStoreError) -> String {
        let key = key ?? UUID().uuidString
        try setRoot(object, named: key)
        return key
    }

    /// The object stored under `key`, or nil.
    /// - throws: what ``root(named:as:)`` throws.
    public func object<T>(forKey key: String, as type: T.Type = T.self) throws(ObjectStoreError) -> T? {
        try root(named: key, as: type)
    }

    /// Removes `key` (on save); its object becomes garbage unless something else keeps it.
    public func removeObject(forKey key: String) {
        removeRoot(named: key)
    }

    /// The stored keys (named roots) whose objects are of class `type` (or a subclass), or of a class
    /// conforming to the protocol type `type` (see ``ids(of:includingSubclasses:)``), sorted.
    /// - throws: what ``ids(of:includingSubclasses:)`` throws.
    public func keys<T>(of type: T.Type, includingSubclasses: Bool = true) throws(ObjectStoreError) -> [String] {
        let tags = Set(try matchingTags(of: type, includingSubclasses: includingSubclasses))
        let view = try readView()
        do {
            var keys: [String] = []
            for (name, id) in view.roots() {
                if let header = try view.header(of: id), tags.contains(header.typeTag) { keys.append(name) }
            }
            return keys.sorted()
        } catch {
            throw ObjectStoreError(error)
        }
    }
}
