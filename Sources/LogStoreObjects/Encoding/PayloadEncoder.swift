import LogStore

/// Encodes objects, one at a time, into payloads of the object format (`Documentation/Objects.md`).
///
/// Streaming: values are written in the order the object's `encode(to:)` produces them. Containers are
/// tracked on a stack of open frames; writing to an outer container closes the inner ones (writes their
/// end byte). A container used after it was closed, or a write to an outer container while an inner value
/// is still being encoded, is an `encodingFailed` error, never corrupt bytes.
final class PayloadEncoder: ContextConfined<PayloadEncoderState> {

    /// Turns a referenced object into its id (the context numbers new objects and queues them).
    typealias ReferenceResolver = (any PersistentObject) throws(ObjectStoreError) -> ObjectID

    private let catalog: KeyCatalog
    private let resolveReference: ReferenceResolver

    /// Keyed containers reused from value to value.
    let containers = KeyedContainerPool()

    /// - parameter fieldCoding: whether ``FieldCodable`` values encode through `encodeFields(to:)`.
    init(catalog: KeyCatalog, fieldCoding: Bool, resolveReference: @escaping ReferenceResolver) {
        self.catalog = catalog
        self.resolveReference = resolveReference
        super.init(
            state: PayloadEncoderState(
                keys: catalog.snapshot(), kinds: ValueKinds(decoding: false, fieldCoding: fieldCoding)))
    }

    /// The payload and reference list of `object`, an instance of exactly the class `registered`.
    func encode(_ object: any PersistentObject, as registered: RegisteredType) throws(ObjectStoreError) -> (
        payload: [UInt8], references: [ObjectID]
    ) {
        self.state.typeName = registered.name
        // Fresh buffers per object: the previous ones were handed out with the previous payload (keeping
        // their capacity would copy them, and one large object would make every later one large).
        state.writer = ByteWriter(capacity: 64)
        state.eagerReferences = []
        state.eagerIndex.removeAll()
        state.lazyReferences = []
        if !state.plainReferences.isEmpty { state.plainReferences.removeAll(keepingCapacity: true) }
        state.openFrames.removeAll(keepingCapacity: true)
        state.openFrames.append(0)
        state.floor = 0
        state.hasCompactNumbers = false
        if state.hasDeferredError { state.deferredError = nil }
        state.writer.write(ObjectFormat.versionAllEager)
        if let coder = registered.fieldCoder {
            let serial = pushFrame(.keyed)
            do {
                try coder.encode(object, FieldWriter(self, frame: serial, basePath: [], key: nil))
            } catch {
                throw wrap(error, path: [])
            }
            if state.hasDeferredError, let deferredError = state.deferredError { throw deferredError }
        } else {
            let slot = SlotEncoder(self, parent: 0, basePath: [], key: nil)
            let mark = containers.mark
            defer { containers.release(downTo: mark) }
            do {
                try object.encode(to: slot)
            } catch {
                throw wrap(error, path: [])
            }
            if state.hasDeferredError, let deferredError = state.deferredError { throw deferredError }
            if !slot.hasValue {
                state.writer.write(.keyed)
                state.writer.write(.end)
            }
        }
        closeFrames(above: 0)
        if registered.encodingChecksLeft.load(ordering: .relaxed) > 0 {
            switch try SubclassEncodingCheck.check(
                object, payload: state.writer.bytes, names: catalog.snapshot().names, registered: registered)
            {
            case .passed: registered.encodingChecksLeft.store(0, ordering: .relaxed)
            case .undecided: registered.encodingChecksLeft.wrappingSubtract(1, ordering: .relaxed)
            }
        }
        var references = state.eagerReferences
        if state.hasCompactNumbers {
            state.writer.bytes[0] = ObjectFormat.version(hasLazy: false, hasCompactNumbers: true)
        }
        if !state.lazyReferences.isEmpty {
            var header = ByteWriter(capacity: 4)
            header.writeVarint(UInt64(state.eagerReferences.count))
            state.writer.bytes[0] = ObjectFormat.version(hasLazy: true, hasCompactNumbers: state.hasCompactNumbers)
            state.writer.bytes.insert(contentsOf: header.bytes, at: 1)
            var seen = Set(state.eagerReferences)
            for id in state.lazyReferences where seen.insert(id).inserted { references.append(id) }
        }
        return (state.writer.bytes, references)
    }

