import LogStoreObjects

// Use case 3: records of people, with subclasses, referenced homework and plain value arrays.

class Person: PersistentObject {
    class var typeName: String { "Person" }
    var firstName: String
    var lastName: String

    init(firstName: String, lastName: String) {
        self.firstName = firstName
        self.lastName = lastName
    }
}

final class Teacher: Person {
    override class var typeName: String { "Teacher" }
    var salary: Int

    init(firstName: String, lastName: String, salary: Int) {
        self.salary = salary
        super.init(firstName: firstName, lastName: lastName)
    }

    private enum CodingKeys: String, CodingKey { case salary }

    required init(from decoder: any Decoder) throws {
        salary = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .salary)
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(salary, forKey: .salary)
        try super.encode(to: encoder)
    }
}

final class Homework: PersistentObject {
    static let typeName = "Homework"
    var answers: [String]
    var grade: Int?

    init(answers: [String], grade: Int?) {
        self.answers = answers
        self.grade = grade
    }
}

final class Student: Person {
    override class var typeName: String { "Student" }
    var debt: Double
    var teacher: Teacher?
    var homework: [Homework]
    var subjectNames: [String]

    init(firstName: String, lastName: String, debt: Double, teacher: Teacher?, homework: [Homework], subjects: [String])
    {
        self.debt = debt
        self.teacher = teacher
        self.homework = homework
        self.subjectNames = subjects
        super.init(firstName: firstName, lastName: lastName)
    }

    private enum CodingKeys: String, CodingKey { case debt, teacher, homework, subjectNames }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        debt = try container.decode(Double.self, forKey: .debt)
        teacher = try container.decodeIfPresent(Teacher.self, forKey: .teacher)
        homework = try container.decode([Homework].self, forKey: .homework)
        subjectNames = try container.decode([String].self, forKey: .subjectNames)
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(debt, forKey: .debt)
        try container.encodeIfPresent(teacher, forKey: .teacher)
        try container.encode(homework, forKey: .homework)
        try container.encode(subjectNames, forKey: .subjectNames)
        try super.encode(to: encoder)
    }
}

let recordTypes: [any PersistentObject.Type] = [Person.self, Teacher.self, Student.self, Homework.self]
