import LogStore

/// Catches a subclass of a persistent class that does not encode its own fields.
///
/// A subclass that forgets to override `encode(to:)` and `init(from:)` (or `encodeFields(to:)` and
/// `init(fields:)`) compiles, inherits its superclass's, and would store none of its own stored
/// properties: they would come back as their defaults. So when an instance of a registered class is
/// encoded for the first time (once per class and object store: it costs one reflection of the
/// instance), `Mirror` tells whether its class is a subclass of another persistent class, and which
/// stored properties the class declares itself (one class level) and which its superclasses declare.
/// The encoding is refused with ``ObjectStoreError/Code/incompleteEncoding``, naming the class and its
/// properties, when the class declares some, the record holds none of them, and every field the record
/// holds is a stored property of a superclass (what an inherited encoding writes).
///
/// Only "none at all" is refused: a subclass that encodes some of its properties and leaves others out
/// on purpose (a cache, a transient value) is not second-guessed, and one whose own stored properties
/// are all transient says so with ``DeclaresTransientProperties``. A property that is nil (an optional,
/// a lazy property not computed yet) may rightly be absent, so it does not count; when all of them are
/// nil the check is left undecided and runs again for a later instance (a few times at most).
enum SubclassEncodingCheck {
    /// The outcome of one check.
    enum Outcome {
        /// The class encodes its own fields, or is not a subclass of a persistent class: no more checks.
        case passed
        /// Nothing could be told from this instance (its own properties are all nil).
        case undecided
    }

    /// How many instances of a class are checked at most while the check stays undecided.
    static let maximumChecks = 8

    /// Checks the encoding `payload` of `object` (an instance of exactly `registered.type`), whose field
    /// numbers `names` maps to field names.
    /// - throws: ``ObjectStoreError`` `incompleteEncoding`.
    static func check(
        _ object: any PersistentObject, payload: [UInt8], names: [String], registered: RegisteredType
    ) throws(ObjectStoreError) -> Outcome {
        // A custom mirror need not list the stored properties: nothing can be told.
        guard !(object is any CustomReflectable) else { return .passed }
        let mirror = Mirror(reflecting: object)
        guard let superclassMirror = mirror.superclassMirror,
            superclassMirror.subjectType is any PersistentObject.Type
        else { return .passed }
        let transient = (object as? any DeclaresTransientProperties).map { type(of: $0).transientProperties } ?? []
        let own = storedProperties(mirror).filter { !transient.contains($0.name) }
        guard !own.isEmpty else { return .passed }
        let present = own.filter { !$0.isNil }.map(\.name)
        guard !present.isEmpty else { return .undecided }
        guard let written = topLevelFieldNames(payload, names: names) else { return .passed }
        guard present.allSatisfy({ !written.contains($0) }) else { return .passed }
        var inherited: Set<String> = []
        var level: Mirror? = superclassMirror
        while let current = level {
            for property in storedProperties(current) { inherited.insert(property.name) }
            level = current.superclassMirror
        }
        // A field that is no superclass property was written by the class's own encoding (under another
        // key than its property's name, or a derived value): it does encode something of its own.
        guard written.isSubset(of: inherited) else { return .passed }
        throw ObjectStoreError(
            .incompleteEncoding,
            "\(registered.type) (a subclass of \(superclassMirror.subjectType)) encoded none of its own stored "
                + "properties (\(present.joined(separator: ", "))): it inherits its superclass's encoding; override "
                + "`encode(to:)` and `init(from:)` (or `encodeFields(to:)` and `init(fields:)`) and call super, or "
                + "declare properties kept out on purpose with DeclaresTransientProperties",
            typeName: registered.name)
    }

    /// The stored properties one class level of `mirror` declares, as `Codable` names them (a property
    /// wrapper's storage `_name` as `name`), and whether each is nil. A lazy property's storage is left
    /// out: it holds a value derived from the others, which encodings leave out.
    static func storedProperties(_ mirror: Mirror) -> [(name: String, isNil: Bool)] {
        mirror.children.compactMap { child -> (name: String, isNil: Bool)? in
            guard var label = child.label, !label.hasPrefix("$") else { return nil }
            if label.hasPrefix("_") { label.removeFirst() }
            guard !label.isEmpty else { return nil }
            let value = Mirror(reflecting: child.value)
            return (label, value.displayStyle == .optional && value.children.isEmpty)
        }
    }

    /// The field names of the top-level keyed container of an object payload, or nil when the payload
    /// is not a keyed container (then there is nothing to compare).
    static func topLevelFieldNames(_ payload: [UInt8], names: [String]) -> Set<String>? {
        var reader = ByteReader(payload, objectID: nil, typeName: nil)
        do {
            switch try reader.readByte() {
            case ObjectFormat.versionAllEager, ObjectFormat.versionAllEagerCompactNumbers: break
            case ObjectFormat.versionWithLazy, ObjectFormat.versionWithLazyCompactNumbers: _ = try reader.readCount()
            default: return nil
            }
            guard try reader.readByte() == ObjectFormat.Tag.keyed.rawValue else { return nil }
            var fields: Set<String> = []
            while try reader.peekByte() != 0 {
                let number = try reader.readVarint()
                if number < UInt64(names.count) { fields.insert(names[Int(number)]) }
                try reader.skipValue(depth: 1)
            }
            return fields
        } catch {
            return nil
        }
    }
}