    func wrap(_ error: any Error, path: [any CodingKey]) -> ObjectStoreError {
        if let error = error as? ObjectStoreError { return error }
        if let error = error as? LogStoreError { return ObjectStoreError(error) }
        return ObjectStoreError(
            .encodingFailed, "\(error)", typeName: state.typeName, field: CodingPath.describe(path),
            underlying: SendableDescription(error))
    }

    // MARK: Frames

    /// Opens a new container frame at the current position; returns its serial.
    func pushFrame(_ tag: ObjectFormat.Tag) -> Int {
        if state.openFrames.count >= ObjectFormat.maximumDepth && state.deferredError == nil {
            // Readers refuse deeper nesting (a bound against stack exhaustion): never write what cannot be read.
            state.deferredError = ObjectStoreError(
                .encodingFailed, "values nest more than \(ObjectFormat.maximumDepth) containers deep",
                typeName: state.typeName)
        }
        state.writer.write(tag)
        let serial = state.nextSerial
        state.nextSerial += 1
        state.openFrames.append(serial)
        return serial
    }

    /// Makes frame `serial` the innermost open one (closing those inside it), so a value can be written
    /// into it.
    func prepareWrite(into serial: Int, path: @autoclosure () -> [any CodingKey]) throws(ObjectStoreError) {
        if state.openFrames.last == serial { return }
        guard let position = state.openFrames.lastIndex(of: serial) else {
            throw ObjectStoreError(
                .encodingFailed, "a container was written to after its parent went on to other values",
                typeName: state.typeName, field: CodingPath.describe(path()))
        }
        guard position >= state.floor else {
            throw ObjectStoreError(
                .encodingFailed, "a container was written to while one of its values was still being encoded",
                typeName: state.typeName, field: CodingPath.describe(path()))
        }
        closeFrames(above: position)
    }

    private func closeFrames(above position: Int) {
        while state.openFrames.count > position + 1 {
            state.openFrames.removeLast()
            state.writer.write(.end)
        }
    }

    /// Writes the number of `key`'s name.
    ///
    /// Objects of one class write their fields in the same order every time, so the number that followed
    /// the previous one last time is tried first (a comparison of names, no hashing).
    func writeKey(_ key: any CodingKey) {
        writeKey(named: key.stringValue)
    }

    /// Writes the number of the field name `name` (see ``writeKey(_:)``).
    func writeKey(named name: String) {
        let previous = state.lastKeyNumber
        if previous < state.predictedNext.count {
            let guess = state.predictedNext[previous]
            if guess > 0 && guess < state.keys.names.count && state.keys.names[guess] == name {
                state.writer.writeVarint(UInt64(guess))
                state.lastKeyNumber = guess
                return
            }
        }
        let number: Int
        if let known = state.keys.numbers[name] {
            number = known
        } else {
            let (assigned, snapshot) = catalog.number(for: name)
            state.keys = snapshot
            number = assigned
        }
        state.writer.writeVarint(UInt64(number))
        if previous >= state.predictedNext.count {
            state.predictedNext += Array(repeating: 0, count: previous + 1 - state.predictedNext.count)
        }
        state.predictedNext[previous] = number
        state.lastKeyNumber = number
    }

    // MARK: Values

