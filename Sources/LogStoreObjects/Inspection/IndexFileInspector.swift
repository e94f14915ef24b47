import LogStore
@_spi(Engine) import LogStoreSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `logstore-tool verify` finds in the object layer's index files, read without the store's classes:
/// each file checked as a build would check it, and each object's keys compared with those read from its
/// record (for the objects whose version the file names).
public struct IndexFileReport: Sendable, Equatable {
    /// The file's name in the store's directory.
    public var fileName: String
    /// The objects the file holds.
    public var objects: Int
    /// Objects changed or deleted since the file was written (the next build reads their records again).
    public var staleObjects: Int
    /// Why the file is not used or disagrees with the records: each is damage (the file is rebuilt from the
    /// records at the next build, so no query answers from it).
    public var problems: [String]
    /// What is worth saying and is not damage (a file of a class the catalog no longer lists).
    public var notes: [String]
}

extension IndexFileReport {
    /// The index files in `store`'s directory, each checked against the store's index catalog and records,
    /// as of one snapshot.
    /// - throws: ``ObjectStoreError`` `store` when the store cannot be read, `corruptPayload` when the
    ///   catalog or field-name records cannot.
    public static func reports(of store: Store) throws(ObjectStoreError) -> [IndexFileReport] {
        let io = SystemIO(faults: nil)
        let names: [String]
        do {
            names = try io.listDirectory(store.directory).filter {
                $0.hasPrefix("index-") && $0.hasSuffix("." + IndexFile.fileExtension)
            }
        } catch {
            throw ObjectStoreError(.store, "cannot list the store's directory: \(error)")
        }
        guard !names.isEmpty else { return [] }
        let view: Snapshot
        do {
            view = try store.snapshot()
        } catch {
            throw ObjectStoreError(error)
        }
        let catalog = try IndexCatalog.load(from: view)?.0 ?? IndexCatalog(entries: [])
        let fieldNames = try KeyCatalog(loadingFrom: store).snapshot()
        var reports: [IndexFileReport] = []
        for name in names.sorted() {
            var report = IndexFileReport(fileName: name, objects: 0, staleObjects: 0, problems: [], notes: [])
            // The class's indexes, in declaration order (the catalog lists them so): those of the class whose
            // own tag names the file (a subclass's tag is also among its superclasses' entries).
            let indexes = catalog.entries.filter { IndexFile.fileName(tag: TypeNames.tag(for: $0.typeName)) == name }
            guard let first = indexes.first else {
                report.notes.append("no class of the index catalog has this tag: the next close deletes the file")
                reports.append(report)
                continue
            }
            let path = store.directory + "/" + name
            let bytes: [UInt8]
            do {
                let fd = try io.open(path, flags: O_RDONLY | O_CLOEXEC)
                defer { io.close(fd) }
                bytes = try io.read(fd, count: Int(try io.size(fd, path: path)), at: 0, path: path)
            } catch {
                report.problems.append("cannot read the file: \(error)")
                reports.append(report)
                continue
            }
            let ties = IndexFile.Ties(
                storeID: store.storeIdentifier() ?? [], fingerprint: nil, indexCount: indexes.count)
            let declaration = IndexFile.fingerprint(
                typeName: first.typeName, tags: first.tags, aliases: [:],
                indexes: indexes.map { ($0.name, $0.fields, $0.isUnique) })
            switch IndexFile.decode(bytes, ties: ties, unique: indexes.map(\.isUnique)) {
            case .failure(let problem) where problem.isOtherDeclaration:
                report.notes.append(Self.otherDeclaration)
            case .failure(let problem):
                report.problems.append("\(problem)")
            case .success(let contents):
                report.objects = contents.data.objectCount
                if contents.sequence > view.sequence {
                    report.problems.append(
                        "exact at sequence \(contents.sequence), past the store's \(view.sequence)")
                }
                if contents.fingerprint == declaration {
                    try compare(contents.data, indexes, with: view, fieldNames, into: &report)
                } else {
                    report.notes.append(Self.otherDeclaration + " or for field aliases: keys not compared")
                }
            }
            reports.append(report)
        }
        return reports
    }

    static let otherDeclaration =
        "written for other index definitions than the catalog's: the next build reads the records instead"

    /// Compares the keys the file holds for each object with those read from its record, for the objects
    /// whose version the file names.
    private static func compare(
        _ data: TypeIndexData, _ indexes: [IndexCatalog.Entry], with view: Snapshot,
        _ fieldNames: KeyCatalog.Snapshot, into report: inout IndexFileReport
    ) throws(ObjectStoreError) {
        let definitions = indexes.map {
            ResolvedIndex(name: $0.name, fields: $0.fields, isUnique: $0.isUnique, keyPaths: [])
        }
        var reader = IndexKeyReader(definitions: definitions, aliases: [:], catalog: fieldNames)
        var disagreements = 0
        for id in data.objectIDs.sorted() {
            guard let version = view.version(of: id), version == data.version(of: id) else {
                report.staleObjects += 1
                continue
            }
            let record: Record?
            do {
                record = try view.get(id)
            } catch {
                throw ObjectStoreError(error)
            }
            guard let record else { continue }
            let keys = reader.keys(payload: record.payload, references: record.references)
            for (index, fromRecord) in keys.enumerated() {
                let fromFile = data.keys(of: id, in: index)
                guard fromFile.sorted() != fromRecord.sorted() else { continue }
                // A field renamed since (read by the class under its earlier name) reads as absent here.
                if fromRecord.contains(where: \.hasAbsent) { continue }
                disagreements += 1
                if disagreements <= 20 {
                    report.problems.append(
                        "index \(definitions[index].name): object \(id) holds "
                            + "\(fromFile.map(\.description)) in the file, "
                            + "\(fromRecord.map(\.description)) in its record")
                }
            }
        }
        if disagreements > 20 { report.problems.append("… \(disagreements) disagreements in all") }
    }
}
