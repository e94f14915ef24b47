/// Makes a class persistent: it conforms to ``PersistentModel`` and codes its stored properties itself.
///
/// Every stored property is a field stored under its name, except computed, `static` and `@Transient` ones.
/// A property's initial value is the field's value in records stored before the field existed; a property
/// without one must be in every record (`missingField` otherwise); an optional reads nil when the record
/// lacks it, whatever its initial value (so that a stored nil reads back as nil). References of protocol type (`any Shape`,
/// optional or in an array) and properties marked ``Reference()`` are stored through ``ObjectRef`` and
/// ``ObjectList`` boxes; plain fields of a persistent class type are references already. For example:
///
/// ```swift
/// @Persistent final class Circle: Shape {
///     var radius: Double = 1                          // old records without "radius" read 1
///     var center: Point                               // required
///     @Transient var cachedArea: Double? = nil        // not stored
///     @Renamed(from: "label") var name: String = ""  // read under "name", else "label"
///     var shapes: [any Shape] = []                    // references of protocol type
///     let created: Date                               // stored, never changes
///     var area: Double { .pi * radius * radius }      // computed: not stored
///     init(radius: Double, center: Point) { self.radius = radius; self.center = center; created = .now }
/// }
/// @Persistent("Task", aliases: ["TaskItem"]) class TaskItem { … }
/// @Persistent class RecurringTask: TaskItem { var every: Int = 7 … }  // codes its fields, then super's
/// ```
///
/// A subclass of a `@Persistent` class is `@Persistent` too. A class needs initializers of its own unless all
/// its stored properties have initial values (`init()` is then generated for a class with no persistent
/// superclass). Changing a persisted property of an object that a context has marks the object changed.
///
/// - parameters:
///   - typeName: The name the type is stored under (``PersistentObject/typeName``); the class name by default.
///     Never change it once objects are stored.
///   - aliases: Earlier type names whose stored objects decode as this type (``PersistentObject/typeAliases``).
@attached(
    member, conformances: PersistentModel,
    names: named(persistenceSlot), named(hasReportedChange), named(typeName), named(typeAliases), named(fieldAliases),
    named(declaredConformances), named(encodeFields), named(encode), named(init), arbitrary)
@attached(memberAttribute)
@attached(extension, conformances: PersistentModel)
public macro Persistent(_ typeName: String? = nil, aliases: [String] = []) =
    #externalMacro(module: "LogStoreMacros", type: "PersistentMacro")

/// Makes a class persistent, as ``Persistent(_:aliases:)`` does, and `Observable`: each persisted property
/// is tracked by Observation. For example:
///
/// ```swift
/// @Persistent(observable: true) final class Note {
///     var text: String = ""
/// }
/// ```
///
/// (A separate declaration because the conformance to `Observable` it declares must always be added: the
/// compiler crashes on a subclass of a class whose macro declares a conformance it did not add.)
///
/// - parameters:
///   - typeName: The name the type is stored under; the class name by default.
///   - aliases: Earlier type names whose stored objects decode as this type.
///   - observable: `true`; leave it out for a class that is not observable.
@attached(
    member, conformances: PersistentModel,
    names: named(persistenceSlot), named(hasReportedChange), named(typeName), named(typeAliases), named(fieldAliases),
    named(declaredConformances), named(encodeFields), named(encode), named(init), arbitrary)
@attached(memberAttribute)
@attached(extension, conformances: PersistentModel, Observable)
public macro Persistent(_ typeName: String? = nil, aliases: [String] = [], observable: Bool) =
    #externalMacro(module: "LogStoreMacros", type: "PersistentMacro")

/// Stores a persisted property of a ``Persistent(_:aliases:)`` class in private storage `_name`
/// and notes each change; `@Persistent` adds it to every persisted `var`, so there is no need to write it.
///
/// - parameter observable: Whether reads and changes are reported to the class's Observation registrar.
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_))
public macro PersistentField(observable: Bool = false) =
    #externalMacro(module: "LogStoreMacros", type: "PersistentFieldMacro")

/// Keeps a property of a ``Persistent(_:aliases:)`` class in memory only: it is neither written
/// nor read, and takes its initial value in a loaded object (so it needs one, unless it is an optional `var`).
@attached(peer)
public macro Transient() = #externalMacro(module: "LogStoreMacros", type: "MarkerMacro")

/// Reads a persisted property of a ``Persistent(_:aliases:)`` class under earlier names when a
/// stored object lacks its current one, in order (``PersistentObject/fieldAliases``). For example:
///
/// ```swift
/// @Renamed(from: "label", "title") var name: String = ""
/// ```
///
/// - parameter names: The property's earlier names.
@attached(peer)
public macro Renamed(from names: String...) = #externalMacro(module: "LogStoreMacros", type: "MarkerMacro")

/// Stores an optional or array property of a ``Persistent(_:aliases:)`` class through an
/// ``ObjectRef`` or ``ObjectList`` box, so that it may close a reference cycle (properties of protocol type
/// are stored that way without it). For example: `@Reference var owner: Person? = nil`.
@attached(peer)
public macro Reference() = #externalMacro(module: "LogStoreMacros", type: "MarkerMacro")