    /// A keyed container writing into `frame`: a pooled one (``KeyedContainerPool``) when free.
    func keyedContainer<Key: CodingKey>(
        _: Key.Type, frame: Int, basePath: [any CodingKey], key: (any CodingKey)?
    ) -> KeyedEncodingContainer<Key> {
        if let entry = containers.lease(ObjectIdentifier(Key.self)) {
            // The pool hands out an entry only for the key type it was made for.
            let pooled = unsafeDowncast(entry, to: PooledKeyedEncoder<Key>.self)
            pooled.target.state.frame = frame
            pooled.target.state.basePath = basePath
            pooled.target.state.key = key
            return pooled.container
        }
        let pooled = PooledKeyedEncoder(KeyedFieldEncoder<Key>(self, frame: frame, basePath: basePath, key: key))
        containers.adopt(pooled)
        return pooled.container
    }

    /// Writes `value` (its tag and body) at the current position, inside frame `parent`; `basePath` and
    /// `key` make its coding path.
    func encodeValue<T: Encodable>(_ value: T, parent: Int, basePath: [any CodingKey], key: (any CodingKey)?) throws {
        if try encodePrimitive(value) { return }
        switch state.kinds.kind(of: T.self) {
        case .persistent:
            if let object = value as? any PersistentObject {
                let id = try reference(to: object, basePath: basePath, key: key)
                writeReference(id)
                // A plain field: its target must be decoded before its owner (see `SaveSession+Cycles`).
                state.plainReferences.append(id)
                if state.tracesPlainFields {
                    state.plainFields.append((id, CodingPath.describe(key.map { basePath + [$0] } ?? basePath)))
                }
                return
            }
        case .special:
            if let special = value as? any SpecialFieldEncodable {
                // The parent is the innermost open frame here; the special value may open frames of its own,
                // which are closed again before returning (whatever the current floor).
                let parentPosition = state.openFrames.count - 1
                try special.encodeField(into: self, parent: parent, path: key.map { basePath + [$0] } ?? basePath)
                closeFrames(above: parentPosition)
                return
            }
        case .fieldCoded:
            if let coded = value as? any FieldCodable {
                try encodeFieldCoded(coded, basePath: basePath, key: key)
                return
            }
        case .plain, .primitive:
            break
        }
        let parentPosition = state.openFrames.count - 1
        let savedFloor = state.floor
        state.floor = parentPosition + 1
        defer { state.floor = savedFloor }
        let slot = SlotEncoder(self, parent: parent, basePath: basePath, key: key)
        let mark = containers.mark
        defer { containers.release(downTo: mark) }
        try value.encode(to: slot)
        if state.hasDeferredError, let deferredError = state.deferredError { throw deferredError }
        if !slot.hasValue { state.writer.write(.null) }
        closeFrames(above: parentPosition)
    }

    /// Whether values of `T` are persistent objects (stored as references).
    func isPersistent<T>(_: T.Type) -> Bool {
        state.kinds.kind(of: T.self) == .persistent
    }

    /// Writes a ``FieldCodable`` value (a keyed container) at the current position, inside the innermost
    /// open frame, through its `encodeFields(to:)`.
    func encodeFieldCoded<T: FieldCodable>(_ value: T, basePath: [any CodingKey], key: (any CodingKey)?)
        throws(ObjectStoreError)
    {
        let parentPosition = state.openFrames.count - 1
        let savedFloor = state.floor
        state.floor = parentPosition + 1
        defer { state.floor = savedFloor }
        let serial = pushFrame(.keyed)
        do {
            try value.encodeFields(to: FieldWriter(self, frame: serial, basePath: basePath, key: key))
        } catch {
            throw wrap(error, path: key.map { basePath + [$0] } ?? basePath)
        }
        if state.hasDeferredError, let deferredError = state.deferredError { throw deferredError }
        closeFrames(above: parentPosition)
    }

