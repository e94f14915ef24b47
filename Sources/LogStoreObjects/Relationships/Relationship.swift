import LogStore

/// What happens to the objects a relationship holds when the object holding it is deleted.
public enum DeleteRule: String, Sendable, Equatable {
    /// The targets stay; the deleted object is taken out of their inverse field (when the relationship
    /// has one). The default.
    case nullify
    /// The targets are deleted with it (and their own rules apply in turn).
    case cascade
    /// The delete is refused (``ObjectStoreError/Code/deleteDenied``) while the relationship holds an
    /// object that is not deleted by the same save.
    case deny
}

/// A relationship a persistent class declares on a field that holds other persistent objects: to one
/// (`U?`) or to many (`[U]`), optionally with the inverse field of the other class and a delete rule.
///
/// A class lists its relationships in ``PersistentObject/relationships``. On every save the context keeps
/// the two fields of an inverse pair consistent (whichever side you changed), applies the delete rules of
/// the objects deleted, and takes deleted objects out of every relationship field that holds them (found
/// through an index of the field's references, which declaring the relationship keeps). For example:
///
/// ```swift
/// @Persistent final class Project {
///     static let relationships: [Relationship] = [
///         .toMany(\Project.tasks, inverse: \Task.project, deleteRule: .cascade)
///     ]
///     var tasks: [Task] = []
/// }
/// @Persistent final class Task {
///     @Reference var project: Project? = nil
/// }
/// ```
///
/// The two fields of an inverse pair refer to each other, a cycle: as for any cycle, one of them must be
/// stored through a box (`@Reference` with `@Persistent`, or an ``ObjectRef`` / ``ObjectList`` field),
/// or the save is refused with `cyclicReference`.
///
/// Then `task.project = project` puts the task into `project.tasks` when the context saves, removing it
/// from its former project's; deleting the project deletes its tasks.
///
/// When both fields of one link were changed in ways that disagree, a to-one field's own new value wins.
/// A field is named by a key path to a stored property, as in ``IndexDefinition`` (pass `field:` and
/// `inverseField:` for a class whose key paths do not tell the stored field's name).
public struct Relationship: Sendable, CustomStringConvertible {
    let end: RelationshipEnd
    let inverse: RelationshipEnd?
    /// The rule for the targets when an object holding this relationship is deleted.
    public let deleteRule: DeleteRule

    private init(_ end: RelationshipEnd, inverse: RelationshipEnd?, deleteRule: DeleteRule) {
        self.end = end
        self.inverse = inverse
        self.deleteRule = deleteRule
    }

    /// A to-many relationship whose inverse holds one object: `project.tasks` and `task.project`.
    public static func toMany<T: PersistentObject, U: PersistentObject>(
        _ keyPath: ReferenceWritableKeyPath<T, [U]>, inverse: ReferenceWritableKeyPath<U, T?>,
        deleteRule: DeleteRule = .nullify, field: String? = nil, inverseField: String? = nil
    ) -> Relationship {
        Relationship(.many(keyPath, field), inverse: .one(inverse, inverseField), deleteRule: deleteRule)
    }

    /// A to-many relationship whose inverse holds many too: `task.tags` and `tag.tasks`.
    public static func toMany<T: PersistentObject, U: PersistentObject>(
        _ keyPath: ReferenceWritableKeyPath<T, [U]>, inverse: ReferenceWritableKeyPath<U, [T]>,
        deleteRule: DeleteRule = .nullify, field: String? = nil, inverseField: String? = nil
    ) -> Relationship {
        Relationship(.many(keyPath, field), inverse: .many(inverse, inverseField), deleteRule: deleteRule)
    }

    /// A to-many relationship without an inverse field: a deleted target is still taken out of it.
    public static func toMany<T: PersistentObject, U: PersistentObject>(
        _ keyPath: ReferenceWritableKeyPath<T, [U]>, deleteRule: DeleteRule = .nullify, field: String? = nil
    ) -> Relationship {
        Relationship(.many(keyPath, field), inverse: nil, deleteRule: deleteRule)
    }

    /// A to-one relationship whose inverse holds many: `task.project` and `project.tasks`.
    public static func toOne<T: PersistentObject, U: PersistentObject>(
        _ keyPath: ReferenceWritableKeyPath<T, U?>, inverse: ReferenceWritableKeyPath<U, [T]>,
        deleteRule: DeleteRule = .nullify, field: String? = nil, inverseField: String? = nil
    ) -> Relationship {
        Relationship(.one(keyPath, field), inverse: .many(inverse, inverseField), deleteRule: deleteRule)
    }

    /// A one-to-one relationship: `user.profile` and `profile.user`.
    public static func toOne<T: PersistentObject, U: PersistentObject>(
        _ keyPath: ReferenceWritableKeyPath<T, U?>, inverse: ReferenceWritableKeyPath<U, T?>,
        deleteRule: DeleteRule = .nullify, field: String? = nil, inverseField: String? = nil
    ) -> Relationship {
        Relationship(.one(keyPath, field), inverse: .one(inverse, inverseField), deleteRule: deleteRule)
    }

