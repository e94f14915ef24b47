/// The one error type of the LogStore engine.
///
/// Every error carries a ``Code`` (what went wrong), a human-readable message, and where it applies:
/// the file and byte offset when the problem is in a file, and the underlying cause (for example an
/// ``Errno``-style system error) when there is one.
///
/// For example:
/// ```swift
/// do {
///     let store = try Store.open(at: "/var/db/app")
/// } catch let error as LogStoreError where error.code == .locked {
///     print("another process is writing this store")
/// }
/// ```
public struct LogStoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added in later versions.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The stable name of the code, e.g. `"corruptFrame"`.
        public let name: String

        private init(_ name: String) { self.name = name }

        /// Another process (or another open `Store` in this process) holds the store's write lock.
        public static let locked = Code("locked")
        /// The store was closed; open it again to use it.
        public static let closed = Code("closed")
        /// An earlier write or fsync failed; the store refuses writes until it is reopened.
        public static let storeFailed = Code("storeFailed")
        /// A system call failed (the underlying cause holds the errno).
        public static let ioError = Code("ioError")
        /// A frame failed its checksum or holds an impossible field, outside a recoverable torn tail.
        public static let corruptFrame = Code("corruptFrame")
        /// A segment file's header is damaged (wrong magic, bad checksum, impossible field).
        public static let corruptSegmentHeader = Code("corruptSegmentHeader")
        /// A compression dictionary file is damaged (its checksum, length or fields are wrong), or is not the
        /// dictionary the store wrote under its name: its content is not the one the segment manifest
        /// records for it (another store's dictionary copied in, or one altered with its checksum fixed).
        public static let corruptDictionary = Code("corruptDictionary")
        /// A hint file that the open used is valid as a file (its checksum holds) but does not describe its
        /// segment's frames, which a compaction or mark-sweep pass found before freeing or dropping
        /// anything. The index the open rebuilt from it may be wrong, so nothing is compacted or
        /// collected (by those passes) until the store is opened again. The hint file is deleted and a true one
        /// is written from the segment's frames (by the background compactor, `writeHints()` or `close()`),
        /// or, when none is written, the next open scans the segment; open the store again to see every
        /// object and root. It is thrown too once the collector found a pinned frame whose hint entry left
        /// the flag out (that object is kept).
        public static let corruptHint = Code("corruptHint")
        /// A frame names a compression dictionary the store does not have.
        public static let missingDictionary = Code("missingDictionary")
        /// A segment that the store's manifest lists is missing from the directory.
        public static let missingSegment = Code("missingSegment")
        /// A segment header names a newer, unknown format version.
        public static let unsupportedVersion = Code("unsupportedVersion")
        /// A payload is larger than ``LogStoreLimits/maxPayloadSize``.
        public static let payloadTooLarge = Code("payloadTooLarge")
        /// A record names more references than ``LogStoreLimits/maxReferenceCount``.
        public static let tooManyReferences = Code("tooManyReferences")
        /// An object id was never handed out by this store (see ``Store/newID()``).
        public static let unallocatedID = Code("unallocatedID")
        /// An object id is 0 or larger than ``LogStoreLimits/maxObjectID`` (a put, a root, an import), or
        /// ``Store/reserveIDs(through:)`` names an id larger than ``LogStoreLimits/maxReservableID`` that
        /// is not reserved already.
        public static let idOutOfRange = Code("idOutOfRange")
        /// The store has handed out every object id up to ``LogStoreLimits/maxObjectID`` (or used every
        /// sequence number): ``Store/newID()`` has nothing left to hand out.
        public static let exhausted = Code("exhausted")
        /// A put or root named an object that is not live (never written, deleted, or collected).
        public static let danglingReference = Code("danglingReference")
        /// A delete named an object that a live object or a named root still refers to.
        public static let stillReferenced = Code("stillReferenced")
        /// A batch's expectation (``WriteBatch/expect(_:version:)``) did not hold when it committed: another
        /// write changed or deleted the object after it was read. ``LogStoreError/objects`` names them all;
        /// nothing of the batch was written.
        public static let conflict = Code("conflict")
        /// A change feed was asked to start after a batch the store no longer keeps.
        public static let historyUnavailable = Code("historyUnavailable")
        /// A delete named an object that is not live.
        public static let notFound = Code("notFound")
        /// A root name is empty or too long.
        public static let invalidRootName = Code("invalidRootName")
        /// The store is encrypted and the open gave no cipher (``StoreOptions/cipher``); nothing was read.
        public static let keyRequired = Code("keyRequired")
        /// The open's cipher is not the store's: another scheme, or a key whose id is not the one the
        /// store's identity file records. Refused before anything is decrypted.
        public static let wrongKey = Code("wrongKey")
        /// The open gave a cipher, but the store is not encrypted: it would be read and written in the
        /// clear. Open it without one.
        public static let notEncrypted = Code("notEncrypted")
        /// Bytes of an encrypted store whose checksums hold do not authenticate under the store's key:
        /// they were altered, moved from another place or store, or written under another key.
        public static let authenticationFailed = Code("authenticationFailed")
        /// An option or argument is out of its documented range.
        public static let invalidArgument = Code("invalidArgument")
        /// The store was opened read-only and a write was attempted.
        public static let readOnly = Code("readOnly")
        /// The store directory does not exist, or is empty (holds no store yet), and `createIfMissing` is
        /// off. Nothing was written there.
        public static let storeMissing = Code("storeMissing")
        /// The directory is not a store: it holds other files and none of a store's (`STORE`, `SEGMENTS`,
        /// segment files), or files that carry a store's names (`SEGMENTS`, `NNNNNNNNNN.seg`) but not its
        /// content (neither starts with LogStore's magic), or it is empty and the open cannot make it a
        /// store (read-only, `verify`). Nothing was written there.
        public static let notAStore = Code("notAStore")
        /// The store's identity file (`STORE`) is damaged: wrong magic, wrong length or bad checksum.
        public static let corruptStoreIdentity = Code("corruptStoreIdentity")
        /// The segment manifest (`SEGMENTS`) is damaged, or missing from a store that has an identity file
        /// and segments; or the segments contradict what it recorded at the last clean close.
        public static let corruptManifest = Code("corruptManifest")

        /// A check that a layer above the engine installed refused the batch (the object layer's unique
        /// indexes do, naming the objects): ``LogStoreError/underlying`` holds that layer's error, and nothing
        /// of the batch was written.
        public static let rejected = Code("rejected")

        /// The code's name.
        public var description: String { name }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What happened, in words.
    public var message: String
    /// The file the problem is in, when there is one.
    public var file: String?
    /// The byte offset in ``file`` where the problem starts, when known.
    public var offset: UInt64?
    /// The error that caused this one, for example a ``SystemError``.
    public var underlying: (any Error & Sendable)?
    /// The objects the error is about, when it concerns objects: for `stillReferenced` the object and then
    /// a referrer (when an object refers to it), for `danglingReference` the missing object and then the
    /// object referring to it (when it is not a root).
    public var objects: [ObjectID] = []

    /// Makes an error.
    public init(
        _ code: Code,
        _ message: String,
        file: String? = nil,
        offset: UInt64? = nil,
        underlying: (any Error & Sendable)? = nil,
        objects: [ObjectID] = []
    ) {
        self.code = code
        self.message = message
        self.file = file
        self.offset = offset
        self.underlying = underlying
        self.objects = objects
    }

    /// One line: code, message, and where.
    public var description: String {
        var text = "\(code): \(message)"
        if let file {
            text += " [\(file)"
            if let offset { text += " @ \(offset)" }
            text += "]"
        }
        if let underlying { text += " (cause: \(underlying))" }
        return text
    }
}
