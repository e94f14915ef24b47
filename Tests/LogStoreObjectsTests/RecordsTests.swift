import Dispatch
import LogStore
import LogStoreExamples
import LogStoreObjects
import Synchronization
import TestSupport
import Testing

/// Use case 3: records under keys, queries by type, deletes, transactions, threads.
@Suite struct RecordsTests {
    func makeStudent(_ name: String, teacher: Teacher?) -> Student {
        Student(
            firstName: name, lastName: "Doe", debt: 1_234.5, teacher: teacher,
            homework: [Homework(answers: ["4", "x=2"], grade: 5), Homework(answers: [], grade: nil)],
            subjects: ["math", "art"])
    }

    @Test func keysQueriesAndDeletes() throws {
        let directory = TemporaryStore("records")
        let generatedKey = try withObjects(directory) { objects in
            let context = objects.makeContext()
            let teacher = Teacher(firstName: "Ada", lastName: "King", salary: 5_000)
            let key = try context.put(makeStudent("Bob", teacher: teacher))
            try context.put(teacher, key: "teacher")
            try context.put(Person(firstName: "First", lastName: "Version"), key: "myID")
            try context.save()
            // Rewriting a key replaces its record; the old person becomes garbage.
            try context.put(Person(firstName: "Second", lastName: "Version"), key: "myID")
            try context.save()
            return key
        }
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            let replaced = try #require(try context.object(forKey: "myID", as: Person.self))
            #expect(replaced.firstName == "Second")
            let student = try #require(try context.object(forKey: generatedKey, as: Student.self))
            #expect(student.firstName == "Bob" && student.lastName == "Doe" && student.debt == 1_234.5)
            #expect(student.subjectNames == ["math", "art"])
            #expect(student.homework.map(\.answers) == [["4", "x=2"], []])
            #expect(student.homework.map(\.grade) == [5, nil])
            let teacher = try #require(try context.object(forKey: "teacher", as: Teacher.self))
            #expect(student.teacher === teacher)
            #expect(teacher.salary == 5_000)

            #expect(
                try context.count() == 5, "student, teacher, 2 homework, the second person (the first was collected)")
            #expect(try context.count(of: Person.self) == 3)
            #expect(try context.count(of: Person.self, includingSubclasses: false) == 1)
            #expect(try context.count(of: Homework.self) == 2)
            #expect(try context.keys(of: Person.self) == [generatedKey, "myID", "teacher"].sorted())
            #expect(try context.keys(of: Teacher.self) == ["teacher"])
            #expect(try context.objects(of: Student.self).map(\.firstName) == ["Bob"])

