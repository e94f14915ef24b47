@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// A read view of a store fixed at one point of its log: every read through it sees exactly the batches
/// committed when it was taken, and nothing later, while writers, the collector and compaction go on.
///
/// Taking a snapshot never waits for a writer's I/O and costs about as much as one `get`. Reads through
/// it take no lock. The segments it reads from stay mapped until the snapshot is released (compaction may
/// have deleted their files meanwhile: their disk space comes back when the last snapshot naming them
/// ends), and objects deleted or collected after it was taken stay readable through it. Keep snapshots
/// short-lived when the store is written heavily: while one is alive, the writer's first change to each
/// part of the index copies that part (24 KiB per 1,024 ids).
///
/// A snapshot stays readable after the store is closed; it is `Sendable`, so it may be shared by threads.
///
/// For example:
/// ```swift
/// let view = try store.snapshot()
/// let main = try view.root(named: "main")            // both reads see the same moment,
/// let record = try main.flatMap { try view.get($0) }  // whatever writers did in between
/// ```
public final class Snapshot: Sendable {
    let view: DurableView
    /// The store's directory (for error messages).
    let directory: String

    init(view: DurableView, directory: String) {
        self.view = view
        self.directory = directory
    }

    /// The sequence number of the newest batch the snapshot includes.
    public var sequence: UInt64 { view.sequence }

    /// The record of `id` as of this snapshot, or nil when the object was not live then.
    /// - throws: ``LogStoreError`` `corruptFrame` (naming file and offset) when the bytes on disk no longer
    ///   match their checksum.
    public func get(_ id: ObjectID) throws(LogStoreError) -> Record? {
        guard let entry = view.entry(id.rawValue), let file = view.segments[entry.segment] else { return nil }
        return try RecordReader.record(id, entry, in: file, dictionaries: view.dictionaries).record
    }

    /// Asks the processor to start loading the records of `ids` (their first bytes), so that gets of them
    /// one after another overlap their memory waits instead of paying each in turn: call it with the next
    /// few ids (a few dozen) before reading them. Only a hint: it reads and checks nothing.
    public func prefetch(_ ids: ArraySlice<ObjectID>) {
        for id in ids {
            guard let entry = view.entry(id.rawValue), let file = view.segments[entry.segment] else { continue }
            file.prefetch(at: Int(entry.offset), count: Int(entry.length))
        }
    }

    /// The record of `id` and its version (the sequence number of the batch that wrote it), as of this
    /// snapshot; nil when the object was not live then.
    /// - throws: what ``get(_:)`` throws.
    public func versionedGet(_ id: ObjectID) throws(LogStoreError) -> (record: Record, version: UInt64)? {
        guard let entry = view.entry(id.rawValue), let file = view.segments[entry.segment] else { return nil }
        return try RecordReader.record(id, entry, in: file, dictionaries: view.dictionaries)
    }

    /// ``versionedGet(_:)`` that decompresses the payload into `payloadBuffer` and gives the record that
    /// array: a reader that lets go of each record before the next (and of every other copy of the buffer)
    /// reuses one allocation for all payloads; one that keeps records gets a new array each time, as
    /// `Array` copies on write.
    /// - throws: what ``get(_:)`` throws.
    public func versionedGet(_ id: ObjectID, payloadBuffer: inout [UInt8]) throws(LogStoreError) -> (
        record: Record, version: UInt64
    )? {
        guard let entry = view.entry(id.rawValue), let file = view.segments[entry.segment] else { return nil }
        return try RecordReader.record(
            id, entry, in: file, dictionaries: view.dictionaries, payloadBuffer: &payloadBuffer)
    }

