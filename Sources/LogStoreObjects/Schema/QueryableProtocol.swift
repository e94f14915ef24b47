/// A protocol that queries by type may name (`count(of: (any Shape).self)`): the protocol's existential
/// type and a test of whether a class conforms to it.
///
/// Swift can tell whether a class conforms to a protocol only where the protocol is named in the
/// source (`Circle.self is any Shape.Type`), not from a generic `(any Shape).self`; so an
/// ``ObjectStore`` lists the protocols it is queried by, each with that test. Queries by a class, and
/// by `(any PersistentObject).self`, need no entry. For example:
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

    /// A protocol queries may name.
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