            // Deleting homework that a student references is refused, with a typed error naming the referrer.
            try context.deleteAll(of: Homework.self)
            #expect {
                try context.save()
            } throws: { error in
                guard let error = error as? ObjectStoreError else { return false }
                return error.code == .stillReferenced && error.typeName == "Homework"
                    && error.message.contains("Student")
            }
            context.discardChanges()
            #expect(try context.count(of: Homework.self) == 2)

            // Delete by key: the student goes; its homework goes with it (nothing references it any more).
            context.removeObject(forKey: generatedKey)
            try context.save()
            #expect(try context.object(forKey: generatedKey, as: Student.self) == nil)
            #expect(try context.count(of: Homework.self) == 0)
            #expect(try context.count(of: Teacher.self) == 1, "the teacher has a key of its own")

            // Delete by type: the teacher is referenced only by its key, so delete the key and the object.
            context.removeObject(forKey: "teacher")
            try context.deleteAll(of: Teacher.self)
            try context.save()
            #expect(try context.count(of: Teacher.self) == 0)

            // Delete everything.
            try context.put(makeStudent("Carl", teacher: nil), key: "carl")
            try context.save()
            try context.removeAll()
            try context.save()
            #expect(try context.count() == 0)
            #expect(try context.keys(of: Person.self).isEmpty)
            #expect(try objects.store.roots().isEmpty)
        }
    }

    @Test func rolledBackTransactionLeavesNothing() throws {
        let directory = TemporaryStore("rollback")
        struct Abort: Error {}
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            let kept = Person(firstName: "Kept", lastName: "One")
            try context.put(kept, key: "kept")
            try context.save()

            let first = Person(firstName: "A", lastName: "A")
            let second = Person(firstName: "B", lastName: "B")
            #expect(throws: Abort.self) {
                try context.transaction {
                    try context.put(first, key: "a")
                    try context.put(second)
                    kept.firstName = "Changed in the transaction"
                    throw Abort()
                }
            }
            #expect(!context.inTransaction)
            #expect(try context.count() == 1)
            #expect(try objects.store.roots().keys.sorted() == ["kept"])
            #expect(context.id(of: first) == nil && context.id(of: second) == nil)
            #expect(context.id(of: kept) == nil, "the changed instance was dropped from the context")
            let reloaded = try #require(try context.object(forKey: "kept", as: Person.self))
            #expect(reloaded !== kept)
            #expect(reloaded.firstName == "Kept")
            #expect(try context.save().written == 0)

            // Explicit begin/commit.
            try context.begin()
            try context.put(first, key: "a")
            #expect(throws: ObjectStoreError.self) { try context.save() }
            try context.commit()
            #expect(try context.count() == 2)
        }
    }

    @Test func eightThreadsReadAndWriteAtOnce() throws {
        let directory = TemporaryStore("threads")
        try withObjects(directory) { objects in
            let failures = Atomic(0)
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                let context = objects.makeContext()
                do {
                    for round in 0..<25 {
                        let student = Student(
                            firstName: "t\(thread)", lastName: "r\(round)", debt: Double(round), teacher: nil,
                            homework: [Homework(answers: ["\(thread)-\(round)"], grade: round)], subjects: [])
                        try context.put(student, key: "t\(thread)-r\(round)")
                        try context.save()
                        // Read back own and other threads' records.
                        let own = try context.object(forKey: "t\(thread)-r\(round)", as: Student.self)
                        if own !== student { failures.add(1, ordering: .relaxed) }
                        let other = "t\((thread + 1) % 8)-r\(round / 2)"
                        if let theirs = try context.object(forKey: other, as: Student.self),
                            theirs.homework.first?.answers != ["\((thread + 1) % 8)-\(round / 2)"]
                        {
                            failures.add(1, ordering: .relaxed)
                        }
                        _ = try context.count(of: Student.self)
                    }
                } catch {
                    print("thread \(thread): \(error)")
                    failures.add(1, ordering: .relaxed)
                }
            }
            #expect(failures.load(ordering: .relaxed) == 0)
            let context = objects.makeContext()
            #expect(try context.count(of: Student.self) == 200)
            #expect(try context.count(of: Homework.self) == 200)
            for thread in 0..<8 {
                for round in 0..<25 {
                    let student = try #require(try context.object(forKey: "t\(thread)-r\(round)", as: Student.self))
                    #expect(student.homework.first?.grade == round && student.firstName == "t\(thread)")
                }
            }
        }
    }
}

/// Rollback details found in review: unsaved work from before `begin()` survives, and a changed object's
/// referrers are dropped with it (so a rolled-back change cannot be saved through them).
@Suite struct RollbackTests {
    @Test func unsavedWorkBeforeBeginSurvivesRollback() throws {
        let directory = TemporaryStore("rollback-before")
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            let early = Person(firstName: "Early", lastName: "Bird")
            try context.put(early, key: "a")
            try context.begin()
            try context.put(Person(firstName: "In", lastName: "Transaction"), key: "b")
            try context.rollback()
            #expect(context.id(of: early) != nil)
            try context.save()
            #expect(try objects.store.roots().keys.sorted() == ["a"])
            #expect(try objects.makeContext().object(forKey: "a", as: Person.self)?.firstName == "Early")
        }
    }

    @Test func rolledBackChangeCannotBeSavedThroughItsReferrer() throws {
        let directory = TemporaryStore("rollback-referrer")
        try withObjects(directory) { objects in
            let context = objects.makeContext()
            try context.setRoot(Drawing().contents, named: "main")
            try context.save()
            let fresh = objects.makeContext()
            let contents = try #require(try fresh.root(named: "main", as: Contents.self))
            let page = contents.pages[0]
            try fresh.begin()
            page.title = "changed in the transaction"
            try fresh.rollback()
            #expect(fresh.id(of: page) == nil && fresh.id(of: contents) == nil, "the page and its referrer are dropped")
            #expect(try fresh.save().written == 0)
            let reloaded = try #require(try fresh.root(named: "main", as: Contents.self))
            #expect(reloaded !== contents && reloaded.pages[0].title == "one")
            // The detached instances cannot come back as new objects.
            #expect { try fresh.setRoot(page, named: "page") } throws: {
                ($0 as? ObjectStoreError)?.code == .deletedObject
            }
            // Objects only read during a transaction stay.
            let layer = reloaded.pages[1].layers[1]
            try fresh.begin()
            _ = layer.name
            try fresh.rollback()
            #expect(fresh.id(of: layer) != nil)
        }
    }
}
