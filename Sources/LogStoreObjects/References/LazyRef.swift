import LogStore

/// A reference to a persistent object that is loaded on first access, not with its owner.
///
/// For example:
///
/// ```swift
/// final class LazySquare: PersistentObject {
///     static let typeName = "LazySquare"
///     var square: LazyRef<Square>
/// }
/// let lazy = try context.root(named: "lazy", as: LazySquare.self)
/// lazy?.square.isLoaded        // false: the square was not read
/// let square = try lazy?.square.get()   // reads it now (once)
/// ```
///
/// A `LazyRef` belongs to the context that loaded it; using it after that context is gone throws.
public final class LazyRef<Target: PersistentObject>: Codable {
    private var target: Target?
    private var storedID: ObjectID?
    private weak var context: ObjectContext?

    /// A reference to `target`.
    public init(_ target: Target) {
        self.target = target
        self.storedID = nil
    }

    init(id: ObjectID, context: ObjectContext) {
        self.storedID = id
        self.context = context
    }

    /// Whether the target is in memory (set directly, or loaded by ``get()``).
    public var isLoaded: Bool { target != nil }

    /// The id of the target once it is stored.
    public var id: ObjectID? {
        if let storedID { return storedID }
        return target.flatMap { context?.id(of: $0) }
    }

    /// The target, loading it from the store on first access.
    /// - throws: ``ObjectStoreError`` `danglingReference` when the target no longer exists or the context
    ///   that loaded this reference is gone, `typeMismatch` when it is of another type.
    public func get() throws(ObjectStoreError) -> Target {
        if let target { return target }
        guard let storedID, let context else {
            throw ObjectStoreError(
                .danglingReference, "the context that loaded this LazyRef is gone", typeName: Target.typeName,
                objectID: storedID)
        }
        guard let loaded = try context.object(id: storedID, as: Target.self) else {
            throw ObjectStoreError(
                .danglingReference, "lazily referenced object \(storedID) no longer exists", typeName: Target.typeName,
                objectID: storedID)
        }
        target = loaded
        return loaded
    }

    /// Only the object context's decoder can decode references.
    /// - throws: `DecodingError` for any other decoder.
    public init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(
            .init(codingPath: decoder.codingPath, debugDescription: "LazyRef decodes only in an ObjectContext"))
    }

    /// Only the object context's encoder can encode references.
    /// - throws: `EncodingError` for any other encoder.
    public func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(
            storedID as Any,
            .init(codingPath: encoder.codingPath, debugDescription: "LazyRef encodes only in an ObjectContext"))
    }
}

extension LazyRef: SpecialFieldEncodable {
    func encodeField(into encoder: PayloadEncoder, parent: Int, path: [any CodingKey]) throws {
        if let target {
            let id = try encoder.reference(to: target, path: path)
            storedID = id
            encoder.writeLazyReference(id)
        } else if let storedID {
            encoder.writeLazyReference(storedID)
        } else {
            encoder.writeNil()
        }
    }
}

extension LazyRef: SpecialFieldDecodable {
    static func decodeField(from decoder: PayloadDecoder, at offset: Int, path: [any CodingKey], depth: Int) throws
        -> LazyRef<Target>
    {
        let id = try decoder.decodeReferenceID(at: offset, path: path)
        guard let context = decoder.session.context else {
            throw ObjectStoreError(.danglingReference, "the context is gone", objectID: id)
        }
        if let cached = context.cachedObject(id) {
            let reference = LazyRef(id: id, context: context)
            reference.target = try typed(cached, as: Target.self, id: id, decoder: decoder, path: path)
            return reference
        }
        return LazyRef(id: id, context: context)
    }
}
