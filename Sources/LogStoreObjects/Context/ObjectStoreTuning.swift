/// Settings for the object layer that most users never need: the defaults suit every model. Change them
/// only to compare code paths or to rule out a mistake.
///
/// For example, to save and load every class through `Codable` even where it is ``FieldCodable``:
///
/// ```swift
/// var tuning = ObjectStoreTuning()
/// tuning.usesFieldCoding = false
/// let objects = try ObjectStore.open(at: path, types: types, tuning: tuning)
/// ```
public struct ObjectStoreTuning: Sendable, Equatable {
    /// Whether ``FieldCodable`` types encode and decode through `encodeFields(to:)` and `init(fields:)`
    /// (default on), or through `Codable`. Both write the same bytes; turning it off compares the two,
    /// or rules out a mistake in a hand-written `encodeFields(to:)`.
    public var usesFieldCoding: Bool = true

    /// Whether index upkeep that the next commit does not need (inserting ordered entries; everything for a
    /// class without a unique index) runs on a background queue (default on), or on the committing thread
    /// before the save returns. Queries see the same answers either way; off suits a single-core machine or
    /// compares the two.
    public var appliesIndexesInBackground: Bool = true

    /// How many index changes of one class may wait for the background queue before a commit applies them
    /// itself (default 131,072, about 8 MB), so that saves faster than the queue cannot make the backlog
    /// grow without bound.
    public var indexBacklogLimit: Int = 1 << 17

    /// The default settings.
    public init() {}

    /// Settings with the given values.
    public init(usesFieldCoding: Bool = true) {
        self.usesFieldCoding = usesFieldCoding
    }
}
