/// What ``Store/salvage(from:to:)`` copied out of a damaged store, and exactly what it could not.
///
/// Every object of the damaged store is in one of three places: copied (``salvagedObjects``), named in
/// ``lostObjects``, or — only when damage destroyed a frame so thoroughly that not even its object's id
/// can be read, and no hint file describes it — inside a ``damagedRanges`` entry that is not
/// ``DamagedRange/isIdentified``.
public struct SalvageReport: Sendable {
    /// The engine type tag of the placeholder records salvage writes for lost objects that something still
    /// refers to: the 32-bit FNV-1a hash of `logstore.lost`, as the object layer tags its types.
    public static let placeholderTypeTag: UInt32 = 0x3FE9_0F7A

    /// How an object was lost.
    public enum Loss: Sendable, Equatable, CustomStringConvertible {
        /// No version of the object survives.
        case lost
        /// Its newest record is lost; an older version (written by the commit with this sequence number)
        /// survives and was copied.
        case olderVersionCopied(sequence: UInt64)
        /// It was deleted, but the deletion is lost: it was copied as it was before.
        case deletionLost
        /// Its record is whole, but its payload cannot be read (why): not copied.
        case unreadable(String)
        /// A record or deletion of it was lost from a segment whose header is damaged, so its sequence number
        /// cannot be read: the version copied (of the commit with this sequence number) may be older than
        /// the lost one, or the object may have been deleted.
        case mayBeStale(copiedSequence: UInt64)
        /// Copied as written, but the batch that wrote it (or deleted it) lost other frames before it
        /// (format-1 segments, which have no batch checksum): the batch is only partly in the copy.
        case batchPartlyLost

        /// A sentence saying what was lost.
        public var description: String {
            switch self {
            case .lost: "lost"
            case .olderVersionCopied(let sequence): "newest version lost; the version of commit \(sequence) copied"
            case .deletionLost: "its deletion is lost; copied as it was before"
            case .unreadable(let reason): "unreadable (\(reason))"
            case .mayBeStale(let sequence):
                "a record or deletion of it with an unreadable sequence number is lost; the version of commit "
                    + "\(sequence) copied may be stale"
            case .batchPartlyLost: "copied, but its batch lost other frames"
            }
        }
    }

    /// An object that salvage could not copy as it was last committed.
    public struct LostObject: Sendable, Equatable, CustomStringConvertible {
        /// The object's id.
        public var id: ObjectID
        /// Its type tag, when a hint file or an intact frame tells it.
        public var typeTag: UInt32?
        /// How it was lost.
        public var loss: Loss
        /// The file the lost record (or deletion) was in.
        public var file: String
        /// Its offset in that file, when known.
        public var offset: UInt64?

        /// A sentence saying what was lost.
        public var description: String {
            "object \(id)" + (typeTag.map { " (type \($0))" } ?? "") + ": \(loss), at \(file)"
                + (offset.map { " @ \($0)" } ?? "")
        }
    }

    /// A change of a root that is lost: the copy's root is what the commits before it left.
    public struct LostRootChange: Sendable, Equatable, CustomStringConvertible {
        /// The root's name.
        public var name: String
        /// The object the lost change pointed the root at; nil for a lost removal.
        public var lostTarget: ObjectID?
        /// What the root points at in the copy (nil: the copy has no such root).
        public var copiedTarget: ObjectID?
        /// The file the lost root frame was in.
        public var file: String
        /// Its offset in that file.
        public var offset: UInt64

        /// A sentence saying what was lost.
        public var description: String {
            let change = lostTarget.map { "setting it to object \($0)" } ?? "removing it"
            let kept = copiedTarget.map { "it points at object \($0)" } ?? "it is not set"
            return "root \"\(name)\": a change \(change) is lost (\(file) @ \(offset)); in the copy \(kept)"
        }
    }

    /// Bytes of a segment that no committed frame accounts for, or that a segment cut short lost past its
    /// end. An empty range at a segment's end (``start`` equal to ``end``) says the segment was cut there
    /// and how much followed is unknown.
    public struct DamagedRange: Sendable, Equatable, CustomStringConvertible {
        /// The segment file.
        public var file: String
        /// The first damaged byte.
        public var start: UInt64
        /// One past the last.
        public var end: UInt64
        /// Whether every frame the range held is known (from the segment's hint file, or read intact): its
        /// objects and roots are then all in ``SalvageReport/lostObjects`` and
        /// ``SalvageReport/lostRootChanges``, unless a newer copied version makes up for them.
        public var isIdentified: Bool
        /// What is wrong there, when `verify` says.
        public var reason: String?

        /// Where the range is, and what is known of it.
        public var description: String {
            "\(file) bytes \(start)..<\(end) (\(end - start) B)" + (isIdentified ? "" : ", contents unknown")
                + (reason.map { ": \($0)" } ?? "")
        }
    }

    /// A reference (of a copied object, or a root) to an object the copy does not have. The copy holds a
    /// placeholder record under that id (type tag ``SalvageReport/placeholderTypeTag``), so that it is a
    /// sound store; the placeholder goes when nothing refers to it any more.
    public struct DanglingReference: Sendable, Equatable, CustomStringConvertible {
        /// The object that refers to the lost one; nil for a root.
        public var referrer: ObjectID?
        /// The root that points at the lost one.
        public var root: String?
        /// The lost object referred to.
        public var target: ObjectID

        /// A sentence saying what was lost.
        public var description: String {
            (referrer.map { "object \($0)" } ?? "root \"\(root ?? "")\"") + " refers to object \(target), which is lost"
        }
    }

    /// The source's newest commit that the copy holds (the highest sequence number read).
    public var sequence: UInt64 = 0
    /// Objects copied.
    public var salvagedObjects = 0
    /// Roots copied.
    public var salvagedRoots = 0
    /// Objects not copied as last committed, by id.
    public var lostObjects: [LostObject] = []
    /// Root changes lost.
    public var lostRootChanges: [LostRootChange] = []
    /// Damaged bytes, in file order.
    public var damagedRanges: [DamagedRange] = []
    /// References to objects the copy does not have.
    public var danglingReferences: [DanglingReference] = []
    /// Ids given placeholder records.
    public var placeholders: [ObjectID] = []
    /// What `verify` found in the source.
    public var problems: [VerificationReport.Problem] = []
    /// Objects copied that nothing reaches in the copy (from a root or a pinned object), when anything was
    /// lost: unpinned in the damaged store, where what referred to them may be among the losses, they are
    /// pinned in the copy, so that no mark-sweep frees them unnoticed; delete them or link them again. (Some
    /// may have been garbage awaiting mark-sweep already.)
    public var orphans: [ObjectID] = []
    /// Why the report may not name every loss: the segment manifest is missing or damaged (a segment
    /// deleted from the folder would then go unnoticed), or the store's identity file is damaged.
    public var doubts: [String] = []
    /// Observations that are not losses (a torn tail a crash left, which was never committed).
    public var notes: [String] = []

    /// Whether nothing was lost, provably: the copy holds every committed object and root as the source did.
    public var isComplete: Bool {
        lostObjects.isEmpty && lostRootChanges.isEmpty && damagedRanges.isEmpty && danglingReferences.isEmpty
            && orphans.isEmpty && doubts.isEmpty
    }
}
