/// A protocol that queries by type name (`count(of: (any Shape).self)`), listed with a test of whether a
/// class conforms to it: optional, the fast way to tell a protocol's conforming classes.
///
/// Swift can tell whether a class conforms to a protocol only where the protocol is named in the source
/// (`Circle.self is any Shape.Type`), not from a generic `(any Shape).self`. Without an entry, a query by
/// a protocol asks the class's ``PersistentModel/declaredConformances`` and otherwise loads one stored
/// object of the class to test it (once per class and protocol, see
/// ``ObjectContext/ids(of:includingSubclasses:)``); with an entry, its test alone decides, and no object
/// is loaded. Queries by a class, and by `(any PersistentObject).self`, need no entry. For example:
///
/// ```swift
/// let objects = try ObjectStore.open(
///     at: path, types: drawingTypes,
///     protocols: [QueryableProtocol((any Shape).self) { $0 is any Shape.Type }])
/// let shapes = try objects.makeContext().objects(of: (any Shape).self)
/// ```
public struct QueryableProtocol: Sendable {
    /// The existential type, as queries name it.
    let existential: ObjectIdentifier
    /// The existential type's name, for error messages.
    let name: String
    /// Whether a class conforms.
    let isConformed: @Sendable (any PersistentObject.Type) -> Bool

    /// An entry for the protocol `existential`, with its test.
    /// - parameters:
    ///   - existential: the protocol's existential type, as queries name it: `(any Shape).self`, or a
    ///     composition such as `(any Shape & Named).self`.
    ///   - isConformed: whether a class conforms to it: `{ $0 is any Shape.Type }`.
    public init<P>(_ existential: P.Type, isConformed: @escaping @Sendable (any PersistentObject.Type) -> Bool) {
        self.existential = ObjectIdentifier(existential)
        self.name = String(describing: existential)
        self.isConformed = isConformed
    }
}
