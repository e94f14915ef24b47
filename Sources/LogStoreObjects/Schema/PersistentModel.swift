/// A persistent class that reports its own changes: what the `@Persistent` macro (product
/// `LogStorePersistent`) makes a class conform to.
///
/// Its stored properties are tracked: a setter calls ``ObjectSlot/noteChange(of:)`` on the instance's
/// ``persistenceSlot``, so the context knows which objects changed. A context therefore holds unchanged
/// models weakly (an instance nobody holds may go, and loads again when asked for) and a save encodes only
/// the models that changed, the new objects, and what they reach through plain reference fields; a
/// ``PersistentObject`` that is not a model is encoded by every save and kept by its context for as long
/// as the context lives.
///
/// Write `@Persistent` rather than conforming by hand: the macro generates the conformance, the
/// ``FieldCodable`` coding (the same bytes as `Codable`), and tracked accessors that call
/// ``ObjectSlot/noteChange(of:)``. A hand-written model must call it from every setter of a stored field;
/// a change it does not report is not saved. A setter reads
/// `if !hasReportedChange { hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false }`.
public protocol PersistentModel: PersistentObject, FieldCodable {
    /// The context's record of this instance: nil until a context loads or adds it. Set by the context
    /// only.
    var persistenceSlot: ObjectSlot? { get set }

    /// Whether this instance reported a change its context has not saved yet: while true, setters skip
    /// ``ObjectSlot/noteChange(of:)`` (a flag test instead of a call). Set by the setters from what
    /// `noteChange` returns; cleared by the context.
    var hasReportedChange: Bool { get set }

    /// The protocols and superclasses named where the class is declared (`Shape.self` for
    /// `final class Circle: Shape`), and those of its persistent superclasses: a query by one of these
    /// protocols (`objects(of: (any Shape).self)`) finds the class without loading one of its objects to
    /// find out (see ``ObjectContext/objects(of:includingSubclasses:)``).
    static var declaredConformances: [Any.Type] { get }

    /// The field name of each persisted property, by its key path (`\Task.due: "due"`), superclasses'
    /// included: how an ``IndexDefinition`` finds the field a key path names.
    static var storedFieldNames: [AnyKeyPath: String] { get }
}

extension PersistentModel {
    /// No conformances declared.
    public static var declaredConformances: [Any.Type] { [] }

    /// No field names known.
    public static var storedFieldNames: [AnyKeyPath: String] { [:] }
}

/// A field name as a coding key: the key the `Codable` conformance that `@Persistent` generates uses.
public struct FieldKey: CodingKey, Sendable {
    /// The field name.
    public let stringValue: String
    /// Field keys have no integer value.
    public var intValue: Int? { nil }

    /// The key of the field `name`.
    public init(_ name: String) { stringValue = name }
    /// The key of the field `stringValue`.
    public init?(stringValue: String) { self.stringValue = stringValue }
    /// Field keys have no integer value: nil.
    public init?(intValue: Int) { nil }
}

/// How the context reaches the ``PersistentModel/persistenceSlot`` of a registered model class, captured
/// once at registration (so no dynamic cast is needed per object).
struct ModelAccess: Sendable {
    /// Sets `object`'s slot (and clears its reported change: the new slot has seen none); `object` is an
    /// instance of the registered class.
    let setSlot: @Sendable (any PersistentObject, ObjectSlot?) -> Void
    /// `object`'s slot.
    let slot: @Sendable (any PersistentObject) -> ObjectSlot?

    /// The access of `type`, or nil when it is not a ``PersistentModel``.
    static func of(_ type: any PersistentObject.Type) -> ModelAccess? {
        guard let model = type as? any PersistentModel.Type else { return nil }
        return make(model)
    }

    private static func make<T: PersistentModel>(_: T.Type) -> ModelAccess {
        /// `object` as a `T`: the registry finds the access by the object's exact class, so this is a pointer
        /// comparison; anything else (never expected) is not a `T` here.
        @Sendable func model(_ object: any PersistentObject) -> T? {
            guard ObjectIdentifier(type(of: object)) == ObjectIdentifier(T.self) else { return object as? T }
            return unsafeDowncast(object, to: T.self)
        }
        return ModelAccess(
            setSlot: { object, slot in
                guard let model = model(object) else { return }
                model.persistenceSlot = slot
                model.hasReportedChange = false
            },
            slot: { object in model(object)?.persistenceSlot })
    }
}
