@_spi(Engine) import LogStoreFormat
@_spi(Engine) import LogStoreSystem

/// The hint files of a store's segments: writing one for a sealed segment, and checking the ones open
/// rebuilt segments from (``checkEveryReplayedHint()``). Used by compaction, mark-sweep and the writes of
/// missing hints, each holding the compaction lock (``Store/compactionLock``): a hint is written under a
/// temporary name that depends only on its segment, and a pass deletes the hints of its inputs.
struct HintFiles: Sendable {
    /// The index lock: the segment table says which hints exist and which are not checked yet.
    let state: ConditionLock<IndexState>
    let io: SystemIO
    /// The store's directory.
    let directory: String
    /// The store's encryption: hint files are sealed with it.
    let encryption: StoreEncryption?

    /// The bytes of the hint file holding `hint` (a hint's plaintext) for segment `number`: `hint` itself,
    /// or sealed when the store is encrypted; nil when the cipher fails.
    static func fileBytes(_ hint: [UInt8], segment number: UInt32, encryption: StoreEncryption?) -> [UInt8]? {
        guard let encryption else { return hint }
        return SealedFile.seal(hint, kind: .hint, number: UInt64(number), encryption: encryption)
    }

    /// The plaintext of a hint file's `bytes` (for segment `number`): the bytes themselves, or opened
    /// when the store is encrypted; nil when they do not open.
    static func plaintext(_ bytes: [UInt8], segment number: UInt32, encryption: StoreEncryption?) -> [UInt8]? {
        guard let encryption else { return bytes }
        let opened = bytes.withUnsafeBytes {
            SealedFile.open($0, kind: .hint, number: UInt64(number), encryption: encryption)
        }
        return try? opened.get()
    }

    /// Writes the hint of one sealed segment: under a temporary name, synced, renamed, directory synced.
    /// Call with the compaction lock held.
    /// - returns: false when no hint can be built (the segment is not sealed, or is damaged).
    @discardableResult
    func write(for file: SegmentFile, size: UInt64) throws(LogStoreError) -> Bool {
        guard let made = HintWriter.hint(segment: file.number, bytes: file.bytes(count: Int(size))) else {
            return false
        }
        let path = directory + "/" + HintFile.fileName(file.number)
        guard let hint = Self.fileBytes(made, segment: file.number, encryption: encryption) else {
            throw LogStoreError(.ioError, "cannot encrypt a hint file", file: path)
        }
        do {
            try io.replaceFile(path, with: hint, directory: directory)
        } catch {
            throw LogStoreError(.ioError, "cannot write a hint file", file: path, underlying: error)
        }
        return true
    }
}
