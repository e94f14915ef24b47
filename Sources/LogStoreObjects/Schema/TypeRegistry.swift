import LogStore

/// The persistent classes an ``ObjectStore`` can load, by type name, alias and engine tag.
///
/// Built once when the object store opens; immutable afterwards, so any thread may read it.
struct TypeRegistry: Sendable {
    private(set) var types: [RegisteredType] = []
    private var byTag: [UInt32: Int] = [:]
    private var byClass: [ObjectIdentifier: Int] = [:]
    /// Whether ``FieldCodable`` types encode through `encodeFields(to:)` and `init(fields:)`.
    let usesFieldCoding: Bool

    /// Registers `types`, in order.
    /// - throws: ``ObjectStoreError`` `invalidRegistration` for a duplicate name, a name whose tag
    ///   collides with another's, or a reserved name.
    /// - parameter usingFieldCoding: whether ``FieldCodable`` classes encode through `encodeFields(to:)`
    ///   and `init(fields:)` (otherwise through `Codable`).
    init(_ types: [any PersistentObject.Type], usingFieldCoding: Bool = true) throws(ObjectStoreError) {
        self.usesFieldCoding = usingFieldCoding
        for type in types { try register(type, among: types, usingFieldCoding: usingFieldCoding) }
    }

    private mutating func register(
        _ type: any PersistentObject.Type, among all: [any PersistentObject.Type], usingFieldCoding: Bool
    ) throws(ObjectStoreError) {
        let name = type.typeName
        if byClass[ObjectIdentifier(type)] != nil { return }
        var tags: [UInt32] = []
        for candidate in [name] + Self.ownAliases(of: type, among: all) {
            let tag = TypeNames.tag(for: candidate)
            if candidate.isEmpty || candidate == TypeNames.keyRecordTypeName || candidate.hasPrefix("logstore.odb.") {
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
            if tag == TypeNames.keyRecordTag || tag == ODBFormat.tableTag || tag == ODBFormat.bucketTag {
                throw ObjectStoreError(.invalidRegistration, "type name \"\(candidate)\" is reserved", typeName: name)
            }
            tags.append(tag)
        }
        let index = types.count
        types.append(
            RegisteredType(
                type: type, name: name, tag: tags[0], allTags: tags, fieldAliases: type.fieldAliases,
                fieldCoder: usingFieldCoding ? FieldCoder.of(type) : nil))
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
    /// type (`any Shape`), that conforms to it.
    /// - throws: ``ObjectStoreError`` `unsupportedQuery` for a protocol type whose conforming classes
    ///   cannot be told (a `private` protocol, or one with constrained associated types);
    ///   `unregisteredClass` for a persistent class that is not registered (its objects could not be
    ///   told from others, so a count of 0 would be a wrong answer).
    func tags<T>(matching _: T.Type, includingSubclasses: Bool) throws(ObjectStoreError) -> [UInt32] {
        if let persistent = T.self as? any PersistentObject.Type, registration(of: persistent) == nil {
            throw ObjectStoreError(
                .unregisteredClass,
                "\(T.self) is not registered with the ObjectStore (add it to `types:` to query its objects)",
                typeName: persistent.typeName)
        }
        var tags: [UInt32] = []
        var conformance: ProtocolConformance?
        if includingSubclasses && !(T.self is AnyClass) {
            conformance = ProtocolConformance(T.self)
            if conformance == nil {
                throw ObjectStoreError(
                    .unsupportedQuery,
                    "cannot tell which classes conform to \(T.self) (a private protocol, or one with constrained "
                        + "associated types); query by class, or by a protocol visible to the module")
            }
        }
        for registered in types {
            let matches =
                includingSubclasses
                ? registered.type is T.Type || conformance?.isConformed(by: registered.type) == true
                : ObjectIdentifier(registered.type) == ObjectIdentifier(T.self)
            if matches { tags.append(contentsOf: registered.allTags) }
        }
        return tags
    }
}

/// Whether a class conforms to a protocol given as an existential type (`(any Shape).self`).
///
/// Generic code cannot write `any T.Type` for a `T` that is itself `any Shape`, and `Circle.self is
/// T.Type` asks whether `Circle` *is* the existential type (never). The existential metatype
/// `any Shape.Type` is found by its mangled name instead (the existential's name + `Xp`, stable Swift
/// ABI mangling) and the class's metatype is cast to it. Where that name does not resolve (a `private`
/// protocol, an existential with constrained associated types), the query says so.
struct ProtocolConformance {
    private let existentialMetatype: Any.Type

    /// Nil when the existential metatype cannot be found by name.
    init?(_ existential: Any.Type) {
        guard let found = _mangledTypeName(existential).flatMap({ _typeByName($0 + "Xp") }) else { return nil }
        existentialMetatype = found
    }

    /// Whether `candidate` conforms to the protocol (all of them, for a composition).
    func isConformed(by candidate: Any.Type) -> Bool {
        func cast<Metatype>(_: Metatype.Type) -> Bool { candidate is Metatype }
        return _openExistential(existentialMetatype, do: cast)
    }
}
