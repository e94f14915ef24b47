import LogStore

/// A field holding one persistent object (or nil) of a protocol or class type, stored as its id.
///
/// Plain fields of a persistent class type (`var left: Circle`) are references already; use
/// `@ObjectRef` for protocol existentials (`any Shape`) and for fields that close a reference cycle.
/// A field added later decodes to nil in objects stored before it existed. For example:
///
/// ```swift
/// final class Frame: PersistentObject {
///     static let typeName = "Frame"
///     @ObjectRef var content: (any Shape)?
/// }
/// ```
@propertyWrapper
public struct ObjectRef<Element>: Codable, AbsentFieldDefaulting {
    /// The box is a class so the context can fill the field in after its owner was created (when the
    /// owner and the target are part of one reference cycle).
    private let box: ContextConfined<Element?>

    /// The referenced object.
    public var wrappedValue: Element? {
        get { box.state }
        nonmutating set { box.state = newValue }
    }

    /// A field referring to `wrappedValue`.
    public init(wrappedValue: Element?) {
        box = ContextConfined(state: wrappedValue)
    }

    static var absentFieldValue: ObjectRef<Element> { ObjectRef(wrappedValue: nil) }

    /// Only the object context's decoder can decode references.
    /// - throws: `DecodingError` for any other decoder.
    public init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(
            .init(codingPath: decoder.codingPath, debugDescription: "ObjectRef decodes only in an ObjectContext"))
    }

    /// Only the object context's encoder can encode references.
    /// - throws: `EncodingError` for any other encoder.
    public func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(
            self, .init(codingPath: encoder.codingPath, debugDescription: "ObjectRef encodes only in an ObjectContext"))
    }
}

extension ObjectRef: SpecialFieldEncodable {
    func encodeField(into encoder: PayloadEncoder, parent: Int, path: [any CodingKey]) throws {
        guard let value = box.state else { return encoder.writeNil() }
        encoder.writeReference(try encoder.reference(to: try persistentObject(value, encoder, path), path: path))
    }
}

extension ObjectRef: SpecialFieldDecodable {
    static func decodeField(from decoder: PayloadDecoder, at offset: Int, path: [any CodingKey], depth: Int) throws
        -> ObjectRef<Element>
    {
        let field = ObjectRef(wrappedValue: nil)
        if try decoder.decodeNil(at: offset) { return field }
        let id = try decoder.decodeReferenceID(at: offset, path: path)
        let box = field.box
        let referrer = Referrer(decoder)
        try decoder.session.resolveLater(id, referencedBy: decoder, path: path) { object throws(ObjectStoreError) in
            box.state = try typed(object, as: Element.self, id: id, referrer: referrer, path: path)
        }
        return field
    }
}

/// A field holding persistent objects of a protocol or class type, stored as their ids in order.
///
/// Use it for polymorphic collections such as `[any Shape]` (an array of a concrete persistent class,
/// `[Layer]`, needs no wrapper). A field added later decodes to an empty array. For example:
///
/// ```swift
/// final class Layer: PersistentObject {
///     static let typeName = "Layer"
///     @ObjectList var shapes: [any Shape]
/// }
/// ```
@propertyWrapper
public struct ObjectList<Element>: Codable, AbsentFieldDefaulting {
    private let box: ContextConfined<[Element]>

    /// The referenced objects.
    public var wrappedValue: [Element] {
        get { box.state }
        nonmutating set { box.state = newValue }
    }

    /// A field referring to `wrappedValue`.
    public init(wrappedValue: [Element] = []) {
        box = ContextConfined(state: wrappedValue)
    }

    static var absentFieldValue: ObjectList<Element> { ObjectList(wrappedValue: []) }

    /// Only the object context's decoder can decode references.
    /// - throws: `DecodingError` for any other decoder.
    public init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(
            .init(codingPath: decoder.codingPath, debugDescription: "ObjectList decodes only in an ObjectContext"))
    }

    /// Only the object context's encoder can encode references.
    /// - throws: `EncodingError` for any other encoder.
    public func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(
            self,
            .init(codingPath: encoder.codingPath, debugDescription: "ObjectList encodes only in an ObjectContext"))
    }
}