    /// Writes the standard library's scalar types directly; false for anything else.
    ///
    /// Each branch compares metatypes first, so `unsafeBitCast` only ever reinterprets a value as its own
    /// type.
    private func encodePrimitive<T>(_ value: T) throws -> Bool {
        let type = ObjectIdentifier(T.self)
        if type == ObjectIdentifier(String.self) {
            writeString(unsafeBitCast(value, to: String.self))
        } else if type == ObjectIdentifier(Int.self) {
            writeSigned(Int64(unsafeBitCast(value, to: Int.self)))
        } else if type == ObjectIdentifier(Double.self) {
            writeDouble(unsafeBitCast(value, to: Double.self))
        } else if type == ObjectIdentifier(Bool.self) {
            writeBool(unsafeBitCast(value, to: Bool.self))
        } else if type == ObjectIdentifier(Int64.self) {
            writeSigned(unsafeBitCast(value, to: Int64.self))
        } else if type == ObjectIdentifier(Int32.self) {
            writeSigned(Int64(unsafeBitCast(value, to: Int32.self)))
        } else if type == ObjectIdentifier(Int16.self) {
            writeSigned(Int64(unsafeBitCast(value, to: Int16.self)))
        } else if type == ObjectIdentifier(Int8.self) {
            writeSigned(Int64(unsafeBitCast(value, to: Int8.self)))
        } else if type == ObjectIdentifier(UInt.self) {
            writeUnsigned(UInt64(unsafeBitCast(value, to: UInt.self)))
        } else if type == ObjectIdentifier(UInt64.self) {
            writeUnsigned(unsafeBitCast(value, to: UInt64.self))
        } else if type == ObjectIdentifier(UInt32.self) {
            writeUnsigned(UInt64(unsafeBitCast(value, to: UInt32.self)))
        } else if type == ObjectIdentifier(UInt16.self) {
            writeUnsigned(UInt64(unsafeBitCast(value, to: UInt16.self)))
        } else if type == ObjectIdentifier(UInt8.self) {
            writeUnsigned(UInt64(unsafeBitCast(value, to: UInt8.self)))
        } else if type == ObjectIdentifier(Float.self) {
            writeFloat(unsafeBitCast(value, to: Float.self))
        } else {
            return false
        }
        return true
    }

    /// Closes the frames inside `serial` and returns the current length: where the next entry of that
    /// frame will start.
    func entryBoundary(in serial: Int, path: [any CodingKey]) throws(ObjectStoreError) -> Int {
        try prepareWrite(into: serial, path: path)
        return state.writer.bytes.count
    }

    /// Reorders the adjacent encoded entries `ranges` (each `start..<end`, sorted by their first
    /// `keyLength` bytes) so that equal collections encode to equal bytes whatever their iteration order.
    func sortEntries(_ ranges: [(start: Int, keyEnd: Int, end: Int)]) {
        guard ranges.count > 1, let first = ranges.first?.start, let last = ranges.last?.end else { return }
        let bytes = state.writer.bytes
        let sorted = ranges.sorted { lhs, rhs in
            bytes[lhs.start..<lhs.keyEnd].lexicographicallyPrecedes(bytes[rhs.start..<rhs.keyEnd])
        }
        var reordered: [UInt8] = []
        reordered.reserveCapacity(last - first)
        for range in sorted { reordered += bytes[range.start..<range.end] }
        state.writer.bytes.replaceSubrange(first..<last, with: reordered)
    }

