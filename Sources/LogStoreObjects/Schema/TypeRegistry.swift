import LogStore

/// The persistent classes an ``ObjectStore`` can load, by type name, alias and engine tag.
///
/// Built once when the object store opens; immutable afterwards, so any thread may read it.
struct TypeRegistry: Sendable {
    private(set) var types: [RegisteredType] = []
    private var byTag: [UInt32: Int] = [:]
    private var byClass: [ObjectIdentifier: Int] = [:]
    /// The protocols the store lists (`protocols:`), each with its test of whether a class conforms.
    private let protocols: [QueryableProtocol]
    private var byProtocol: [ObjectIdentifier: Int] = [:]
    /// Whether ``FieldCodable`` types encode through `encodeFields(to:)` and `init(fields:)`.
    let usesFieldCoding: Bool

    /// Registers `types`, in order, and the protocols listed with a test of whether a class conforms.
    /// - throws: ``ObjectStoreError`` `invalidRegistration` for a duplicate name, a name whose tag
    ///   collides with another's, a reserved name, or a protocol listed twice.
    /// - parameter usingFieldCoding: whether ``FieldCodable`` classes encode through `encodeFields(to:)`
    ///   and `init(fields:)` (otherwise through `Codable`).
    init(
        _ types: [any PersistentObject.Type], protocols: [QueryableProtocol] = [], usingFieldCoding: Bool = true
    ) throws(ObjectStoreError) {
        self.usesFieldCoding = usingFieldCoding
        self.protocols = protocols
        for type in types { try register(type, among: types, usingFieldCoding: usingFieldCoding) }
        for (index, entry) in protocols.enumerated() {
            guard byProtocol.updateValue(index, forKey: entry.existential) == nil else {
                throw ObjectStoreError(.invalidRegistration, "protocol \(entry.name) is listed twice in `protocols:`")
            }
        }
    }

    private mutating func register(
        _ type: any PersistentObject.Type, among all: [any PersistentObject.Type], usingFieldCoding: Bool
    ) throws(ObjectStoreError) {
        let name = type.typeName
        if byClass[ObjectIdentifier(type)] != nil { return }
        var tags: [UInt32] = []
        for candidate in [name] + Self.ownAliases(of: type, among: all) {
            let tag = TypeNames.tag(for: candidate)
            if candidate.isEmpty || candidate == TypeNames.keyRecordTypeName || candidate == IndexCatalog.typeName
                || candidate.hasPrefix("logstore.odb.") || candidate == "logstore.lost"
            {
                throw ObjectStoreError(.invalidRegistration, "type name \"\(candidate)\" is reserved", typeName: name)
            }
            if let other = byTag[tag] {
                throw ObjectStoreError(
                    .invalidRegistration,
                    "type name \"\(candidate)\" of \(type) is already used by \(types[other].type) "
                        + "(\"\(types[other].name)\"); each class needs its own typeName "
                        + "(subclasses override `class var typeName`)",
                    typeName: name)
            }
            if tag == TypeNames.keyRecordTag || tag == IndexCatalog.tag || tag == ODBFormat.tableTag
                || tag == ODBFormat.bucketTag || tag == SalvageReport.placeholderTypeTag
            {
                throw ObjectStoreError(.invalidRegistration, "type name \"\(candidate)\" is reserved", typeName: name)
            }
            tags.append(tag)
        }
        let index = types.count
        types.append(
            RegisteredType(
                type: type, name: name, tag: tags[0], allTags: tags, fieldAliases: type.fieldAliases,
                fieldCoder: usingFieldCoding ? FieldCoder.of(type) : nil, modelAccess: ModelAccess.of(type)))
        for tag in tags { byTag[tag] = index }
        byClass[ObjectIdentifier(type)] = index
    }

    /// The aliases `type` declares itself. A subclass inherits its superclass's `typeAliases`; an unchanged
    /// inherited list belongs to the superclass (objects stored under the old name decode as the
    /// superclass), so the subclass does not claim it. The superclasses looked at are those registered
    /// with it (`all`): a class whose superclass is not registered claims the aliases itself.
    static func ownAliases(of type: any PersistentObject.Type, among all: [any PersistentObject.Type]) -> [String] {
        let aliases = type.typeAliases
        guard !aliases.isEmpty else { return [] }
        for other in all where other.isStrictSuperclass(of: type) && other.typeAliases == aliases {
            return []
        }
        return aliases
    }

    /// The registered type stored under `tag` (its current name or an alias).
    func type(forTag tag: UInt32) -> RegisteredType? {
        byTag[tag].map { types[$0] }
    }

    /// The registration of `object`'s dynamic class.
    func type(of object: any PersistentObject) -> RegisteredType? {
        byClass[ObjectIdentifier(Swift.type(of: object))].map { types[$0] }
    }

    /// The registration of the class `type`.
    func registration(of type: any PersistentObject.Type) -> RegisteredType? {
        byClass[ObjectIdentifier(type)].map { types[$0] }
    }

    /// The tags of every registered class that is `T` or a subclass of it, or, when `T` is a protocol
    /// type (`any Shape`), whose objects are `T`s.
    ///
    /// For a protocol type the conforming classes are told, for each class, by the first of: every class
    /// for `any PersistentObject`; the protocol's ``QueryableProtocol`` entry, when the store lists it; the
    /// class's ``PersistentModel/declaredConformances``, when they name `T`; else `conforms`, which
    /// answers from the class's stored objects (false when it has none).
    /// - throws: ``ObjectStoreError`` `unregisteredClass` for a persistent class that is not registered
    ///   (its objects could not be told from others, so a count of 0 would be a wrong answer), and what
    ///   `conforms` throws.
    func tags<T>(
        matching _: T.Type, includingSubclasses: Bool,
        conforms: (RegisteredType) throws(ObjectStoreError) -> Bool
    ) throws(ObjectStoreError) -> [UInt32] {
        if let persistent = T.self as? any PersistentObject.Type, registration(of: persistent) == nil {
            throw ObjectStoreError(
                .unregisteredClass,
                "\(T.self) is not registered with the ObjectStore (add it to `types:` to query its objects)",
                typeName: persistent.typeName)
        }
        var tags: [UInt32] = []
        let queried = ObjectIdentifier(T.self)
        let isProtocol = includingSubclasses && !(T.self is AnyClass)
        var listed = byProtocol[queried].map { protocols[$0].isConformed }
        if T.self == (any PersistentObject).self { listed = { _ in true } }
        for registered in types {
            let matches: Bool
            if !includingSubclasses {
                matches = ObjectIdentifier(registered.type) == queried
            } else if registered.type is T.Type {
                matches = true
            } else if !isProtocol {
                matches = false
            } else if let listed {
                matches = listed(registered.type)
            } else if registered.declaredConformances.contains(queried) {
                matches = true
            } else {
                matches = try conforms(registered)
            }
            if matches { tags.append(contentsOf: registered.allTags) }
        }
        return tags
    }
}
