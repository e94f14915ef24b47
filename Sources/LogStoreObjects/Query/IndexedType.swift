import LogStore

/// A class that declares indexes, with the registered subclasses that share them.
struct IndexedType: Sendable {
    /// Its position in ``ObjectIndexes/types``.
    let number: Int
    /// The class that declares the indexes.
    let registered: RegisteredType
    let definitions: [ResolvedIndex]
    /// The tags of the class and its registered subclasses (aliases included).
    let tags: Set<UInt32>
    /// Earlier field names, by current name.
    let aliases: [String: [String]]

    var hasUnique: Bool { definitions.contains(where: \.isUnique) }

    /// The indexed types of a registry: each class whose ``PersistentObject/indexes`` are not all inherited
    /// unchanged from a registered superclass (a subclass that inherits them joins its superclass's).
    /// - throws: ``ObjectStoreError`` `invalidRegistration` for a field that cannot be named, or two
    ///   indexes of one name.
    /// The references indexes of fields that hold relationships (`relationships`) are added to those the
    /// class declares.
    static func all(in registry: TypeRegistry, relationships: RelationshipTable = RelationshipTable.none)
        throws(ObjectStoreError) -> [IndexedType]
    {
        var result: [IndexedType] = []
        for registered in registry.types {
            let definitions = Self.definitions(registered.type, relationships)
            guard !definitions.isEmpty else { continue }
            let inherited = registry.types.contains { other in
                other.type.isStrictSuperclass(of: registered.type)
                    && Self.definitions(other.type, relationships) == definitions
            }
            if inherited { continue }
            var names: Set<String> = []
            var resolved: [ResolvedIndex] = []
            for definition in definitions {
                let index = try ResolvedIndex(definition, of: registered.type, typeName: registered.name)
                guard !index.fields.isEmpty else {
                    throw ObjectStoreError(
                        .invalidRegistration, "an index of \(registered.name) names no field", typeName: registered.name
                    )
                }
                guard names.insert(index.name).inserted else {
                    throw ObjectStoreError(
                        .invalidRegistration, "\(registered.name) declares two indexes named \(index.name)",
                        typeName: registered.name)
                }
                resolved.append(index)
            }
            var tags: Set<UInt32> = []
            for other in registry.types
            where ObjectIdentifier(other.type) == ObjectIdentifier(registered.type)
                || registered.type.isStrictSuperclass(of: other.type)
            {
                tags.formUnion(other.allTags)
            }
            result.append(
                IndexedType(
                    number: result.count, registered: registered, definitions: resolved, tags: tags,
                    aliases: registered.fieldAliases))
        }
        return result
    }

    /// The declared indexes of `type` and those its relationships keep.
    private static func definitions(_ type: any PersistentObject.Type, _ relationships: RelationshipTable)
        -> [IndexDefinition]
    {
        let declared = type.indexes
        return declared + relationships.indexes(of: type, besides: declared)
    }
}
