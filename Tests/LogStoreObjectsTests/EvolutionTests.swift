import LogStore
import LogStoreObjects
import TestSupport
import Testing

/// The first version of a person record: `name`, `lastName`, and `nickname` (removed later).
final class PersonV1: PersistentObject {
    static let typeName = "Person"
    var name: String
    var lastName: String
    var nickname: String

    init(name: String, lastName: String, nickname: String) {
        self.name = name
        self.lastName = lastName
        self.nickname = nickname
    }
}

/// The next version: the type is renamed `Human` (stored `Person`s are found under the old name),
/// `name` is renamed `firstName`, `nickname` is removed, `age` and `email` are added.
final class Human: PersistentObject {
    static let typeName = "Human"
    static let typeAliases = ["Person"]
    static let fieldAliases = ["firstName": ["name"]]
    var firstName: String
    var lastName: String
    /// Added with a default: stored people without it decode to 0.
    var age: Int
    /// Added as an optional: nil when absent.
    var email: String?
    /// Added reference fields default to empty.
    @ObjectList var friends: [Human]

    init(firstName: String, lastName: String, age: Int) {
        self.firstName = firstName
        self.lastName = lastName
        self.age = age
    }

    private enum CodingKeys: String, CodingKey { case firstName, lastName, age, email, friends }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        firstName = try container.decode(String.self, forKey: .firstName)
        lastName = try container.decode(String.self, forKey: .lastName)
        age = try container.decode(Int.self, forKey: .age, default: 0)
        email = try container.decodeIfPresent(String.self, forKey: .email)
        _friends = try container.decode(ObjectList<Human>.self, forKey: .friends)
    }
}

/// A version that needs a field the stored records lack, with no default.
final class StrictHuman: PersistentObject {
    static let typeName = "StrictHuman"
    static let typeAliases = ["Person", "Human"]
    var firstName: String
    var birthday: Double
}

/// An old class, later renamed `Mammal` (a class with a subclass).
final class AnimalV1: PersistentObject {
    static let typeName = "Animal"
    var name: String
    init(name: String) { self.name = name }
}

/// The renamed class of a hierarchy: its subclass inherits `typeAliases` and must not claim them.
class Mammal: PersistentObject {
    class var typeName: String { "Mammal" }
    class var typeAliases: [String] { ["Animal"] }
    var name: String
    init(name: String) { self.name = name }
}

final class Dog: Mammal {
    override class var typeName: String { "Dog" }
}

@Suite struct EvolutionTests {
    @Test func renamedSuperclassKeepsItsOldNameAndSubclassesRegister() throws {
        let directory = TemporaryStore("hierarchy-rename")
        let id = try withObjects(directory, types: [AnimalV1.self]) { objects in
            let context = objects.makeContext()
            let id = try context.insert(AnimalV1(name: "Rex"))
            try context.save()
            return id
        }
        for order in [[Mammal.self, Dog.self], [Dog.self, Mammal.self]] as [[any PersistentObject.Type]] {
            try withObjects(directory, types: order) { objects in
                let context = objects.makeContext()
                let rex = try #require(try context.object(id: id, as: Mammal.self))
                #expect(rex.name == "Rex" && !(rex is Dog))
                #expect(try context.count(of: Mammal.self) == 1 && context.count(of: Dog.self) == 0)
            }
        }
    }

    @Test func oldRecordsDecodeWithRenamedTypeAndFieldsAndDefaults() throws {
        let directory = TemporaryStore("evolution")
        let id = try withObjects(directory, types: [PersonV1.self]) { objects in
            let context = objects.makeContext()
            let id = try context.insert(PersonV1(name: "Grace", lastName: "Hopper", nickname: "Amazing"))
            try context.put(PersonV1(name: "Alan", lastName: "Turing", nickname: "Prof"), key: "alan")
            try context.save()
            return id
        }
        try withObjects(directory, types: [Human.self]) { objects in
            let context = objects.makeContext()
            let grace = try #require(try context.object(id: id, as: Human.self))
            #expect(grace.firstName == "Grace" && grace.lastName == "Hopper")
            #expect(grace.age == 0 && grace.email == nil && grace.friends.isEmpty)
            #expect(try context.count(of: Human.self) == 2, "stored Persons count as Humans")
            let alan = try #require(try context.object(forKey: "alan", as: Human.self))
            #expect(alan.firstName == "Alan")
            #expect(try context.keys(of: Human.self) == ["alan"])

            // Saving migrates: the record is rewritten as a Human with the new fields.
            grace.age = 85
            grace.friends = [alan]
            try context.save()
        }
        try withObjects(directory, types: [Human.self]) { objects in
            let context = objects.makeContext()
            let grace = try #require(try context.object(id: id, as: Human.self))
            #expect(grace.age == 85 && grace.friends.map(\.firstName) == ["Alan"])
            #expect(try context.count(of: Human.self) == 2)
        }
        // A field without a default that old records lack is a typed error naming type, field and id.
        try withObjects(directory, types: [StrictHuman.self]) { objects in
            let context = objects.makeContext()
            #expect {
                _ = try context.object(forKey: "alan", as: StrictHuman.self)
            } throws: { error in
                guard let error = error as? ObjectStoreError else { return false }
                return error.code == .missingField && error.typeName == "StrictHuman" && error.field == "birthday"
                    && error.objectID != nil
            }
        }
    }
}
