import Synchronization

/// What the object layer knows about one registered persistent class.
///
/// A class (immutable but for an atomic counter, so `Sendable`): every load and save passes it along per
/// object, and a struct of this many reference-counted fields cost a dozen retains and releases per copy.
final class RegisteredType: Sendable {

    /// The class.
    let type: any PersistentObject.Type
    /// The current type name.
    let name: String
    /// The engine tag of `name`.
    let tag: UInt32
    /// Every tag stored objects of this type may carry: `tag` and the tags of the aliases.
    let allTags: [UInt32]
    /// The earlier field names, by current field name.
    let fieldAliases: [String: [String]]
    /// How to encode and decode the class directly, when it is ``FieldCodable`` (and the object store
    /// uses field coding).
    let fieldCoder: FieldCoder?
    /// How to reach an instance's ``PersistentModel/persistenceSlot``, when the class is a
    /// ``PersistentModel`` (it reports its changes).
    let modelAccess: ModelAccess?
    /// The protocols and superclasses the class declares (``PersistentModel/declaredConformances``): a
    /// query by one of these protocols finds the class without loading any of its objects.
    let declaredConformances: Set<ObjectIdentifier>
    /// How many more encodings ``SubclassEncodingCheck`` looks at: 0 once it found that the class encodes
    /// its own fields or needs no check (not a subclass of a persistent class).
    /// A ``PersistentModel`` needs no check: `@Persistent` generates the coding of every level.
    let encodingChecksLeft: Atomic<Int>

    init(
        type: any PersistentObject.Type, name: String, tag: UInt32, allTags: [UInt32],
        fieldAliases: [String: [String]], fieldCoder: FieldCoder?, modelAccess: ModelAccess? = nil
    ) {
        let declared = (type as? any PersistentModel.Type)?.declaredConformances ?? []
        self.type = type
        self.name = name
        self.tag = tag
        self.allTags = allTags
        self.fieldAliases = fieldAliases
        self.fieldCoder = fieldCoder
        self.modelAccess = modelAccess
        self.encodingChecksLeft = Atomic(modelAccess == nil ? SubclassEncodingCheck.maximumChecks : 0)
        self.declaredConformances = Set(declared.map { ObjectIdentifier($0) })
    }
}
