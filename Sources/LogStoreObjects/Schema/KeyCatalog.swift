import LogStore
@_spi(Engine) import LogStoreSystem

/// The field names of every stored object, each stored once per store, numbered from 1.
///
/// Object payloads name a field by its number (see `Documentation/Objects.md`). Numbers are handed out
/// in this process under a lock and never change; each new name is written to the store as a pinned
/// field-name record in the first batch that commits after it was numbered, so every committed object
/// only uses numbers whose names are durable.
final class KeyCatalog: Sendable {
    /// An immutable view of the numbering, for decoding without taking the lock per field.
    struct Snapshot: Sendable {
        /// `names[n]` is the name of number `n`; `names[0]` is unused (0 ends a keyed container).
        var names: [String] = [""]
        /// The number of each name.
        var numbers: [String: Int] = [:]
    }

    private struct State {
        var snapshot = Snapshot()
        /// Numbers whose names no committed batch carried yet.
        var pending: Set<Int> = []
    }

    private let state: ConditionLock<State>

    /// A catalog holding the names stored in `store`'s field-name records.
    /// - throws: ``ObjectStoreError`` `corruptPayload` for an unreadable or contradicting record.
    init(loadingFrom store: Store) throws(ObjectStoreError) {
        var snapshot = Snapshot()
        do {
            for id in try store.ids(ofType: TypeNames.keyRecordTag) {
                guard let record = try store.get(id) else { continue }
                for (number, name) in try Self.decode(record.payload, id: id) {
                    if number < snapshot.names.count {
                        if !snapshot.names[number].isEmpty && snapshot.names[number] != name {
                            throw ObjectStoreError(
                                .corruptPayload,
                                "field number \(number) is \"\(snapshot.names[number])\" and \"\(name)\"",
                                typeName: TypeNames.keyRecordTypeName, objectID: id)
                        }
                    } else {
                        snapshot.names += Array(repeating: "", count: number + 1 - snapshot.names.count)
                    }
                    snapshot.names[number] = name
                    snapshot.numbers[name] = number
                }
            }
        } catch let error as LogStoreError {
            throw ObjectStoreError(error)
        } catch let error as ObjectStoreError {
            throw error
        } catch {
            throw ObjectStoreError(.corruptPayload, "\(error)", typeName: TypeNames.keyRecordTypeName)
        }
        state = ConditionLock(State(snapshot: snapshot))
    }

    /// The numbering as it is now.
    func snapshot() -> Snapshot {
        state.withLock { $0.snapshot }
    }

    /// The number of `name`, numbering it when it is new; also returns the updated snapshot.
    func number(for name: String) -> (Int, Snapshot) {
        state.withLock { state in
            if let number = state.snapshot.numbers[name] { return (number, state.snapshot) }
            let number = state.snapshot.names.count
            state.snapshot.names.append(name)
            state.snapshot.numbers[name] = number
            state.pending.insert(number)
            return (number, state.snapshot)
        }
    }

    /// The payload of a field-name record carrying every name not yet committed, and their numbers;
    /// nil when there is none.
    func pendingRecord() -> (payload: [UInt8], numbers: [Int])? {
        state.withLock { state in
            guard !state.pending.isEmpty else { return nil }
            let numbers = state.pending.sorted()
            var writer = ByteWriter()
            writer.writeVarint(UInt64(numbers.count))
            for number in numbers {
                writer.writeVarint(UInt64(number))
                writer.writeString(state.snapshot.names[number])
            }
            return (writer.bytes, numbers)
        }
    }

    /// Marks `numbers` as committed: a batch carrying their record was written.
    func markCommitted(_ numbers: [Int]) {
        state.withLock { state in
            for number in numbers { state.pending.remove(number) }
        }
    }

    /// The (number, name) pairs of a field-name record.
    static func decode(_ payload: [UInt8], id: ObjectID) throws(ObjectStoreError) -> [(Int, String)] {
        var reader = ByteReader(payload, objectID: id, typeName: TypeNames.keyRecordTypeName)
        let count = try reader.readCount()
        var pairs: [(Int, String)] = []
        for _ in 0..<count {
            // A number, not a count: it may exceed the bytes left (a late name alone in its record).
            let number = try reader.readVarint()
            guard number > 0, number < UInt64(ObjectFormat.maximumFieldNumber) else {
                throw ObjectStoreError(
                    .corruptPayload, "field number \(number) is out of range", typeName: TypeNames.keyRecordTypeName,
                    objectID: id)
            }
            pairs.append((Int(number), try reader.readString()))
        }
        return pairs
    }
}
