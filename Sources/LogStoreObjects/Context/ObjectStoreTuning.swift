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

    /// The default settings.
    public init() {}

    /// Settings with the given values.
    public init(usesFieldCoding: Bool = true) {
        self.usesFieldCoding = usesFieldCoding
    }
}