    func writeNil() { state.writer.write(.null) }
    func writeBool(_ value: Bool) { state.writer.write(value ? .trueValue : .falseValue) }
    func writeSigned(_ value: Int64) {
        state.writer.write(.signed)
        state.writer.writeSigned(value)
    }
    func writeUnsigned(_ value: UInt64) {
        state.writer.write(.unsigned)
        state.writer.writeVarint(value)
    }
    /// Writes `value` in the fewest bytes that give it back bit for bit: an integer of magnitude below 2²⁷
    /// (not -0) as a zigzag varint (at most 4 bytes), a value a `Float` holds exactly in 4 bytes, another
    /// integer of magnitude below 2⁴⁸ as a zigzag varint (5 to 7 bytes), any other (NaN included) in 8.
    func writeDouble(_ value: Double) {
        if value.magnitude < 0x1p48, let integer = Int64(exactly: value), integer != 0 || value.sign == .plus,
            integer.magnitude < 1 << 27 || Float(exactly: value) == nil
        {
            state.hasCompactNumbers = true
            state.writer.write(.integralDouble)
            state.writer.writeSigned(integer)
        } else if let single = Float(exactly: value) {
            state.hasCompactNumbers = true
            state.writer.write(.singleDouble)
            state.writer.writeFixed32(single.bitPattern)
        } else {
            state.writer.write(.double)
            state.writer.writeFixed64(value.bitPattern)
        }
    }
    /// Writes `value`: an integer of magnitude below 2²⁰ (not -0) as a zigzag varint (at most 3 bytes), any
    /// other in 4 bytes.
    func writeFloat(_ value: Float) {
        if value.magnitude < 0x1p20, let integer = Int64(exactly: value), integer != 0 || value.sign == .plus {
            state.hasCompactNumbers = true
            state.writer.write(.integralDouble)
            state.writer.writeSigned(integer)
        } else {
            state.writer.write(.float)
            state.writer.writeFixed32(value.bitPattern)
        }
    }
    func writeString(_ value: String) {
        state.writer.write(.string)
        state.writer.writeString(value)
    }
    func writeBytes<C: Collection<UInt8>>(_ bytes: C) {
        state.writer.write(.bytes)
        state.writer.writeVarint(UInt64(bytes.count))
        state.writer.bytes.append(contentsOf: bytes)
    }
    func writeUUIDBytes(_ bytes: [UInt8]) {
        state.writer.write(.uuid)
        state.writer.bytes.append(contentsOf: bytes)
    }

    /// Writes an eager reference to `id` (an index into the record's reference list).
    func writeReference(_ id: ObjectID) {
        let index: Int
        if let known = indexOfEagerReference(id) {
            index = known
        } else {
            index = state.eagerReferences.count
            state.eagerReferences.append(id)
            if !state.eagerIndex.isEmpty {
                state.eagerIndex[id] = index
            } else if state.eagerReferences.count == Self.linearSearchLimit {
                for (position, reference) in state.eagerReferences.enumerated() {
                    state.eagerIndex[reference] = position
                }
            }
        }
        state.writer.write(.reference)
        state.writer.writeVarint(UInt64(index))
        if state.capturingReferences > 0 { state.captured.append(id) }
    }

    // MARK: Unordered collections (see `UnorderedEntries.swift`)

    /// The ids of the references written while ``capturingReferences`` is above zero.
    var capturedReferences: [ObjectID] { state.captured }

    /// Where an unordered collection's first pass started: enough to undo it.
    struct UnorderedMark {
        fileprivate let bytes: Int
        fileprivate let eagerReferences: Int
        fileprivate let lazyReferences: Int
        let captured: Int
    }

    func unorderedMark() -> UnorderedMark {
        UnorderedMark(
            bytes: state.writer.bytes.count, eagerReferences: state.eagerReferences.count,
            lazyReferences: state.lazyReferences.count,
            captured: state.captured.count)
    }

    /// Undoes what was written since `mark` (bytes, references met for the first time, captured ids). The
    /// caller's frame must be the innermost open one, as it is at an entry boundary.
    func rollBack(to mark: UnorderedMark) {
        state.writer.bytes.removeSubrange(mark.bytes...)
        if !state.eagerIndex.isEmpty {
            for id in state.eagerReferences[mark.eagerReferences...] { state.eagerIndex[id] = nil }
        }
        state.eagerReferences.removeSubrange(mark.eagerReferences...)
        state.lazyReferences.removeSubrange(mark.lazyReferences...)
        state.captured.removeSubrange(mark.captured...)
    }

    /// Up to this many references are searched linearly; beyond, through `eagerIndex`.
    private static let linearSearchLimit = 64

    private func indexOfEagerReference(_ id: ObjectID) -> Int? {
        guard state.eagerIndex.isEmpty else { return state.eagerIndex[id] }
        let raw = id.rawValue
        return state.eagerReferences.withUnsafeBufferPointer { references in
            for index in references.indices where references[index].rawValue == raw { return index }
            return nil
        }
    }

