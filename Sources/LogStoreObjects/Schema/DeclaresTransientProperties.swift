/// A persistent class whose own stored properties are all kept out of its stored form on purpose.
///
/// When a subclass of a persistent class encodes none of the stored properties it declares, saving it
/// fails with ``ObjectStoreError/Code/incompleteEncoding``: it most likely forgot to override
/// `encode(to:)` and `init(from:)`. A subclass whose own properties are deliberately not stored (a cache,
/// a value derived on load) lists them here instead. For example:
///
/// ```swift
/// class Vehicle: PersistentObject {
///     class var typeName: String { "Vehicle" }
///     var wheels = 4
/// }
///
/// final class CachedVehicle: Vehicle, DeclaresTransientProperties {
///     override class var typeName: String { "CachedVehicle" }
///     static let transientProperties: Set<String> = ["summary"]
///     var summary = ""
/// }
/// ```
public protocol DeclaresTransientProperties: AnyObject {
    /// The names of the stored properties that are not stored (a property wrapper's as declared,
    /// without `_`).
    static var transientProperties: Set<String> { get }
}
