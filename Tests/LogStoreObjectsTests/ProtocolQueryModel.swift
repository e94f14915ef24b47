import LogStoreObjects

// Classes that conform to a protocol in each way a query by the protocol must find, and some that do not.

/// What the classes below conform to in different ways.
protocol Labelled: PersistentObject {
    var label: String { get }
}

/// A protocol no class conforms to.
protocol Unclaimed: PersistentObject {}

/// Conforms in its declaration.
final class DeclaredLabel: Labelled {
    static let typeName = "protocolQuery.DeclaredLabel"
    var label: String
    init(_ label: String) { self.label = label }
}

/// Conforms in an extension.
final class ExtendedLabel: PersistentObject {
    static let typeName = "protocolQuery.ExtendedLabel"
    var label: String
    init(_ label: String) { self.label = label }
}

extension ExtendedLabel: Labelled {}

/// Has the same field but does not conform.
final class Unlabelled: PersistentObject {
    static let typeName = "protocolQuery.Unlabelled"
    var label: String
    init(_ label: String) { self.label = label }
}

/// Conforms; the tests never store one.
final class NeverStored: Labelled {
    static let typeName = "protocolQuery.NeverStored"
    var label: String
    init(_ label: String) { self.label = label }
}

/// Conforms, and so does its subclass.
class LabelledBase: Labelled {
    class var typeName: String { "protocolQuery.LabelledBase" }
    var label: String
    init(_ label: String) { self.label = label }
}

/// Conforms through its superclass only.
final class LabelledSub: LabelledBase {
    override class var typeName: String { "protocolQuery.LabelledSub" }
}

/// A model written by hand that declares its conformance, as `@Persistent` does.
final class DeclaredModel: PersistentModel, Labelled {
    static let typeName = "protocolQuery.DeclaredModel"
    static var declaredConformances: [Any.Type] { [Labelled.self] }
    var persistenceSlot: ObjectSlot?
    var hasReportedChange = false
    private var storedLabel: String

    var label: String {
        get { storedLabel }
        set {
            storedLabel = newValue
            if !hasReportedChange { hasReportedChange = persistenceSlot?.noteChange(of: self) ?? false }
        }
    }

    init(_ label: String) { storedLabel = label }

    func encodeFields(to fields: FieldWriter) throws {
        try fields.write(storedLabel, for: "label")
    }

    init(fields: FieldReader) throws {
        storedLabel = try fields.read(String.self, for: "label")
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: FieldKey.self)
        try container.encode(storedLabel, forKey: FieldKey("label"))
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: FieldKey.self)
        storedLabel = try container.decode(String.self, forKey: FieldKey("label"))
    }
}

/// Every class above.
let protocolQueryTypes: [any PersistentObject.Type] = [
    DeclaredLabel.self, ExtendedLabel.self, Unlabelled.self, NeverStored.self, LabelledBase.self,
    LabelledSub.self, DeclaredModel.self,
]