extension ObjectList: SpecialFieldEncodable {
    func encodeField(into encoder: PayloadEncoder, parent: Int, path: [any CodingKey]) throws {
        let frame = encoder.pushFrame(.unkeyed)
        let values = box.state
        // Indices, not `enumerated()`: its iterator is not specialized here and cost more than the rest.
        for index in values.indices {
            let value = values[index]
            let object = try persistentObject(value, encoder, path + [IndexKey(index)])
            let id = try encoder.reference(to: object, basePath: path, key: IndexKey(index))
            try encoder.prepareWrite(into: frame, path: path + [IndexKey(index)])
            encoder.writeReference(id)
        }
    }
}

extension ObjectList: SpecialFieldDecodable {
    static func decodeField(from decoder: PayloadDecoder, at offset: Int, path: [any CodingKey], depth: Int) throws
        -> ObjectList<Element>
    {
        let found = try decoder.tag(at: offset)
        guard found == .unkeyed else { throw decoder.mismatch(found, expected: "a list of references", path: path) }
        var ids: [ObjectID] = []
        var position = offset + 1
        while try decoder.tag(at: position) != .end {
            ids.append(try decoder.decodeReferenceID(at: position, path: path + [IndexKey(ids.count)]))
            position = decoder.state.reader.offset
        }
        let field = ObjectList(wrappedValue: [])
        // Usually every element is loaded already (eager references load first): build the array directly.
        var elements: [Element] = []
        elements.reserveCapacity(ids.count)
        for (index, id) in ids.enumerated() {
            guard let object = try decoder.session.resolve(id, referencedBy: decoder, path: path + [IndexKey(index)])
            else { break }
            elements.append(
                try typed(object, as: Element.self, id: id, decoder: decoder, path: path + [IndexKey(index)]))
        }
        if elements.count == ids.count {
            field.box.state = elements
            return field
        }
        // Some element is still being loaded (a cycle): fill the field in when the load finishes.
        let box = field.box
        var pending: [Element?] = Array(repeating: nil, count: ids.count)
        var remaining = ids.count
        let referrer = Referrer(decoder)
        for (index, id) in ids.enumerated() {
            let elementPath = path + [IndexKey(index)]
            try decoder.session.resolveLater(id, referencedBy: decoder, path: elementPath) {
                object throws(ObjectStoreError) in
                pending[index] = try typed(object, as: Element.self, id: id, referrer: referrer, path: elementPath)
                remaining -= 1
                if remaining == 0 { box.state = pending.compactMap { $0 } }
            }
        }
        return field
    }
}

/// A field type that has a value of its own when the stored object lacks the field (schema evolution).
protocol AbsentFieldDefaulting {
    /// The value of the field in objects stored before it existed.
    static var absentFieldValue: Self { get }
}

/// `value` as a persistent object, or an `encodingFailed` error naming the field.
func persistentObject<Value>(
    _ value: Value, _ encoder: PayloadEncoder, _ path: @autoclosure () -> [any CodingKey]
) throws(ObjectStoreError) -> any PersistentObject {
    guard let object = value as? any PersistentObject else {
        throw ObjectStoreError(
            .encodingFailed, "\(type(of: value)) is not a PersistentObject class",
            typeName: encoder.state.typeName,
            field: CodingPath.describe(path()))
    }
    return object
}

/// `object` as `T`, or a `typeMismatch` error naming the referring field.
func typed<T>(
    _ object: any PersistentObject, as _: T.Type, id: ObjectID, decoder: PayloadDecoder,
    path: @autoclosure () -> [any CodingKey]
) throws(ObjectStoreError) -> T {
    if let value = object as? T { return value }
    return try typed(object, as: T.self, id: id, referrer: Referrer(decoder), path: path())
}

/// The object holding a reference field, for error messages (taken when the field is decoded: the decoder
/// moves on to other objects before fix-ups run).
struct Referrer {
    let typeName: String
    let id: ObjectID
    init(_ decoder: PayloadDecoder) {
        typeName = decoder.state.type.name
        id = decoder.state.objectID
    }
}

/// `object` as `T`, or a `typeMismatch` error naming the referring object and field.
func typed<T>(
    _ object: any PersistentObject, as _: T.Type, id: ObjectID, referrer: Referrer,
    path: @autoclosure () -> [any CodingKey]
) throws(ObjectStoreError) -> T {
    guard let value = object as? T else {
        throw ObjectStoreError(
            .typeMismatch, "object \(id) is a \(type(of: object).typeName), expected \(T.self)",
            typeName: referrer.typeName, field: CodingPath.describe(path()), objectID: referrer.id)
    }
    return value
}