    /// Writes a lazy reference to `id` (the id itself; it joins the record's reference list too).
    func writeLazyReference(_ id: ObjectID) {
        state.lazyReferences.append(id)
        if state.capturingReferences > 0 { state.captured.append(id) }
        state.writer.write(.lazyReference)
        state.writer.writeVarint(id.rawValue)
    }

    /// Resolves `object` to its id through the context; an error names the field at `path`.
    func reference(to object: any PersistentObject, path: [any CodingKey]) throws(ObjectStoreError) -> ObjectID {
        try reference(to: object, basePath: path, key: nil)
    }

    /// Resolves `object` to its id through the context; an error names the field.
    func reference(
        to object: any PersistentObject, basePath: [any CodingKey], key: (any CodingKey)?
    ) throws(ObjectStoreError) -> ObjectID {
        do {
            return try resolveReference(object)
        } catch {
            var error = error
            if error.field == nil {
                error.field = CodingPath.describe(key.map { basePath + [$0] } ?? basePath)
                error.message += " (referenced from a \(state.typeName))"
                error.typeName = error.typeName ?? state.typeName
            }
            throw error
        }
    }
}

/// The working state of a ``PayloadEncoder``, kept without dynamic exclusivity checks (see ``ContextConfined``).
struct PayloadEncoderState {
    var writer = ByteWriter(capacity: 256)
    /// Whether the payload holds a compact number (it then has payload version 3 or 4).
    var hasCompactNumbers = false
    var eagerReferences: [ObjectID] = []
    var eagerIndex = IDTable<Int>()
    var lazyReferences: [ObjectID] = []
    /// The targets of the object's plain reference fields (not ``ObjectRef``, ``ObjectList`` or ``LazyRef``),
    /// in the order met, repeated when met again.
    var plainReferences: [ObjectID] = []
    /// Whether to note the coding path of each plain reference field in ``plainFields`` (for an error).
    var tracesPlainFields = false
    var plainFields: [(target: ObjectID, path: String)] = []
    var keys: KeyCatalog.Snapshot
    /// The field number written last, and for each number the one that followed it last time.
    var lastKeyNumber = 0
    var predictedNext: [Int] = []
    var kinds: ValueKinds
    /// Serial numbers of the open containers, outermost first; serial 0 is the object itself.
    var openFrames: [Int] = [0]
    var nextSerial = 1
    /// Writes must go to frames above this stack position (the innermost value being encoded).
    var floor = 0
    /// An error found where the `Encoder` API cannot throw (container creation), thrown at the end.
    var deferredError: ObjectStoreError? {
        didSet { hasDeferredError = deferredError != nil }
    }
    /// Whether ``deferredError`` is set: checked after every value, cheaper than reading the error.
    var hasDeferredError = false
    /// Above zero while an unordered collection is encoded: references are then also noted in `captured`.
    var capturingReferences = 0
    var captured: [ObjectID] = []
    /// The type being encoded, for error messages.
    var typeName = ""
}

/// A value that encodes itself directly in the object format rather than through `Encoder` containers
/// (references, dictionaries, `Data`, `UUID`, `URL`).
protocol SpecialFieldEncodable {
    /// Writes the value's tag and body at the current position of `encoder`, inside frame `parent`.
    func encodeField(into encoder: PayloadEncoder, parent: Int, path: [any CodingKey]) throws
}

/// Formats coding paths for error messages: `layers[2].shapes`.
enum CodingPath {
    static func describe(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue, key.stringValue == "Index \(index)" || key.stringValue == "\(index)" {
                text += "[\(index)]"
            } else {
                if !text.isEmpty { text += "." }
                text += key.stringValue
            }
        }
        return text
    }
}

/// The description of a non-Sendable error, kept as the underlying cause.
struct SendableDescription: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ error: any Error) { description = "\(error)" }
}
