@_spi(Engine) import LogStoreFormat
@_spi(Engine) @_spi(Testing) import LogStoreSystem

extension Store {
    /// Checks a store without changing anything: every frame of every segment (checksums, fields,
    /// batch structure) and every live object's record (it decodes and decompresses to its length).
    ///
    /// Unlike ``open(at:options:)``, it goes on after damage and lists every problem. It takes no lock,
    /// so it may run beside a writer: a torn tail it sees is then reported as a note, and when the
    /// writer's compaction deletes segments under it, it reads the store again (as a read-only open does).
    ///
    /// For example:
    /// ```swift
    /// let report = try Store.verify(at: "/var/db/app")
    /// for problem in report.problems { print(problem) }
    /// ```
    /// A segment that cannot be opened at all (no permission, a symbolic link whose target does not
    /// exist) is listed as a problem naming it, and the other segments are checked.
    ///
    /// An encrypted store is verified with its `cipher`: every batch must also authenticate under its key
    /// (a batch that does not is listed, `authenticationFailed`).
    /// - throws: ``LogStoreError`` with code `storeMissing` when there is no such directory, `notAStore`
    ///   when it is empty or holds other files and none of a store's, `keyRequired` / `wrongKey` /
    ///   `notEncrypted` when `cipher` is not the store's (nothing read), or `ioError` when the directory
    ///   cannot be read, or when a writer kept changing the segments for every attempt.
    public static func verify(at directory: String, cipher: (any StoreCipher)? = nil) throws(LogStoreError)
        -> VerificationReport
    {
        try verify(at: directory, cipher: cipher, faultInjector: nil)
    }

    /// ``verify(at:cipher:)`` with its system calls going through `faultInjector`, for tests.
    @_spi(Testing)
    public static func verify(
        at directory: String, cipher: (any StoreCipher)? = nil, faultInjector: FaultInjector?
    ) throws(LogStoreError) -> VerificationReport {
        let io = SystemIO(faults: faultInjector)
        guard io.isDirectory(directory) else {
            throw LogStoreError(.storeMissing, "no store directory", file: directory)
        }
        let recognized = try StoreRecognition(directory: directory, io: io)
        try recognized.requireStore(directory, for: "verify")
        let encryption =
            recognized.identityDamage == nil
            ? try StoreRecognition.encryption(of: directory, kind: recognized.kind, cipher: cipher, io: io) : nil
        let loader = StoreLoader(
            directory: directory, mode: .verify, io: io, requiresManifest: recognized.kind != .legacy,
            encryption: encryption)
        let loaded = try loader.load()
        var report = VerificationReport()
        report.segments = loaded.segmentNumbers.count
        report.frames = loaded.frames
        report.dictionaries = loaded.state.dictionaries.all.count
        report.notes = loaded.notes
        if recognized.kind == .legacy {
            report.notes.append(
                "no identity file (\(StoreIdentity.fileName)): the store was made by an older version; "
                    + "the next open for writing adds it")
        }
        if let damage = recognized.identityDamage {
            report.problems.append(
                .init(file: damage.file ?? directory, offset: damage.offset, message: damage.message))
        }
        report.problems += loaded.problems.map { .init(file: $0.file, offset: $0.offset, message: $0.message) }
        let state = loaded.state
        state.forEachDurable { id, entry in
            report.liveObjects += 1
            guard let file = state.segments.file(entry.segment) else {
                report.problems.append(
                    .init(file: "segment \(entry.segment)", offset: nil, message: "object \(id): segment missing"))
                return
            }
            let bytes = file.bytes(count: Int(entry.offset) + Int(entry.length))
            switch FrameDecoder.decode(bytes, at: Int(entry.offset), format: file.format) {
            case .success(let frame):
                if case .failure(let problem) = FrameDecoder.payload(
                    of: frame, in: bytes, dictionaries: state.dictionaries)
                {
                    report.problems.append(
                        .init(file: file.path, offset: UInt64(entry.offset), message: "object \(id): \(problem.reason)")
                    )
                }
            case .failure(let problem):
                report.problems.append(
                    .init(file: file.path, offset: UInt64(entry.offset), message: "object \(id): \(problem.reason)"))
            }
        }
        // Referential integrity: every reference of a live object, and every root, names a live object.
        var dangling = 0
        state.forEachDurable { id, entry in
            for target in state.references(of: entry) where state.durableEntry(target.rawValue) == nil {
                dangling += 1
                if dangling <= 100 {
                    report.problems.append(
                        .init(
                            file: state.segments.file(entry.segment)?.path ?? "segment \(entry.segment)",
                            offset: UInt64(entry.offset),
                            message: "object \(id) refers to object \(target), which is not live"))
                }
            }
        }
        if dangling > 100 {
            report.problems.append(
                .init(file: directory, offset: nil, message: "\(dangling - 100) more dangling references"))
        }
        for (name, id) in state.roots.sorted(by: { $0.key < $1.key }) where state.durableEntry(id.rawValue) == nil {
            report.problems.append(
                .init(
                    file: directory, offset: nil, message: "root \"\(name)\" points at object \(id), which is not live")
            )
        }
        var graph = GraphSnapshot(of: loaded.state, chunks: [])
        graph.indexPositions()
        let unreachable = state.index.count - graph.reachableCount()
        if unreachable > 0 {
            report.notes.append("\(unreachable) unreachable object(s) await the next mark-sweep pass")
        }
        return report
    }
}
