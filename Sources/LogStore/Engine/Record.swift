@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// One stored object as the engine sees it: a type tag, the ids it references, and opaque payload bytes.
public struct Record: Equatable, Sendable {
    /// The object's id.
    public var id: ObjectID
    /// An application-defined number naming the object's type (the object layer maps type names to tags).
    public var typeTag: UInt32
    /// The ids of the objects this one references, in the order given when it was stored.
    public var references: [ObjectID]
    /// The payload, exactly as it was put.
    public var payload: [UInt8]
    /// Whether the object is pinned: a root of its own, kept until it is deleted. An unpinned object
    /// lives only while a live object or a named root refers to it.
    public var isPinned: Bool

    /// Makes a record.
    public init(id: ObjectID, typeTag: UInt32, references: [ObjectID] = [], payload: [UInt8], isPinned: Bool = true) {
        self.id = id
        self.typeTag = typeTag
        self.references = references
        self.payload = payload
        self.isPinned = isPinned
    }
}
