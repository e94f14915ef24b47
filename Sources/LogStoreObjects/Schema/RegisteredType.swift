/// What the object layer knows about one registered persistent class.
struct RegisteredType: Sendable {

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
}
