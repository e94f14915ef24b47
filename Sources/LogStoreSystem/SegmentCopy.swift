@_spi(Engine) import LogStoreFormat

/// A private copy of the start of a segment file, read with `pread(2)`, for a reader that must not read
/// the file through its mapping.
///
/// A read-only open or `verify` scans the append segment while a writer beside it may be writing it.
/// The writer extends that segment ahead of its writes and cuts the extension back when it seals the
/// segment (`SegmentPrefill.swift`); a page of a mapping past the new end of the file then faults
/// (`SIGBUS`) when touched. A `pread` past the end just returns fewer bytes, so such a reader scans a
/// copy instead. Readers without a writer beside them, and every read of a record after the open, only
/// touch frames already written, which no writer cuts, and use the mapping.
package final class SegmentCopy {
    /// The bytes copied: the first `count` bytes of the file, or fewer when it ended sooner.
    package let bytes: UnsafeRawBufferPointer
    /// The memory they are in, owned by this object.
    private let storage: UnsafeMutableRawBufferPointer

    /// Copies the first `count` bytes of the file open at `fd`.
    /// - throws: ``SystemError`` when `pread` fails.
    package init(fd: Int32, count: Int, path: String, io: SystemIO) throws(SystemError) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 0), alignment: 16)
        do {
            let read = try io.read(fd, into: storage, at: 0, path: path)
            self.storage = storage
            bytes = UnsafeRawBufferPointer(rebasing: storage[0..<read])
        } catch {
            storage.deallocate()
            throw error
        }
    }

    deinit { storage.deallocate() }

    /// Decrypts the copy of encrypted segment `number` in place (``SegmentDecryption``).
    package func decrypt(segment number: UInt32, encryption: StoreEncryption) {
        guard bytes.count >= LogFormat.segmentHeaderSize else { return }
        _ = SegmentDecryption.decrypt(
            UnsafeMutableRawBufferPointer(mutating: bytes), from: LogFormat.segmentHeaderSize, segment: number,
            encryption: encryption)
    }
}

/// Bytes in memory of their own, kept alive by this object: a decrypted side file whose readers point
/// into it.
///
/// `@unchecked Sendable`: `bytes` is a `let`, written only in `init`, and only read afterwards.
package final class HeldBytes: @unchecked Sendable {
    /// The bytes.
    package let bytes: UnsafeRawBufferPointer

    /// Copies `contents`.
    package init(_ contents: [UInt8]) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(contents.count, 1), alignment: 16)
        contents.withUnsafeBytes { source in
            if let from = source.baseAddress, let to = storage.baseAddress {
                to.copyMemory(from: from, byteCount: source.count)
            }
        }
        bytes = UnsafeRawBufferPointer(rebasing: storage[0..<contents.count])
    }

    deinit { UnsafeMutableRawBufferPointer(mutating: bytes).deallocate() }
}
