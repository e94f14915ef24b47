import LogStore

/// An index a persistent class declares on its fields: ordered (equality, ranges, string prefixes, sort
/// order), over one field or several (compound), and optionally unique.
///
/// A class lists its indexes in ``PersistentObject/indexes``; the ``ObjectStore`` keeps them, and
/// ``ObjectContext/fetch(_:)`` uses one when the predicate constrains its first field. For example:
///
/// ```swift
/// final class Task: PersistentObject {
///     static let typeName = "Task"
///     static let indexes: [IndexDefinition] = [
///         .ordered(\Task.dueDate),
///         .unique(\Task.code),
///         .ordered(\Task.project, \Task.priority),   // compound: project, then priority
///     ]
///     …
/// }
/// ```
///
/// A field is named by a key path to a stored property of the class; the index reads the field of that
/// name in each stored record (pass `field:` when the class's coding keys name it otherwise). A field
/// holding a persistent object is indexed by the object's id, and an array field by each of its
/// elements (an object is then found under each of them: "the tasks tagged X").
public struct IndexDefinition: Sendable, Equatable, CustomStringConvertible {
    /// The name given, or nil for the default: the fields joined with `+` (`status+priority`).
    public let givenName: String?
    /// The field names given for the key paths (nil: found from the key path).
    public let givenFields: [String?]
    /// Whether two objects may not hold the same key (nil values excepted).
    public let isUnique: Bool
    /// The key paths of the fields, matched against those of predicates and sort descriptors. Key paths
    /// are immutable once made, so sharing them between threads is safe.
    nonisolated(unsafe) let keyPaths: [AnyKeyPath]

    private init(_ keyPaths: [AnyKeyPath], fields: [String?], unique: Bool, name: String?) {
        self.keyPaths = keyPaths
        self.givenFields = fields.count == keyPaths.count ? fields : keyPaths.map { _ in nil }
        self.isUnique = unique
        self.givenName = name
    }

    /// An ordered index on `keyPath`'s field. Name the field (`field:`) when the class is not a
    /// `@Persistent` model and the property's stored name cannot be told from the key path (a property of a
    /// class that is not `final`, or one its coding keys rename).
    public static func ordered<T: PersistentObject, V: IndexableValue>(
        _ keyPath: KeyPath<T, V>, field: String? = nil, name: String? = nil
    ) -> IndexDefinition {
        IndexDefinition([keyPath], fields: [field], unique: false, name: name)
    }

    /// An ordered index on two fields: by the first, then the second (`fields:` names them, see
    /// ``ordered(_:field:name:)``).
    public static func ordered<T: PersistentObject, V1: IndexableValue, V2: IndexableValue>(
        _ first: KeyPath<T, V1>, _ second: KeyPath<T, V2>, fields: [String]? = nil, name: String? = nil
    ) -> IndexDefinition {
        IndexDefinition([first, second], fields: fields ?? [], unique: false, name: name)
    }

    /// An ordered index on three fields.
    public static func ordered<T: PersistentObject, V1: IndexableValue, V2: IndexableValue, V3: IndexableValue>(
        _ first: KeyPath<T, V1>, _ second: KeyPath<T, V2>, _ third: KeyPath<T, V3>, fields: [String]? = nil,
        name: String? = nil
    ) -> IndexDefinition {
        IndexDefinition([first, second, third], fields: fields ?? [], unique: false, name: name)
    }

    /// A unique index on `keyPath`'s field: a save that would give two objects the same value fails with
    /// ``ObjectStoreError/Code/uniqueViolation`` and writes nothing. Objects whose value is nil are exempt.
    public static func unique<T: PersistentObject, V: IndexableValue>(
        _ keyPath: KeyPath<T, V>, field: String? = nil, name: String? = nil
    ) -> IndexDefinition {
        IndexDefinition([keyPath], fields: [field], unique: true, name: name)
    }

    /// A unique index on two fields together.
    public static func unique<T: PersistentObject, V1: IndexableValue, V2: IndexableValue>(
        _ first: KeyPath<T, V1>, _ second: KeyPath<T, V2>, fields: [String]? = nil, name: String? = nil
    ) -> IndexDefinition {
        IndexDefinition([first, second], fields: fields ?? [], unique: true, name: name)
    }

    /// An index on the references of `keyPath`'s field (a persistent object, or an array of them): the
    /// objects that refer to a given one through it (``ObjectContext/referrers(to:through:)``).
    public static func references<T: PersistentObject, V>(
        _ keyPath: KeyPath<T, V>, field: String? = nil, name: String? = nil
    ) -> IndexDefinition {
        IndexDefinition([keyPath], fields: [field], unique: false, name: name)
    }

    /// The index in words: `unique code` or `ordered` with its key paths.
    public var description: String {
        (isUnique ? "unique " : "ordered ") + (givenName ?? keyPaths.map { "\($0)" }.joined(separator: "+"))
    }

    /// Whether two definitions name the same fields, kind and name.
    public static func == (lhs: IndexDefinition, rhs: IndexDefinition) -> Bool {
        lhs.givenName == rhs.givenName && lhs.givenFields == rhs.givenFields && lhs.isUnique == rhs.isUnique
            && lhs.keyPaths == rhs.keyPaths
    }
}

/// An index with its fields found: what the object store keeps.
struct ResolvedIndex: Sendable {
    let name: String
    let fields: [String]
    let isUnique: Bool
    /// Immutable key paths (see ``IndexDefinition/keyPaths``).
    nonisolated(unsafe) let keyPaths: [AnyKeyPath]

    init(name: String, fields: [String], isUnique: Bool, keyPaths: [AnyKeyPath]) {
        self.name = name
        self.fields = fields
        self.isUnique = isUnique
        self.keyPaths = keyPaths
    }

    /// `definition` of class `type`, its fields named by `given`, by the model's ``PersistentModel/storedFieldNames``,
    /// or by the key path's text (`\Task.due`, for a stored property of a final class).
    /// - throws: ``ObjectStoreError`` `invalidRegistration` when a field cannot be named.
    init(_ definition: IndexDefinition, of type: any PersistentObject.Type, typeName: String) throws(ObjectStoreError) {
        let known = (type as? any PersistentModel.Type)?.storedFieldNames ?? [:]
        var fields: [String] = []
        for (keyPath, given) in zip(definition.keyPaths, definition.givenFields) {
            if let given, !given.isEmpty {
                fields.append(given)
            } else if let name = known[keyPath] {
                fields.append(name)
            } else if let name = Self.storedPropertyName(keyPath) {
                fields.append(name)
            } else {
                throw ObjectStoreError(
                    .invalidRegistration,
                    "an index of \(typeName) names \(keyPath), whose stored field cannot be told from the key path;"
                        + " pass its name (`field:` or `fields:`), or declare the class with @Persistent",
                    typeName: typeName)
            }
        }
        self.fields = fields
        self.keyPaths = definition.keyPaths
        self.isUnique = definition.isUnique
        self.name = definition.givenName ?? fields.joined(separator: "+")
    }

    /// The property a key path's text names when it is `\Type.property` (a stored property of a final
    /// class); nil for a computed one, a chain (`\Task.project.name`) or an optional chain.
    static func storedPropertyName(_ keyPath: AnyKeyPath) -> String? {
        let text = "\(keyPath)"
        guard text.hasPrefix("\\"), !text.contains("?"), !text.contains("!"), !text.contains("("),
            !text.contains("<"), !text.contains(" ")
        else { return nil }
        let parts = text.dropFirst().split(separator: ".")
        guard parts.count == 2, let last = parts.last else { return nil }
        return String(last)
    }
}