    /// A to-one relationship without an inverse field: set to nil when its target is deleted.
    public static func toOne<T: PersistentObject, U: PersistentObject>(
        _ keyPath: ReferenceWritableKeyPath<T, U?>, deleteRule: DeleteRule = .nullify, field: String? = nil
    ) -> Relationship {
        Relationship(.one(keyPath, field), inverse: nil, deleteRule: deleteRule)
    }

    /// `to-many \Project.tasks ↔ \Task.project, cascade`.
    public var description: String {
        (end.isToMany ? "to-many " : "to-one ") + "\(end.keyPath)" + (inverse.map { " ↔ \($0.keyPath)" } ?? "")
            + ", \(deleteRule.rawValue)"
    }
}

/// One field of a relationship, with type-erased access to the objects it holds.
///
/// The key path and the closures are immutable once made and capture nothing else mutable, so sharing
/// them between threads is safe; every call runs on the thread of the context that owns the objects.
struct RelationshipEnd: @unchecked Sendable {
    let keyPath: AnyKeyPath
    let givenField: String?
    let isToMany: Bool
    let ownerType: any PersistentObject.Type
    let targetType: any PersistentObject.Type
    /// Whether an object is of the class that holds the field (or a subclass).
    let owns: (any PersistentObject) -> Bool
    /// Whether objects of a class may hold the field, or be held by it.
    let involves: (any PersistentObject.Type) -> Bool
    /// Whether an object can be held by the field.
    let accepts: (any PersistentObject) -> Bool
    /// The objects the field of an owner holds.
    let targets: (any PersistentObject) -> [any PersistentObject]
    /// Adds a target (a to-one field is set to it); returns the target it replaced.
    let add: (any PersistentObject, any PersistentObject) -> (any PersistentObject)?
    /// Takes a target out (a to-one field holding it is set to nil); returns whether it was there.
    let remove: (any PersistentObject, any PersistentObject) -> Bool
    /// Sets the field of an owner to the targets given (a to-one field to the first, or nil).
    let set: (any PersistentObject, [any PersistentObject]) -> Void
    /// The owners whose field refers to a target, as of a context (through the field's references index).
    let referrers: (ObjectContext, any PersistentObject) throws(ObjectStoreError) -> [any PersistentObject]
    /// The references index the relationship keeps on the field.
    let index: IndexDefinition

    static func many<T: PersistentObject, U: PersistentObject>(
        _ keyPath: ReferenceWritableKeyPath<T, [U]>, _ field: String?
    ) -> RelationshipEnd {
        RelationshipEnd(
            keyPath: keyPath, givenField: field, isToMany: true, ownerType: T.self, targetType: U.self,
            owns: { $0 is T }, involves: { $0 is T.Type || $0 is U.Type }, accepts: { $0 is U },
            targets: { owner in (owner as? T)?[keyPath: keyPath] ?? [] },
            add: { owner, target in
                guard let owner = owner as? T, let target = target as? U else { return nil }
                if !owner[keyPath: keyPath].contains(where: { $0 === target }) {
                    owner[keyPath: keyPath].append(target)
                }
                return nil
            },
            remove: { owner, target in
                guard let owner = owner as? T, owner[keyPath: keyPath].contains(where: { $0 === target }) else {
                    return false
                }
                owner[keyPath: keyPath].removeAll { $0 === target }
                return true
            },
            set: { owner, targets in
                guard let owner = owner as? T else { return }
                let typed = targets.compactMap { $0 as? U }
                let same =
                    owner[keyPath: keyPath].count == typed.count
                    && zip(owner[keyPath: keyPath], typed).allSatisfy { $0 === $1 }
                if !same { owner[keyPath: keyPath] = typed }
            },
            referrers: { context, target throws(ObjectStoreError) in try context.referrers(to: target, through: keyPath)
            },
            index: .references(keyPath, field: field))
    }

    static func one<T: PersistentObject, U: PersistentObject>(
        _ keyPath: ReferenceWritableKeyPath<T, U?>, _ field: String?
    ) -> RelationshipEnd {
        RelationshipEnd(
            keyPath: keyPath, givenField: field, isToMany: false, ownerType: T.self, targetType: U.self,
            owns: { $0 is T }, involves: { $0 is T.Type || $0 is U.Type }, accepts: { $0 is U },
            targets: { owner in (owner as? T)?[keyPath: keyPath].map { [$0] } ?? [] },
            add: { owner, target in
                guard let owner = owner as? T, let target = target as? U else { return nil }
                let old = owner[keyPath: keyPath]
                if old === target { return nil }
                owner[keyPath: keyPath] = target
                return old
            },
            remove: { owner, target in
                guard let owner = owner as? T, owner[keyPath: keyPath] === target else { return false }
                owner[keyPath: keyPath] = nil
                return true
            },
            set: { owner, targets in
                guard let owner = owner as? T else { return }
                let typed = targets.first as? U
                if owner[keyPath: keyPath] !== typed { owner[keyPath: keyPath] = typed }
            },
            referrers: { context, target throws(ObjectStoreError) in try context.referrers(to: target, through: keyPath)
            },
            index: .references(keyPath, field: field))
    }
}
