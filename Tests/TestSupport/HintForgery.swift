import Foundation
@_spi(Engine) import LogStoreFormat

extension TemporaryStore {
    /// Rewrites the hint file of segment `segment` with its entries as `change` makes them (read with the
    /// hint reader, written with the hint writer, which gives an explicit offset to an entry whose frame
    /// does not follow the previous one). The checksum is computed anew: the hint is valid as a file and
    /// says something else than its segment, as a hint of another store or a deliberate forgery would.
    /// - throws: when the hint cannot be read or written, or what `change` throws.
    package func forgeHint(segment: UInt32 = 1, _ change: (inout [HintFile.Entry]) throws -> Void) throws {
        let hintPath = path + "/" + HintFile.fileName(segment)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: hintPath))
        let (number, size, read, isCompact) = try bytes.withUnsafeBytes { raw in
            let reader = try HintReader.open(raw).get()
            return (reader.segmentNumber, reader.segmentSize, reader.entries, reader.isCompact)
        }
        var entries = read
        try change(&entries)
        var writer = HintWriter(
            segmentNumber: number, segmentSize: size, format: isCompact ? .v2(baseSequence: 0) : .v1)
        for entry in entries { writer.append(entry) }
        try Data(writer.finish()).write(to: URL(fileURLWithPath: hintPath))
    }

    /// Deletes every hint file, so that the next open scans every segment.
    package func deleteHints() throws {
        for name in fileNames() where name.hasSuffix("." + HintFile.fileExtension) {
            try FileManager.default.removeItem(atPath: path + "/" + name)
        }
    }
}
