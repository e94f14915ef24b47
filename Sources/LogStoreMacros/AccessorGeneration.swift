import SwiftSyntax

/// Generates a persisted property's backing storage and its `init`, `get` and `set` accessors.
struct AccessorGeneration {
    let property: PersistedProperty
    /// The Observation registrar's name, when the class is observable.
    let registrar: String?

    /// `private var _name: T = initial value` (the initial value boxed for references).
    var storage: DeclSyntax {
        let initial: ExprSyntax? =
            switch property.storage {
            case .plain, .list: property.initializer.map(property.storage.boxing)
            // Boxes are not optional: an optional reference without an initial value starts as nil.
            case .reference: property.storage.boxing(property.initializer ?? "nil")
            }
        let initializer = initial.map { " = \($0)" } ?? ""
        return "private var \(raw: property.storageName): \(property.storageType)\(raw: initializer)"
    }

    var accessors: [AccessorDeclSyntax] {
        let storage = property.storageName
        let value = property.storage.boxType == nil ? storage : "\(storage).wrappedValue"
        let initialValue = property.storage.boxing("initialValue")
        let get: AccessorDeclSyntax
        let set: AccessorDeclSyntax
        if let registrar {
            get = """
                get {
                    \(raw: registrar).access(self, keyPath: \\.\(raw: property.name))
                    return \(raw: value)
                }
                """
            set = """
                set {
                    \(raw: registrar).withMutation(of: self, keyPath: \\.\(raw: property.name)) {
                        \(raw: value) = newValue
                    }
                    if !hasReportedChange { hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false }
                }
                """
        } else {
            get = """
                get {
                    \(raw: value)
                }
                """
            set = """
                set {
                    \(raw: value) = newValue
                    if !hasReportedChange { hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false }
                }
                """
        }
        let initAccessor: AccessorDeclSyntax = """
            @storageRestrictions(initializes: \(raw: storage))
            init(initialValue) {
                \(raw: storage) = \(initialValue)
            }
            """
        return [initAccessor, get, set]
    }
}