    /// Calls `body` with the stored bytes of `id`'s payload as of this snapshot, without copying them when
    /// they are stored uncompressed; nil (without calling `body`) when the object was not live.
    /// - throws: what ``get(_:)`` throws, and what `body` throws.
    public func withPayload<Result>(
        of id: ObjectID, _ body: (_ typeTag: UInt32, UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result? {
        guard let entry = view.entry(id.rawValue), let file = view.segments[entry.segment] else { return nil }
        return try RecordReader.withPayload(of: id, entry, in: file, dictionaries: view.dictionaries, body)
    }

    /// The type tag and references of `id` as of this snapshot, without its payload.
    /// - throws: what ``get(_:)`` throws.
    public func header(of id: ObjectID) throws(LogStoreError) -> (typeTag: UInt32, references: [ObjectID])? {
        guard let entry = view.entry(id.rawValue), let file = view.segments[entry.segment] else { return nil }
        return try RecordReader.header(of: id, entry, in: file)
    }

    /// The version of `id`'s record as of this snapshot: the sequence number of the batch that wrote it
    /// (a later write of the object has a higher one); nil when the object was not live.
    ///
    /// Save it with what you read, and pass it to ``WriteBatch/expect(_:version:)`` to write only if
    /// nobody changed the object since.
    public func version(of id: ObjectID) -> UInt64? {
        guard let entry = view.entry(id.rawValue), let file = view.segments[entry.segment] else { return nil }
        return RecordReader.sequence(of: entry, in: file)
    }

    /// Whether `id` has the same record (or is absent in both) in this snapshot and in `other`, a snapshot of
    /// the same store: i.e. nobody wrote or deleted it between the two.
    public func hasSameRecord(_ id: ObjectID, as other: Snapshot) -> Bool {
        let mine = view.entry(id.rawValue)
        let theirs = other.view.entry(id.rawValue)
        guard let mine, let theirs else { return mine == nil && theirs == nil }
        if mine.isSameRecord(theirs) { return true }
        // Compaction moves records without changing them: compare versions.
        return version(of: id) == other.version(of: id)
    }

    /// Whether `id` named a live object.
    public func contains(_ id: ObjectID) -> Bool {
        view.entry(id.rawValue) != nil
    }

    /// The object the root `name` pointed at, or nil when there was no such root.
    public func root(named name: String) -> ObjectID? {
        view.roots[name]
    }

    /// Every named root and the object it pointed at.
    public func roots() -> [String: ObjectID] {
        view.roots
    }

    /// The ids of the live objects, in increasing order; only those of `typeTag` when it is given.
    public func ids(ofType typeTag: UInt32? = nil) -> [ObjectID] {
        RecordReader.ids(typeTag: typeTag, typeCounts: view.typeCounts, liveCount: view.liveCount) {
            view.forEach($0)
        }
    }

    /// The number of live objects; only those of `typeTag` when it is given.
    public func count(ofType typeTag: UInt32? = nil) -> Int {
        typeTag.map { view.typeCounts[$0] ?? 0 } ?? view.liveCount
    }

    /// The number of live objects of each type tag.
    public func countsByType() -> [UInt32: Int] {
        view.typeCounts
    }

    /// The former name of ``RecordSpace``.
    @available(*, deprecated, renamed: "RecordSpace")
    public typealias TypeSpace = RecordSpace

    /// What a group of live records (of one type tag, or compressed against one dictionary) takes on disk.
    public struct RecordSpace: Sendable, Equatable {
        /// Live records in the group.
        public var records = 0
        /// Bytes of their frames in the segments (fields, references, stored payload, checksums).
        public var frameBytes: UInt64 = 0
        /// Bytes of their payloads as the application gave them (before compression).
        public var payloadBytes: UInt64 = 0

        /// Frame bytes per payload byte (0 without payload).
        public var ratio: Double { payloadBytes == 0 ? 0 : Double(frameBytes) / Double(payloadBytes) }
    }

    /// The bytes on disk and the raw payload bytes of the live records, per type tag. Reads the header
    /// of every live record's frame (not the payloads); a frame that does not decode is left out.
    public func spaceByType() -> [UInt32: RecordSpace] {
        space { frame, entry in entry.typeTag }
    }

    /// The bytes on disk and the raw payload bytes of the live records, per compression dictionary their
    /// payload is compressed against (0: none: stored raw or compressed alone). Reads as ``spaceByType()``.
    public func spaceByDictionary() -> [UInt32: RecordSpace] {
        space { frame, _ in frame.dictionary }
    }

    /// The ids and sizes in bytes of the store's compression dictionaries as of this snapshot.
    public func dictionaries() -> [(id: UInt32, bytes: Int)] {
        view.dictionaries.all.map { ($0.id, $0.content.count) }
    }

    private func space(by key: (DecodedFrame, IndexEntry) -> UInt32) -> [UInt32: RecordSpace] {
        var space: [UInt32: RecordSpace] = [:]
        func count(_: UInt64, _ entry: IndexEntry) {
            guard let file = view.segments[entry.segment], Int(entry.offset) + Int(entry.length) <= file.mappedLength,
                case .success(let frame) = FrameDecoder.decode(
                    file.bytes(count: Int(entry.offset) + Int(entry.length)), at: Int(entry.offset),
                    format: file.format, verifyChecksum: false)
            else { return }
            let key = key(frame, entry)
            space[key, default: RecordSpace()].records += 1
            space[key, default: RecordSpace()].frameBytes += UInt64(entry.length)
            space[key, default: RecordSpace()].payloadBytes += UInt64(frame.originalLength)
        }
        view.forEach(count)
        return space
    }
}

extension Store {
    /// A read view of the store's committed state as of now (see ``Snapshot``).
    /// - throws: ``LogStoreError`` with code `closed`.
    public func snapshot() throws(LogStoreError) -> Snapshot {
        let view = try readState { $0.durableView() }
        return Snapshot(view: view, directory: directory)
    }

    /// Runs `body` with a snapshot of the store's committed state as of now, and returns what it returns.
    ///
    /// For example:
    /// ```swift
    /// let (roots, count) = try store.read { view in (view.roots(), view.count()) }
    /// ```
    /// - throws: ``LogStoreError`` with code `closed`, or what `body` throws.
    public func read<Result>(_ body: (Snapshot) throws -> Result) throws -> Result {
        try body(snapshot())
    }
}
