import LogStore

/// The relationships of the registered classes, each field once, with its stored field name, its delete
/// rule and its inverse. Built when the ``ObjectStore`` opens; immutable afterwards.
struct RelationshipTable: Sendable {
    struct Entry: Sendable {
        let end: RelationshipEnd
        /// The stored field name.
        let field: String
        /// Earlier names of the field.
        let aliases: [String]
        var rule: DeleteRule
        /// The entry of the inverse field.
        var inverse: Int?
    }

    private(set) var entries: [Entry] = []
    /// The type tags of the registered classes whose objects may hold a relationship or be held by one:
    /// deleting an object of another class needs no rule.
    private(set) var involvedTags: Set<UInt32> = []

    /// No relationships.
    static let none = RelationshipTable()

    private init() {}

    var isEmpty: Bool { entries.isEmpty }
    var hasInverses: Bool { entries.contains { $0.inverse != nil } }

    /// The relationships of `registry`'s classes. A field declared by both classes of a pair (each naming
    /// the other as inverse) is one entry; its delete rule is the one its own class declares.
    /// - throws: ``ObjectStoreError`` `invalidRegistration` when a relationship's class is not registered,
    ///   a field's stored name cannot be told, or one field is given two different inverses or rules.
    init(registry: TypeRegistry) throws(ObjectStoreError) {
        var declaredRule: [Int: DeleteRule] = [:]
        for registered in registry.types {
            for relationship in registered.type.relationships {
                let number = try entry(for: relationship.end, registry: registry)
                if let old = declaredRule[number], old != relationship.deleteRule {
                    throw ObjectStoreError(
                        .invalidRegistration,
                        "\(relationship.end.keyPath) is declared with delete rules \(old.rawValue) and "
                            + "\(relationship.deleteRule.rawValue)", typeName: registered.name)
                }
                declaredRule[number] = relationship.deleteRule
                entries[number].rule = relationship.deleteRule
                guard let inverse = relationship.inverse else { continue }
                let other = try entry(for: inverse, registry: registry)
                for (from, to) in [(number, other), (other, number)] {
                    if let existing = entries[from].inverse, existing != to {
                        throw ObjectStoreError(
                            .invalidRegistration,
                            "\(entries[from].end.keyPath) is declared with two inverses, "
                                + "\(entries[existing].end.keyPath) and \(entries[to].end.keyPath)",
                            typeName: registered.name)
                    }
                    entries[from].inverse = to
                }
            }
        }
        for registered in registry.types where entries.contains(where: { $0.end.involves(registered.type) }) {
            involvedTags.formUnion(registered.allTags)
        }
    }

    /// The entry of `end`, added when new.
    private mutating func entry(for end: RelationshipEnd, registry: TypeRegistry) throws(ObjectStoreError) -> Int {
        if let found = entries.firstIndex(where: { $0.end.keyPath == end.keyPath }) { return found }
        guard let registered = registry.registration(of: end.ownerType) else {
            throw ObjectStoreError(
                .invalidRegistration,
                "the relationship \(end.keyPath) belongs to \(end.ownerType), which is not registered",
                typeName: "\(end.ownerType)")
        }
        guard registry.registration(of: end.targetType) != nil else {
            throw ObjectStoreError(
                .invalidRegistration,
                "the relationship \(end.keyPath) holds \(end.targetType), which is not registered",
                typeName: registered.name)
        }
        let field = try ResolvedIndex(end.index, of: end.ownerType, typeName: registered.name).fields[0]
        entries.append(
            Entry(end: end, field: field, aliases: registered.fieldAliases[field] ?? [], rule: .nullify, inverse: nil))
        return entries.count - 1
    }

    /// The entries whose field `object` holds.
    func owned(by object: any PersistentObject) -> [Int] {
        entries.indices.filter { entries[$0].end.owns(object) }
    }

    /// The entries whose field can hold `object`.
    func accepting(_ object: any PersistentObject) -> [Int] {
        entries.indices.filter { entries[$0].end.accepts(object) }
    }

    /// The references indexes the relationships of class `type` (declared on it or a superclass) keep, but
    /// those `existing` already holds.
    func indexes(of type: any PersistentObject.Type, besides existing: [IndexDefinition]) -> [IndexDefinition] {
        entries.compactMap { entry in
            let owner = entry.end.ownerType
            guard ObjectIdentifier(owner) == ObjectIdentifier(type) || owner.isStrictSuperclass(of: type) else {
                return nil
            }
            let taken = existing.contains { $0.keyPaths == [entry.end.keyPath] && !$0.isUnique }
            return taken ? nil : entry.end.index
        }
    }
}
